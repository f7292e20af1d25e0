package result

import (
	"testing"
)

// The conclusion of an exchange follows its check: what a run without wait lists found is said either way,
// and wrong cells with wait lists are a failure of the runtime or the tool.
func TestExchangeConclusion(t *testing.T) {
	for _, c := range []struct {
		name string
		ex   Exchange
		want string
	}{
		{"not checked", Exchange{Sync: "none"}, "The result was not verified."},
		{"without events, clean", Exchange{Sync: "none", Verified: true, Correct: true, Cells: 4096, Devices: []int{0, 1, 2}, Steps: 200},
			"Verified: all 12288 cells match the host reference after 200 steps with --sync none (0 check(s))."},
		{"without events, corrupted", Exchange{Sync: "none", Verified: true, WrongCells: 2528, MaxError: 7},
			"Corruption observed: 2528 wrong cells (largest error 7) without event wait lists (--sync none): " +
				"a migration ran before the producer's kernel finished."},
		{"with events, corrupted", Exchange{Sync: "events", Verified: true, WrongCells: 3, MaxError: 1}, "FAILED: 3 wrong cells (largest error 1) with --sync events."},
	} {
		run := ExchangeRun{Exchange: c.ex}
		if got := run.Conclusion(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
