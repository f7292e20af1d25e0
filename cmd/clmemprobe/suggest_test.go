package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report"
)

// swapped is name with its second and third letters swapped ("run" -> "rnu"), a slip of one key.
func swapped(name string) string {
	r := []rune(name)
	r[1], r[2] = r[2], r[1]
	return string(r)
}

// mistyped is the argument that is a slip of want.
func mistyped(args []string, want string) string {
	for _, a := range args {
		if a == swapped(want) || a == dropped(want) {
			return a
		}
	}
	return ""
}

// dropped is name without its last letter ("fill" -> "fil").
func dropped(name string) string { return name[:len(name)-1] }

// A mistyped command or value of any flag with a fixed set of values is answered with one line, exit 2,
// naming the closest value: short words (where Jaro-Winkler sees nothing) as well as long ones. Every such
// message puts the hint in one place: right after the value typed, before the choices.
func TestMistypedNamesGetTheClosest(t *testing.T) {
	file := filepath.Join(t.TempDir(), "run.json")
	for _, c := range []struct {
		want string
		args []string
	}{
		{"run", []string{swapped("run")}},
		{"run", []string{"help", swapped("run")}},
		{string(result.TouchFill), []string{"run", "--dry-run", "--touch", dropped(string(result.TouchFill))}},
		{"markdown", []string{"run", "--dry-run", "--format", swapped("markdown")}},
		{"markdown", []string{"report", "--format", dropped("markdown"), file}},
		{"markdown", []string{"compare", "--format", dropped("markdown"), file, file}},
		{"csv", []string{"merge", "--format", swapped("csv"), file}},
		{"json", []string{"check", "--format", dropped("json"), "--expect", file}},
		{"json", []string{"devices", "--format", swapped("json")}},
		{string(result.Shared), []string{"run", "--dry-run", "--strategies", swapped(string(result.Shared))}},
		{probe.AttributionPerBuffer, []string{"run", "--dry-run", "--attribution", dropped(probe.AttributionPerBuffer)}},
		{probe.Presets[0].Name, []string{"run", "--dry-run", "--variant-preset", dropped(probe.Presets[0].Name)}},
		{"bash", []string{"completion", swapped("bash")}},
		{"layer", []string{"trace", "--via", dropped("layer"), "--", "true"}},
	} {
		res := inProcess(t, Env(), c.args...)
		oneLineError(t, res, exitUsage, "(did you mean "+c.want+"?)")
		if typed := mistyped(c.args, c.want); !strings.Contains(res.stderr, strconv.Quote(typed)+" (did you mean "+c.want+"?)") {
			t.Errorf("%v: the hint does not follow the value typed, %q: %s", c.args, typed, res.stderr)
		}
	}
	if _, err := report.Lookup("markdown", report.KindRun); err != nil {
		t.Fatal(err) // the names above are formats this build has
	}
}

// The hint for a short word, where Jaro-Winkler sees nothing, comes from the edit distance: one slip (a
// swap of two letters counting one) for a word under six letters, two from six on, and no hint past that.
func TestSuggestionAllowsOneSlipPerSixLetters(t *testing.T) {
	names := []string{"run", "csv", "json", "trace"}
	for _, c := range []struct{ typed, want string }{
		{"rnu", "run"},      // a swap
		{"scv", "csv"},      // a swap
		{"jsn", "json"},     // a letter left out
		{"tracce", "trace"}, // a letter added
		{"nru", ""},         // two slips in three letters
		{"nosj", ""},        // too far
	} {
		want := ""
		if c.want != "" {
			want = " (did you mean " + c.want + "?)"
		}
		if got := suggestion(c.typed, names); got != want {
			t.Errorf("suggestion(%q) = %q, want %q", c.typed, got, want)
		}
	}
}
