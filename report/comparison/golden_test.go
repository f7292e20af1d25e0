package comparison

import (
	"flag"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

var update = flag.Bool("update", false, "rewrite the golden files of the words from what the comparisons say")

// goldenLines holds lines of words to testdata/NAME.golden: the words are checked there, the claims by the
// tests, on their fields and numbers.
func goldenLines(t *testing.T, name string, lines []string) {
	t.Helper()
	fixture.Golden(t, name, []byte(strings.Join(lines, "\n")+"\n"), *update, "./report/comparison")
}
