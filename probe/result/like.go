package result

import (
	"cmp"
	"slices"
)

// Like is what run --like took from a trace: the program, what its allocations were (the sizes and flags
// the probe then ran), and where it failed, so the findings can hold the probe's strategies against it.
type Like struct {
	Program string `json:"program"`
	// Sizes and Flags are the program's buffer sizes and flag sets, most created first, as the run took them.
	Sizes []uint64 `json:"sizes_bytes"`
	Flags []string `json:"flags"`
	// Allocations is the program's allocation calls; Failed whether one failed, then at which (its index),
	// with which code, holding how many bytes live. ContextDevices is the devices of the failing context, or,
	// in a program that did not fail, of its largest context: what the run is given as many devices as.
	Allocations    uint64 `json:"allocations"`
	Failed         bool   `json:"failed"`
	FailureIndex   uint64 `json:"failure_index,omitempty"`
	FailureCode    string `json:"failure_code,omitempty"`
	ContextDevices int    `json:"context_devices,omitempty"`
	LiveBytes      uint64 `json:"live_bytes,omitempty"`
	// Ended is how a program without a failed call was ended, as its trace says it ("was killed by
	// SIGKILL"); empty where it exited by itself, a call failed, or the user interrupted it.
	Ended string `json:"ended,omitempty"`
}

// IsCreate says whether a call made a buffer (a sub-buffer takes no memory of its own, and is not one).
func IsCreate(call string) bool {
	return call == "clCreateBuffer" || call == "clCreateBufferWithProperties"
}

// LikeOf is the program's mix as a probe run can repeat it: its buffer sizes and flag sets, each the
// most-created first, at most max of each (the rest are rarer and a sweep of them would cost more than it
// tells), and its first failure with the live bytes of the failing context.
func LikeOf(t *Trace, max int) Like {
	l := Like{Program: t.Program, Allocations: t.Allocations}
	sizes, flags := map[uint64]uint64{}, map[MemFlags]uint64{}
	for _, st := range t.Sequence {
		if !IsCreate(st.Call) {
			continue
		}
		sizes[st.Size] += st.Count
		f := MemFlags(st.Flags)
		if f&kernelAccess == 0 {
			f |= MemReadWrite // as OpenCL reads flags without an access bit
		}
		flags[f] += st.Count
	}
	l.Sizes = mostFirst(sizes, max)
	for _, f := range mostFirst(flags, max) {
		l.Flags = append(l.Flags, f.String())
	}
	for _, c := range t.Contexts {
		if c.DeviceCount > l.ContextDevices {
			l.ContextDevices = c.DeviceCount
		}
	}
	if t.FirstFailure == nil && (t.Exit.Signal != "" || t.Exit.TimedOut) && !t.Exit.Interrupted {
		l.Ended = t.Exit.Description
	}
	if f := t.FirstFailure; f != nil {
		l.Failed, l.FailureIndex, l.FailureCode, l.ContextDevices = true, f.Index, f.CodeName, len(f.Devices)
		for _, live := range f.Live {
			if live.Context == f.Context {
				l.LiveBytes = live.Bytes
			}
		}
	}
	return l
}

// mostFirst are the keys of counts, the largest count first (ties by key), at most max of them.
func mostFirst[K cmp.Ordered](counts map[K]uint64, max int) []K {
	keys := make([]K, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b K) int { return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b)) })
	if len(keys) > max {
		keys = keys[:max]
	}
	return keys
}
