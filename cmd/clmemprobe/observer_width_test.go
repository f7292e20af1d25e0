package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// At every width the live line fits, counted in runes; the count of buffers is never dropped, and the
// estimate of the time left stays while the count and its shortest form fit: the time taken, the RSS and the
// bytes give way first.
func TestProgressLineFitsEveryWidth(t *testing.T) {
	p := probe.Progress{Job: probe.Job{Strategy: "migrate-first", Size: 1 << 20, Budget: 100000}, Allocations: 51234,
		RSSBytes: 3 << 30, Elapsed: 20 * time.Second}
	count := fmt.Sprintf("%s %d/%d buffers", p.Job.Strategy, p.Allocations, p.Job.Budget)
	left := timeLeft(p)
	for width := 10; width <= 120; width++ {
		got := fitLine(progressParts(p), width)
		if n := utf8.RuneCountInString(got); n > width {
			t.Fatalf("at %d columns the line is %d wide: %q", width, n, got)
		}
		if width >= 40 && !strings.HasPrefix(got, count) {
			t.Errorf("at %d columns the count is gone: %q", width, got)
		}
		if width >= utf8.RuneCountInString(count+" ~"+left+" left") && !strings.Contains(got, left+" left") {
			t.Errorf("at %d columns the line drops the time left (%s) though it fits beside the count: %q", width, left, got)
		}
	}
	// A name of non-ASCII runes takes a column per rune, not per byte.
	parts := plainParts("ünïcödé 1/2 buffers", "  rest")
	if got := fitLine(parts, 25); got != "ünïcödé 1/2 buffers  rest" {
		t.Errorf("a line of 25 runes does not fit 25 columns: %q", got)
	}
	// A wide character (a variant named in CJK) takes two columns: counted as one, the line was cut to 12
	// runes, 16 columns, and wrapped on a terminal of 12.
	if got := fitLine(plainParts("変種変種変種 1/2 buffers"), 12); twwidth.Width(got) > 12 || got != "変種変種変種" {
		t.Errorf("at 12 columns: %q, %d columns wide; want the six wide characters alone", got, twwidth.Width(got))
	}
}

// timeLeft is the estimate a progress line should show, from the progress itself: the time per buffer so
// far times the buffers still to make, to the second.
func timeLeft(p probe.Progress) string {
	perBuffer := float64(p.Elapsed) / float64(p.Allocations)
	return time.Duration(perBuffer * float64(p.Job.Budget-p.Allocations)).Round(time.Second).String()
}

// On an 80-column terminal (79 usable: the observer leaves the last column free) the line keeps the count,
// the share done and the time left, even for the longest strategy name, a budget of ten million buffers,
// terabytes made and an estimate of hours.
func TestProgressLineKeepsTimeLeftAtEightyColumns(t *testing.T) {
	for _, p := range []probe.Progress{
		{Job: probe.Job{Strategy: "migrate-first", Size: 1 << 20, Budget: 100000}, Allocations: 51234, RSSBytes: 3 << 30, Elapsed: 20 * time.Second},
		{Job: probe.Job{Strategy: "migrate-first", Size: 1 << 20, Budget: 100000}, Allocations: 51234, RSSBytes: 1500 << 30, Elapsed: 2 * time.Hour},
		{Job: probe.Job{Strategy: "device-list", Size: 1 << 30, Budget: 10000000}, Allocations: 1234567, RSSBytes: 900 << 30, Elapsed: 5000 * time.Second},
		{Job: probe.Job{Strategy: "per-device", Size: 4 << 10, Budget: 9999999}, Allocations: 1, RSSBytes: 1 << 40, Elapsed: 2 * time.Second},
	} {
		got := fitLine(progressParts(p), 79)
		pct := fmt.Sprintf("(%.1f%%)", 100*float64(p.Allocations)/float64(p.Job.Budget))
		if n := utf8.RuneCountInString(got); n > 79 {
			t.Errorf("the line is %d wide: %q", n, got)
		}
		for _, want := range []string{fmt.Sprintf("%d/%d buffers", p.Allocations, p.Job.Budget), pct, timeLeft(p) + " left"} {
			if !strings.Contains(got, want) {
				t.Errorf("at 80 columns the line lacks %q: %q", want, got)
			}
		}
	}
}
