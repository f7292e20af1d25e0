package textwidth

import (
	"slices"
	"strings"
	"testing"
)

// Words are laid out in lines of at most the width in screen columns: a wide character takes two, and the
// lines after the first are indented as far as the lead is wide, in columns too.
func TestHang(t *testing.T) {
	for _, c := range []struct {
		name  string
		lead  string
		text  string
		width int
		want  []string
	}{
		{"fits", "- ", "one two", 20, []string{"- one two"}},
		{"breaks at a space", "- ", "one two three four", 10, []string{"- one two", "  three", "  four"}},
		{"a word wider than a line stands alone", "  ", "a verylongword b", 8, []string{"  a", "  verylongword", "  b"}},
		{"the first word follows the lead", "--flag  ", "toolongforit x", 10, []string{"--flag  toolongforit", "        x"}},
		// 変種 takes four columns, not two runes or six bytes: "- " and three of them with their spaces take 16.
		{"wide characters, one column short", "- ", "変種 変種 変種 変種", 15, []string{"- 変種 変種", "  変種 変種"}},
		{"wide characters", "- ", "変種 変種 変種 変種", 16, []string{"- 変種 変種 変種", "  変種"}},
		// A lead of wide characters indents by its columns: 【注】 is six.
		{"a wide lead", "【注】", "a b c", 9, []string{"【注】a b", "      c"}},
		{"no words", "- ", "", 10, []string{"- "}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Hang(c.lead, strings.Fields(c.text), c.width)
			if !slices.Equal(got, c.want) {
				t.Errorf("Hang(%q, %q, %d) = %q, want %q", c.lead, c.text, c.width, got, c.want)
			}
		})
	}
}

// Cut keeps the start of a string that fits, counting columns: a wide character that would straddle the
// edge goes whole.
func TestCut(t *testing.T) {
	for _, c := range []struct {
		s     string
		width int
		want  string
	}{
		{"progress 1/2", 8, "progress"},
		{"short", 10, "short"},
		{"変種変種", 5, "変種"},
		{"é-accent", 3, "é-a"},
	} {
		if got := Cut(c.s, c.width); got != c.want || Width(got) > c.width {
			t.Errorf("Cut(%q, %d) = %q (%d columns), want %q", c.s, c.width, got, Width(got), c.want)
		}
	}
}
