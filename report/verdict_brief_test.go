package report

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
	"github.com/clmemprobe/clmemprobe/report/markdown"
	"github.com/clmemprobe/clmemprobe/report/table"
)

// The terminal's verdict over generated sweeps (strategies, sizes, flag sets, variants, every outcome): at
// most findings.BriefBullets bullets, no claim said twice under different labels, every failed job's index
// in the table or the bullets; the Markdown keeps every finding.
func TestBriefVerdictProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 33))
	cut := 0
	for n := 0; n < 1000; n++ {
		r := fixture.RandomSweep(rng)
		var out bytes.Buffer
		j := findings.Judge(r)
		if err := table.WriteTable(&out, j, Options{Width: 120}); err != nil {
			t.Fatal(err)
		}
		bullets := bulletsOf(out.String())
		if len(bullets) > findings.BriefBullets {
			t.Fatalf("run %d: %d bullets:\n%s", n, len(bullets), out.String())
		}
		if len(bullets) < len(j.Verdict()) {
			cut++
		}
		claims := map[string]string{}
		for _, b := range bullets {
			c := claimText(b)
			if prev, ok := claims[c]; ok {
				t.Fatalf("run %d: one claim twice:\n  %s\n  %s", n, prev, b)
			}
			claims[c] = b
		}
		for i := range r.Jobs {
			s := &r.Jobs[i]
			if s.Outcome != result.OutcomeFailed || s.FirstFailure == nil {
				continue
			}
			if idx := fmt.Sprintf("#%d", s.FirstFailure.Index); !strings.Contains(out.String(), idx) {
				t.Fatalf("run %d: job %d failed at %s, which neither the table nor the bullets show:\n%s", n, i, idx, out.String())
			}
		}
		var md bytes.Buffer
		if err := markdown.WriteMarkdown(&md, j, Options{}); err != nil {
			t.Fatal(err)
		}
		for _, v := range j.Verdict() {
			if !strings.Contains(md.String(), MarkdownText(v)) {
				t.Fatalf("run %d: the Markdown lacks the finding %q", n, v)
			}
		}
	}
	if cut == 0 {
		t.Fatal("no generated run had more findings than the terminal shows: the generator does not reach the case")
	}
	t.Logf("%d of 1000 runs had findings left to -v and the Markdown", cut)
}

// bulletsOf is the verdict bullets of a rendered table, each joined back into one line.
func bulletsOf(table string) []string {
	var out []string
	for _, line := range strings.Split(table, "\n") {
		switch {
		case strings.HasPrefix(line, "- "):
			out = append(out, strings.TrimPrefix(line, "- "))
		case strings.HasPrefix(line, "  ") && len(out) > 0:
			out[len(out)-1] += " " + strings.TrimSpace(line)
		}
	}
	return out
}

// claimText is a bullet without the label of the groups it is said of ("With flags X: "), lowercased at
// its start: two bullets with one claim are one fact said twice.
func claimText(b string) string {
	if strings.HasPrefix(b, "With ") {
		if _, rest, ok := strings.Cut(b, ": "); ok {
			b = rest
		}
	}
	return strings.ToLower(b[:1]) + b[1:]
}
