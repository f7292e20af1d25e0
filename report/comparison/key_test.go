package comparison

import (
	"testing"

	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
	"github.com/clmemprobe/clmemprobe/report/result"
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
