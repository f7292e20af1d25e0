package main

import (
	"bytes"
	"io"
	"strings"

	"github.com/clmemprobe/clmemprobe/report/textwidth"
	"github.com/urfave/cli/v2"
)

// helpWidth is the width every help text is wrapped to: a terminal's classic width, whatever the one at
// hand, so that help reads the same in a pipe, a pager and a narrow window.
const helpWidth = 80

// optionColumn is where an option's description starts; a flag wider than the column has its own line.
const optionColumn = 30

// printHelp renders help as urfave/cli does, then wraps it to helpWidth: urfave/cli wraps nothing, and its
// tabwriter lines an option's text up behind the widest flag (run's --variant-preset), 54 columns in.
func printHelp(w io.Writer, templ string, data any) {
	var b bytes.Buffer
	cli.HelpPrinterCustom(&b, templ, data, nil)
	_, _ = io.WriteString(w, wrapHelp(b.String(), helpWidth))
}

// wrapHelp breaks the lines of a help text wider than width at spaces. An option's line becomes its flag
// and, from optionColumn, its text; a line with two columns (a strategy and what it does, an exit code and
// its meaning) goes on under its second column; any other line under its own indentation.
func wrapHelp(text string, width int) string {
	var out []string
	options := false
	for _, l := range paragraphs(strings.Split(text, "\n"), width) {
		if l != "" && l[0] != ' ' {
			options = strings.HasSuffix(l, "OPTIONS:")
		}
		trimmed := strings.TrimLeft(l, " ")
		lead := len(l) - len(trimmed)
		first, second, twoColumns := strings.Cut(trimmed, "  ")
		second = strings.TrimLeft(second, " ")
		switch {
		case options && twoColumns:
			flag := strings.Repeat(" ", lead) + first
			if textwidth.Width(flag)+2 > optionColumn {
				out = append(out, flag)
				flag = ""
			}
			out = append(out, textwidth.Hang(flag+strings.Repeat(" ", optionColumn-textwidth.Width(flag)), strings.Fields(second), width)...)
		case textwidth.Width(l) <= width:
			out = append(out, l)
		case twoColumns && textwidth.Width(l[:len(l)-len(second)]) < width/2:
			col := l[:len(l)-len(second)]
			out = append(out, textwidth.Hang(col, strings.Fields(second), width)...)
		default:
			out = append(out, textwidth.Hang(strings.Repeat(" ", lead), strings.Fields(trimmed), width)...)
		}
	}
	return strings.Join(out, "\n")
}

// paragraphs joins the lines of a paragraph (the same indentation, one column, no blank between) where one
// of them is wider than width, so that wrapping flows it again instead of leaving short lines between long
// ones; a line that continues the second column of the line above it joins that line. Options and
// paragraphs that fit are left as they are.
func paragraphs(lines []string, width int) []string {
	var out []string
	options := false
	for i := 0; i < len(lines); {
		l := lines[i]
		if l != "" && l[0] != ' ' {
			options = strings.HasSuffix(l, "OPTIONS:")
		}
		j, wide := i+1, textwidth.Width(l) > width
		for ; !options && l != "" && j < len(lines) && joins(lines[j-1], lines[j]); j++ {
			wide = wide || textwidth.Width(lines[j]) > width
		}
		if !wide {
			out = append(out, lines[i:j]...)
		} else {
			joined := l
			for _, next := range lines[i+1 : j] {
				joined += " " + strings.TrimLeft(next, " ")
			}
			out = append(out, joined)
		}
		i = j
	}
	return out
}

// joins says whether next goes on the paragraph or the two-column row that prev is part of.
func joins(prev, next string) bool {
	trimmed := strings.TrimLeft(next, " ")
	lead := len(next) - len(trimmed)
	if trimmed == "" || lead == 0 || strings.Contains(trimmed, "  ") {
		return false
	}
	prevTrimmed := strings.TrimLeft(prev, " ")
	first, second, two := strings.Cut(prevTrimmed, "  ")
	if two {
		return lead == len(prev)-len(prevTrimmed)+textwidth.Width(first)+2+len(second)-len(strings.TrimLeft(second, " "))
	}
	return lead == len(prev)-len(prevTrimmed)
}
