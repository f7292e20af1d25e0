package comparison

import (
	"cmp"
	"slices"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// Key says which job a result is. Jobs with equal keys are the same job, in two runs (compare), on many
// nodes (merge) or recorded and run again (check), and only they are compared.
type Key struct {
	// Devices names the devices by model and count, as result.DeviceModel does ("2x NVIDIA H200"): the
	// same job on other devices is another job, whatever their indices.
	Devices string
	Touch   result.Touch
	// Flags are the buffers' cl_mem_flags as result.FlagsName writes them: "read-write" for a job that
	// recorded none (every result before run --flags), so that such a job is the read-write job.
	Flags    string
	Strategy result.Strategy
	Size     uint64
	// Variant is the variant's name as result.VariantName gives it: result.DefaultVariant for the runtime's
	// own settings, whether a job wrote "" (as results do, for compatibility) or a configuration or the
	// command line "default". Every key goes through that one function, so the default is one variant.
	Variant string
}

// RunKey is the part of its jobs' keys that a run sets for all of them: the devices, the touch mode and
// the flags.
func RunKey(r *result.Run) Key {
	return Key{Devices: result.DeviceModel(r.Devices), Touch: intern(result.Touches, r.Config.Touch)}
}

// Keys returns the key of each of the run's jobs, in the run's order.
func Keys(r *result.Run) []Key {
	run := RunKey(r)
	out := make([]Key, len(r.Jobs))
	for i := range r.Jobs {
		s := &r.Jobs[i]
		out[i] = run.job(s.Strategy, s.SizeBytes, s.Variant, s.Flags)
	}
	return out
}

// ExpectedKeys returns the key of each of the expectations' jobs, in their order.
func ExpectedKeys(e *result.Expectations) []Key {
	run := Key{Devices: e.DeviceModel, Touch: intern(result.Touches, e.Touch)}
	out := make([]Key, len(e.Jobs))
	for i := range e.Jobs {
		j := &e.Jobs[i]
		out[i] = run.job(j.Strategy, j.SizeBytes, j.Variant, j.Flags)
	}
	return out
}

// job is the run's key completed with one job.
func (k Key) job(st result.Strategy, size uint64, variant, flags string) Key {
	k.Strategy, k.Size, k.Variant, k.Flags = intern(result.Strategies, st), size, result.VariantName(variant), result.FlagsName(flags)
	return k
}

// WithVariant is the key of the same job under variant v, as a job records it ("" for the default).
func (k Key) WithVariant(v string) Key {
	k.Variant = result.VariantName(v)
	return k
}

// WithFlags is the key of the same job with the flags f, as a job records them ("" for read-write).
func (k Key) WithFlags(f string) Key {
	k.Flags = result.FlagsName(f)
	return k
}

// JobVariant is the key's variant as a job records it in a result: "" for the default.
func (k Key) JobVariant() string { return result.JobVariant(k.Variant) }

// order sorts the keys of one run's jobs as tables list them: strategies in the enum's order, then by
// size, the default variant before the others.
func order(a, b Key) int {
	return cmp.Or(cmp.Compare(slices.Index(result.Strategies, a.Strategy), slices.Index(result.Strategies, b.Strategy)), cmp.Compare(a.Strategy, b.Strategy),
		cmp.Compare(a.Size, b.Size), cmp.Compare(flagsRank(a.Flags), flagsRank(b.Flags)), cmp.Compare(a.Flags, b.Flags),
		cmp.Compare(variantRank(a.Variant), variantRank(b.Variant)), cmp.Compare(a.Variant, b.Variant))
}

// flagsRank puts the default read-write before other flags.
func flagsRank(f string) int {
	if f == result.FlagsName("") {
		return 0
	}
	return 1
}

func variantRank(v string) int {
	if v == result.DefaultVariant {
		return 0
	}
	return 1
}

// intern is the enum's own copy of v: a key or a row then shares one string with every other instead of
// keeping the one the decoder made (a merge holds the rows of many files).
func intern[T ~string](enum []T, v T) T {
	if i := slices.Index(enum, v); i >= 0 {
		return enum[i]
	}
	return v
}
