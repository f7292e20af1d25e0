package render

import (
	"io"
	"strings"
	"unicode/utf8"
)

// glueRow is GlueUnits over a row, as a table's row filter.
func glueRow(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = GlueUnits(c)
	}
	return out
}

// glueWriter writes a table with its glue runes as spaces. It holds back the bytes of a glue rune that one
// write leaves unfinished, and writes them with the next.
type glueWriter struct {
	w    io.Writer
	held []byte
}

func (g *glueWriter) Write(p []byte) (int, error) {
	buf := append(g.held, p...)
	keep := 0
	for k := 1; k < utf8.RuneLen(Glue) && k <= len(buf); k++ {
		if !utf8.FullRune(buf[len(buf)-k:]) && buf[len(buf)-k] == string(Glue)[0] {
			keep = k
		}
	}
	g.held = append([]byte(nil), buf[len(buf)-keep:]...)
	out := strings.ReplaceAll(string(buf[:len(buf)-keep]), string(Glue), " ")
	if _, err := io.WriteString(g.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Glue stands, while a table is laid out, for the space between a number and its unit ("1.46 GiB"): the
// wrapper breaks lines at any Unicode space, a no-break space included, so the cells carry this one-column
// private-use rune instead, and glueWriter turns it back into a space on the way out.
const Glue = '\ue000'

// GlueUnits joins every number in a cell to the unit after it, so that wrapping never leaves "1.46" on one
// line and "GiB" on the next.
func GlueUnits(cell string) string {
	words := strings.Split(cell, " ")
	var b strings.Builder
	for i, word := range words {
		if i > 0 {
			prev := words[i-1]
			unit := strings.TrimRight(word, ",.;:)") // "256 MiB," in a sentence
			if prev != "" && unitWords[unit] && strings.ContainsAny(prev[len(prev)-1:], "0123456789") {
				b.WriteRune(Glue)
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(word)
	}
	return b.String()
}

// unitWords are the units a number in a cell may be followed by.
var unitWords = map[string]bool{"B": true, "KiB": true, "MiB": true, "GiB": true, "TiB": true, "PiB": true, "EiB": true,
	"KB": true, "MB": true, "GB": true, "TB": true, "s": true, "ms": true, "%": true}

// unbrokenName is the longest device name kept on one line (the run's header, the device table, where a
// column is left out first), and at most half the terminal's width; a longer one wraps where it must.
const unbrokenName = 48

// Unbroken is a device name that no wrapping breaks, where it is short enough and the style wraps at all
// (the glue is turned back into spaces only where it does).
func (st Style) Unbroken(name string) string {
	if st.Width <= 0 || st.Wide || st.Markdown || utf8.RuneCountInString(name) > min(unbrokenName, st.Width/2) {
		return name
	}
	return strings.ReplaceAll(name, " ", string(Glue))
}
