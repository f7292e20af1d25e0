package findings

import (
	"fmt"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// A program its cgroup's OOM killer ended made its allocations without a failed call: run --like says how
// it ended, not "without a failure" alone, and where no layout of the run ended that way, says so and how
// to use the buffers as the program did.
func TestLikeOfAKilledProgramSaysItWasKilled(t *testing.T) {
	const made, ended = 957, "was killed by SIGKILL"
	for _, c := range []struct {
		touch   result.Touch
		outcome result.Outcome
		tail    string
	}{
		{result.TouchNone, result.OutcomeCompleted, "; no layout here ended that way (run with --touch fill, in the limits the program had, to use the buffers as it did)"},
		{result.TouchFill, result.OutcomeCompleted, "; no layout here ended that way"},
		{result.TouchFill, result.OutcomeCrashed, ""},
	} {
		r := &result.Run{Config: result.Config{Touch: c.touch, Like: &result.Like{Program: "fill.py", Sizes: []uint64{mib}, Flags: []string{"read-write"},
			Allocations: made, Ended: ended}}, Jobs: []result.JobResult{job(result.Shared, c.outcome, 2000, 0)}}
		f, ok := likeFinding(r)
		want := fmt.Sprintf("The traced program fill.py made %d allocations without a failed call, and %s%s; run like it", made, ended, c.tail)
		if !ok || !strings.HasPrefix(f.Sentence, want) {
			t.Errorf("touch %s, %s: %q, want it to begin %q", c.touch, c.outcome, f.Sentence, want)
		}
	}
}
