package ticket_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
	"github.com/clmemprobe/clmemprobe/report/ticket"
)

// gluedSpans lists the code spans of a Markdown document (outside fenced blocks) that touch a word: a
// closing backtick followed at once by a letter or digit ("`--repeat 3`to", issue 46), or an opening one
// that follows one. A span is a run of backticks closed by the next run of the same length on its line; a
// backslash-escaped backtick opens nothing.
func gluedSpans(md string) []string {
	var bad []string
	fence := 0
	for n, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		ticks := len(trimmed) - len(strings.TrimLeft(trimmed, "`"))
		switch {
		case fence == 0 && ticks >= 3:
			fence = ticks
			continue
		case fence > 0:
			if ticks >= fence && strings.TrimSpace(trimmed[ticks:]) == "" {
				fence = 0
			}
			continue
		}
		for _, s := range spansOf(line) {
			if wordAt(line, s[0]-1) || wordAt(line, s[1]) {
				bad = append(bad, fmt.Sprintf("line %d: %q", n+1, line[max(0, s[0]-12):min(len(line), s[1]+12)]))
			}
		}
	}
	return bad
}

// spansOf gives each code span of a line as the byte offsets of its opening run's start and its closing
// run's end.
func spansOf(line string) [][2]int {
	var spans [][2]int
	run := func(i int) int { // the length of the run of backticks at i
		n := 0
		for i+n < len(line) && line[i+n] == '`' {
			n++
		}
		return n
	}
	for i := 0; i < len(line); i++ {
		if line[i] == '\\' {
			i++
			continue
		}
		if line[i] != '`' {
			continue
		}
		n := run(i)
		j := i + n
		for j < len(line) && !(line[j] == '`' && run(j) == n) {
			j += max(1, run(j))
		}
		if j >= len(line) { // no closing run: the backticks are literal
			i += n - 1
			continue
		}
		spans = append(spans, [2]int{i, j + n})
		i = j + n - 1
	}
	return spans
}

func wordAt(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	r := rune(s[i])
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func TestGluedSpansFindsWhatItShould(t *testing.T) {
	cases := []struct {
		name, md string
		glued    int
	}{
		{"glued after", "add `--repeat 3`to the command", 1},
		{"glued before", "run the`x` now", 1},
		{"spaced", "add `--repeat 3` to it, or `y`.", 0},
		{"escaped backtick", "version 1\\`2 is not a span`s", 0},
		{"double fence", "``a`b``c", 1},
		{"in a fenced block", "```sh\necho `x`y\n```\n`z` ok", 0},
		{"unclosed", "a `b c", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := gluedSpans(c.md); len(got) != c.glued {
				t.Errorf("%q: %d glued %q, want %d", c.md, len(got), got, c.glued)
			}
		})
	}
}

// Every ticket a renderer writes keeps a space or punctuation between a code span and the next word: the
// fixture run with its system read and without (where each field says what to run, in code spans), every
// run and trace of docs/examples rendered again, and the ISSUE.md files committed there.
func TestEveryTicketsCodeSpansStandApart(t *testing.T) {
	tickets := map[string][]byte{}
	full := ticketRun(t)
	bare := fixture.Run(t)
	bare.Environment = nil
	for name, r := range map[string]*result.Run{"fixture with a system": full, "fixture without one": bare} {
		tickets[name] = ticket.IssueRun(findings.Judge(r), ticket.IssueOptions{HasRepro: true})
		tickets[name+", no repro"] = ticket.IssueRun(findings.Judge(r), ticket.IssueOptions{})
	}
	examples := filepath.Join("..", "..", "docs", "examples")
	runs, _ := filepath.Glob(filepath.Join(examples, "*", "run.json"))
	more, _ := filepath.Glob(filepath.Join(examples, "*", "*", "run.json"))
	for _, p := range append(runs, more...) {
		r, err := result.Load(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		tickets[p] = ticket.IssueRun(findings.Judge(r), ticket.IssueOptions{HasRepro: true})
	}
	traces, _ := filepath.Glob(filepath.Join(examples, "*", "*", "trace.json"))
	for _, p := range traces {
		tr, err := result.LoadTrace(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		tickets[p] = ticket.IssueTrace(findings.JudgeTrace(tr), ticket.IssueOptions{APILogFile: "calls.log"})
	}
	committed, _ := filepath.Glob(filepath.Join(examples, "*", "*", "ISSUE.md"))
	for _, p := range committed {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		tickets[p] = b
	}
	if len(runs)+len(more) == 0 || len(traces) == 0 || len(committed) == 0 {
		t.Fatalf("%d runs, %d traces, %d ISSUE.md under %s: the examples moved", len(runs)+len(more), len(traces), len(committed), examples)
	}
	for name, md := range tickets {
		if glued := gluedSpans(string(md)); len(glued) > 0 {
			t.Errorf("%s: %d code spans run into a word:\n%s", name, len(glued), strings.Join(glued, "\n"))
		}
	}
}
