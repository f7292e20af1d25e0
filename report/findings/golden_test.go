package findings

import (
	"flag"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

var update = flag.Bool("update", false, "rewrite the golden files of the sentences from what the findings say")

// goldenLines holds lines of sentences to testdata/NAME.golden: the words are checked there, and the
// claims they state by the tests, on their kinds and numbers.
func goldenLines(t *testing.T, name string, lines []string) {
	t.Helper()
	fixture.Golden(t, name, []byte(strings.Join(lines, "\n")+"\n"), *update, "./report/findings")
}
