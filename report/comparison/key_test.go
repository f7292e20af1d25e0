package comparison

import (
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

// The default variant has one key, whether a job wrote it "" or a configuration "default", and a run and
// the expectations recorded from it key every job alike.
func TestKeysOfTheDefaultVariant(t *testing.T) {
	r := fixture.Run(t)
	named := cloneWith(r, func(s *result.JobResult) { s.Variant = result.DefaultVariant })
	plain, keyed := Keys(r), Keys(named)
	expected := ExpectedKeys(result.ExpectationsFrom(r))
	for i := range plain {
		if plain[i] != keyed[i] || plain[i] != expected[i] {
			t.Errorf("job %d: keys %+v, %+v and %+v, want one", i, plain[i], keyed[i], expected[i])
		}
		if plain[i].Variant != result.DefaultVariant || plain[i].JobVariant() != "" {
			t.Errorf("job %d: variant %q (job %q), want %q (\"\")", i, plain[i].Variant, plain[i].JobVariant(), result.DefaultVariant)
		}
	}
	if k := Keys(cloneWith(r, func(s *result.JobResult) { s.Variant = "pool-off" }))[0]; k == plain[0] || k.Variant != "pool-off" {
		t.Errorf("another variant keyed as the default: %+v", k)
	}
}

// A job's counterpart under the default variant or with read-write flags has the key the run gives that
// counterpart, whichever way the variant and flags were written.
func TestKeyOfTheCounterpart(t *testing.T) {
	r := fixture.Run(t)
	other := cloneWith(r, func(s *result.JobResult) { s.Variant, s.Flags = "pool-off", "read-only" })
	plain, moved := Keys(r), Keys(other)
	for i := range plain {
		if moved[i] == plain[i] {
			t.Fatalf("job %d: another variant and flags keyed as the job itself", i)
		}
		if got := moved[i].WithVariant("").WithFlags(r.Jobs[i].Flags); got != plain[i] {
			t.Errorf("job %d: counterpart %+v, want %+v", i, got, plain[i])
		}
		if got := moved[i].WithVariant(result.DefaultVariant).WithFlags(result.FlagsName(r.Jobs[i].Flags)); got != plain[i] {
			t.Errorf("job %d: counterpart by the written names %+v, want %+v", i, got, plain[i])
		}
	}
}
