package render

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// SortedKeys lists a map's keys in order.
func SortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// YesNo writes a flag for a table.
func YesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// OrDash writes "-" for an empty cell.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Made is how many buffers job s made, as a short count for titles and comments: "1031", or "967 to 1031"
// where a batch was in flight when its worker died (only the first was confirmed by the device).
func Made(s *result.JobResult) string { return MadeAs(s, " to ") }

// MadeAs is Made with the range's two ends joined by sep: "967-1031" in a table cell, "967-#1031" after a
// '#'. Every count of a killed batch is written through here, so no output says the top of the range alone.
func MadeAs(s *result.JobResult, sep string) string {
	least, most := s.MadeRange()
	return Span(least, most, sep)
}

// Span is a count known to lie between least and most: the one number where they are equal, else the two
// joined by sep ("983 to 985" over repeated runs, "967-1031" for a batch in flight).
func Span(least, most uint64, sep string) string {
	if least >= most {
		return fmt.Sprint(most)
	}
	return fmt.Sprintf("%d%s%d", least, sep, most)
}

// LowerFirst is s with its first letter in lower case, to follow a colon or begin a clause; a word in
// capitals ("OOM", "CL_OUT_OF_HOST_MEMORY") keeps them.
func LowerFirst(s string) string {
	if s == "" || s[0] < 'A' || s[0] > 'Z' || (len(s) > 1 && s[1] >= 'A' && s[1] <= 'Z') {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// EndedVerb is how a job that neither failed nor completed ended, as the verb of a clause: an outcome is
// an adjective or a participle ("stopped", "crashed"), and "ended stopped" is not English.
func EndedVerb(o result.Outcome) string {
	switch o {
	case result.OutcomeStopped:
		return "was stopped"
	case result.OutcomeCrashed, result.OutcomeHung:
		return string(o)
	}
	return "ended " + string(o)
}

// JobName is a strategy with its buffers' flags where they are not the default: "shared use-host-ptr".
func JobName(st result.Strategy, flags string) string {
	if flags == "" || flags == result.FlagsName("") {
		return string(st)
	}
	return string(st) + " " + flags
}

func SizeSummary(r *result.Run) string {
	var sizes []string
	for _, size := range r.Sizes() {
		sizes = append(sizes, units.Size(size))
	}
	if len(sizes) == 0 {
		return units.Size(r.Config.SizeBytes)
	}
	return strings.Join(sizes, ", ")
}

// HexID is a PCI vendor or device ID without its 0x, as lspci writes it.
func HexID(s string) string { return strings.TrimPrefix(s, "0x") }
