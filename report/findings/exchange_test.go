package findings

import (
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// The outcome of an exchange follows its check: what a run without wait lists found is said either way,
// and wrong cells with wait lists are a failure of the runtime or the tool. The words are the golden
// file's.
func TestExchangeOutcome(t *testing.T) {
	var words []string
	for _, c := range []struct {
		name string
		ex   result.Exchange
		want ExchangeOutcome
	}{
		{"interrupted", result.Exchange{Sync: "none", Interrupted: true, Verified: true, Correct: true, Steps: 200, StepsDone: 17}, ExchangeInterrupted},
		{"not checked", result.Exchange{Sync: "none"}, ExchangeUnverified},
		{"without events, clean", result.Exchange{Sync: "none", Verified: true, Correct: true, Cells: 4096, Devices: []int{0, 1, 2}, Steps: 200}, ExchangeVerified},
		{"without events, corrupted", result.Exchange{Sync: "none", Verified: true, WrongCells: 2528, MaxError: 7}, ExchangeCorrupted},
		{"with events, corrupted", result.Exchange{Sync: "events", Verified: true, WrongCells: 3, MaxError: 1}, ExchangeFailed},
	} {
		run := &result.ExchangeRun{Exchange: c.ex}
		j := JudgeExchange(run)
		if j.Outcome() != c.want || j.Exchange() != run {
			t.Errorf("%s: outcome %q, want %q, of the run judged", c.name, j.Outcome(), c.want)
		}
		words = append(words, c.name+": "+j.Conclusion())
	}
	goldenLines(t, "exchange-conclusions", words)
}
