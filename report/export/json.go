// Package export writes documents for other programs to read: indented JSON and CSV (a run's kept samples,
// a merge's nodes).
package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"iter"

	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// WriteJSON writes any document as indented JSON: a run, a comparison, an exchange, a fleet view.
func WriteJSON(w io.Writer, doc any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// WriteFleetJSON writes merge's answer byte for byte as WriteJSON would, but a group, a job and a row at a
// time: at 100,000 nodes the document is hundreds of MB, which encoding it whole would hold in memory
// (twice, while indenting) on top of the rows it is made from.
func WriteFleetJSON(w io.Writer, f *comparison.Fleet, _ render.Options) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	head := *f
	head.Groups = emptied(f.Groups)
	err := writeNested(bw, "", &head, len(f.Groups), func(gi int, indent string) error {
		g := &f.Groups[gi]
		head := *g
		head.Jobs = emptied(g.Jobs)
		return writeNested(bw, indent, &head, len(g.Jobs), func(ji int, indent string) error {
			j := &g.Jobs[ji]
			head := *j
			head.Rows = j.Rows
			if j.Count() > 0 {
				head.Rows = []comparison.FleetRow{}
			}
			next, stop := iter.Pull(j.All())
			defer stop()
			return writeNested(bw, indent, &head, j.Count(), func(_ int, indent string) error {
				r, _ := next()
				return writeNested(bw, indent, &r, 0, nil)
			})
		})
	})
	if err == nil {
		err = bw.WriteByte('\n') // as json.Encoder ends a document
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// emptied is what a struct whose last field is s is encoded with before its elements are streamed: an
// empty list where s has elements, s itself (null or []) where it has none.
func emptied[T any](s []T) []T {
	if len(s) > 0 {
		return []T{}
	}
	return s
}

// writeNested writes head, a struct whose last field is a list, indented at indent, with the list's n
// elements written by elem where head has an empty one: the encoding ends in `[]`, newline, indent and
// `}`, and the elements go in between, each on its own level as json.MarshalIndent places them.
func writeNested(w *bufio.Writer, indent string, head any, n int, elem func(i int, indent string) error) error {
	b, err := json.MarshalIndent(head, indent, "  ")
	if err != nil {
		return err
	}
	if n == 0 {
		_, err = w.Write(b)
		return err
	}
	tail := "[]\n" + indent + "}"
	if !bytes.HasSuffix(b, []byte(tail)) {
		return fmt.Errorf("report: %T does not end in its list", head)
	}
	w.Write(b[:len(b)-len(tail)])
	w.WriteString("[\n")
	inner := indent + "    "
	for i := range n {
		if i > 0 {
			w.WriteString(",\n")
		}
		w.WriteString(inner)
		if err := elem(i, inner); err != nil {
			return err
		}
	}
	_, err = w.WriteString("\n" + indent + "  ]\n" + indent + "}")
	return err
}
