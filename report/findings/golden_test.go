package findings

import (
	"flag"
	"testing"

	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

var update = flag.Bool("update", false, "rewrite the golden files of the words from what the findings say")

// goldenLines holds lines of words to testdata/NAME.golden: the words are checked there, the claims by the tests.
func goldenLines(t *testing.T, name string, lines []string) {
	t.Helper()
	fixture.GoldenLines(t, name, lines, *update, "./report/findings")
}
