package render

import (
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Every string a report shows that came from elsewhere (a runtime's names and messages, a worker's output,
// the environment, an input file) goes through one of these before it is written. A hostile string can then
// neither break out of a Markdown table, code span or block (three backticks, a pipe, <script>), nor send
// escape sequences to a terminal.

// Plain replaces control characters (ANSI escapes, carriage returns, NULs) with their \x form and newlines
// with spaces: what a terminal line may show.
func Plain(s string) string {
	if strings.IndexFunc(s, isControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case isControl(r) && r > 0xff:
			fmt.Fprintf(&b, `\u%04x`, r)
		case isControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isControl: control characters, the replacement of invalid UTF-8, and the bidirectional controls, which
// reorder what is shown (a name that reads one way and is another, "Trojan Source").
func isControl(r rune) bool {
	return unicode.IsControl(r) || r == unicode.ReplacementChar || unicode.Is(unicode.Bidi_Control, r)
}

// MdText escapes s for Markdown running text and table cells: on one line, with every character that can
// start Markdown or HTML (emphasis, code, links, tags, entities, table pipes) backslash-escaped. An
// underscore inside a word (CL_OUT_OF_HOST_MEMORY) cannot start emphasis and is left as it is, so the
// report stays readable as plain text.
func MdText(s string) string {
	s = Plain(s)
	if !strings.ContainsAny(s, mdSpecial) {
		return s
	}
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		if strings.ContainsRune(mdSpecial, r) && !(r == '_' && i > 0 && i+1 < len(rs) && isWordRune(rs[i-1]) && isWordRune(rs[i+1])) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// mdSpecial are the characters MdText escapes.
const mdSpecial = "\\`*_[]<>&|~"

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// MdCode writes s as an inline code span: delimited by more backticks than s holds in a row, so nothing in
// s can close it, on one line.
func MdCode(s string) string {
	s = Plain(s)
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || s == "" {
		s = " " + s + " "
	}
	return fence + s + fence
}

// MdBlock writes s as a fenced code block with the given info string: the fence is longer than any run of
// backticks in s, so no line of s can close it. Control characters other than newlines and tabs are shown
// in their \x form.
func MdBlock(s, info string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString(Plain(strings.ReplaceAll(line, "\t", "    ")))
		b.WriteByte('\n')
	}
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	return fence + info + "\n" + b.String() + fence + "\n"
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c rune) int {
	best, n := 0, 0
	for _, r := range s {
		if r == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// Style is how a renderer writes strings that came from elsewhere, and its tables: for a terminal (shaped
// by its Options) or for Markdown.
type Style struct {
	Markdown bool
	Options
}

var Markdown = Style{Markdown: true}

// Terminal is the style of text output shaped by opts.
func Terminal(opts Options) Style { return Style{Options: opts} }

// Table makes a table in the style: Markdown, or box drawing (ASCII where asked) no wider than the
// terminal, long cells wrapped.
func (st Style) Table(w io.Writer, opts ...tablewriter.Option) *tablewriter.Table {
	base := []tablewriter.Option{tablewriter.WithHeaderAutoFormat(tw.Off)}
	switch {
	case st.Markdown:
		base = append(base, tablewriter.WithRenderer(renderer.NewMarkdown()))
	default:
		if st.ASCII {
			base = append(base, tablewriter.WithSymbols(tw.NewSymbols(tw.StyleASCII)))
		}
		if st.Width > 0 && !st.Wide {
			// Headers wrap whole words rather than end in an ellipsis that makes two columns read alike.
			base = append(base, tablewriter.WithMaxWidth(st.Width), tablewriter.WithRowAutoWrap(tw.WrapNormal),
				tablewriter.WithHeaderAutoWrap(tw.WrapNormal), tablewriter.WithRowFilter(tw.CellFilter{Global: glueRow}))
			w = &glueWriter{w: w}
		}
	}
	return tablewriter.NewTable(w, append(base, opts...)...)
}

// Text escapes a foreign string for running text or a table cell.
func (st Style) Text(s string) string {
	if st.Markdown {
		return MdText(s)
	}
	return Plain(s)
}

// Code writes a foreign string as code: a code span in Markdown, plain on a terminal.
func (st Style) Code(s string) string {
	if st.Markdown {
		return MdCode(s)
	}
	return Plain(s)
}

// MdLine is MdText for a value that may start a line of a document (a field of a ticket): also a leading
// mark that would open a block (a heading's #, a quote's >, a list's - + or 1., a rule's = or ---) is
// escaped, and leading spaces (an indented code block) are dropped.
func MdLine(s string) string {
	s = strings.TrimLeft(MdText(s), " \t")
	if s == "" {
		return s
	}
	spaceAfter := func(i int) bool { return i+1 >= len(s) || s[i+1] == ' ' || s[i+1] == '\t' }
	switch {
	case strings.ContainsRune("#>=", rune(s[0])):
		return `\` + s
	case (s[0] == '-' || s[0] == '+') && (spaceAfter(0) || strings.HasPrefix(s, "--")):
		return `\` + s
	}
	if i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }); i > 0 && (s[i] == '.' || s[i] == ')') && spaceAfter(i) {
		return s[:i] + `\` + s[i:]
	}
	return s
}
