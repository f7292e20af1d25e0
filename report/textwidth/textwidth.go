// Package textwidth measures, cuts and wraps the tool's text in screen columns. It is the one measure of
// every text the tool lays out (help, verdict lines, the live progress line, a table's fit): tablewriter's
// twwidth, on go-runewidth, by which tablewriter draws its tables too, so that they all agree on a wide
// character (two columns), a combining mark (none) and an escape code (none); its East Asian setting
// follows the locale, as the terminal's does.
package textwidth

import (
	"strings"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// Width is how many screen columns s takes.
func Width(s string) int { return twwidth.Width(s) }

// Cut is the longest start of s that takes at most width columns (all of s where it fits).
func Cut(s string, width int) string { return twwidth.Truncate(s, width) }

// Hang lays words out after lead, one space between two, in lines of at most width columns, each line
// after the first indented by as many spaces as lead is wide. A word wider than a line stands alone on its
// line, and the first word always follows lead.
func Hang(lead string, words []string, width int) []string {
	indent := Width(lead)
	var lines []string
	line, col := lead, indent
	for i, word := range words {
		n := Width(word)
		if i > 0 && col+1+n > width {
			lines = append(lines, line)
			line, col = strings.Repeat(" ", indent), indent
		} else if i > 0 {
			line += " "
			col++
		}
		line += word
		col += n
	}
	return append(lines, line)
}
