package main

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/clmemprobe/clmemprobe/probe"
)

// At every width the live line fits, counted in runes, and what it drops first is the estimate of the time
// left, never the count of buffers.
func TestProgressLineFitsEveryWidth(t *testing.T) {
	p := probe.Progress{Job: probe.Job{Strategy: "migrate-first", Size: 1 << 20, Budget: 100000}, Allocations: 51234,
		RSSBytes: 3 << 30, Elapsed: 20 * time.Second}
	full := fitLine(progressParts(p), 0)
	for width := 10; width <= 120; width++ {
		got := fitLine(progressParts(p), width)
		if n := utf8.RuneCountInString(got); n > width {
			t.Fatalf("at %d columns the line is %d wide: %q", width, n, got)
		}
		if width >= 40 && !strings.HasPrefix(got, "migrate-first 51234/100000 buffers") {
			t.Errorf("at %d columns the count is gone: %q", width, got)
		}
		if width < utf8.RuneCountInString(full) && strings.Contains(got, "left") {
			t.Errorf("at %d columns the line keeps the estimate but drops something else: %q", width, got)
		}
	}
	// A name of non-ASCII runes takes a column per rune, not per byte.
	parts := lineParts{"ünïcödé 1/2 buffers", "  rest"}
	if got := fitLine(parts, 25); got != "ünïcödé 1/2 buffers  rest" {
		t.Errorf("a line of 25 runes does not fit 25 columns: %q", got)
	}
}
