package supervise

import (
	"strconv"
	"strings"
	"testing"
)

// The output buffer keeps the head and the tail of what a child printed, and says how much it left out.
func TestOutputBufferKeepsHeadAndTail(t *testing.T) {
	for _, c := range []struct {
		name   string
		writes []string
		head   string // the kept text starts with it
		tail   string // and ends with it
		out    int    // bytes left out, as the note says; 0: no note
	}{
		{"little", []string{"one\n", "two\n"}, "one", "two", 0},
		{"one long write", []string{"H" + strings.Repeat("x", outputHead+outputTail) + "T"}, "Hxx", "xxT", 2},
		{"many small writes", manyWrites(outputHead+outputTail+100, "start", "end"), "start", "end", 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &outputBuffer{}
			for _, w := range c.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("wrote %d of %d (%v)", n, len(w), err)
				}
			}
			got := b.String()
			if !strings.HasPrefix(got, c.head) || !strings.HasSuffix(got, c.tail) {
				t.Errorf("kept %q...%q; want %q...%q", got[:min(20, len(got))], got[max(0, len(got)-20):], c.head, c.tail)
			}
			note := "bytes left out"
			if (c.out > 0) != strings.Contains(got, note) || (c.out > 0 && !strings.Contains(got, "[... "+strconv.Itoa(c.out)+" "+note)) {
				t.Errorf("note for %d bytes left out missing or wrong in %d bytes kept", c.out, len(got))
			}
			if len(got) > outputHead+outputTail+64 {
				t.Errorf("kept %d bytes, more than the head and the tail", len(got))
			}
		})
	}
}

// manyWrites is n bytes in writes of 7, the first starting with start and the last ending with end.
func manyWrites(n int, start, end string) []string {
	text := start + strings.Repeat("y", n-len(start)-len(end)) + end
	var out []string
	for len(text) > 0 {
		k := min(7, len(text))
		out = append(out, text[:k])
		text = text[k:]
	}
	return out
}
