package timeline

import (
	"bytes"
	"flag"
	"path/filepath"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

var update = flag.Bool("update", false, "rewrite the golden files from the timelines written")

// The timelines of two examples the project keeps (docs/examples): a run on the fault-injection runtime
// whose strategies failed, with device figures and an unsupported job, and a trace on an H100 whose device
// memory is split into the program's own and others'. The files are the timelines written, byte for byte.
func TestGoldenFiles(t *testing.T) {
	examples := filepath.Join("..", "..", "docs", "examples")
	for _, c := range []struct{ name, path string }{
		{"run", filepath.Join(examples, "faultcl-case-a", "run.json")},
		{"trace", filepath.Join(examples, "h100-claims", "trace-held", "trace.json")},
	} {
		t.Run(c.name, func(t *testing.T) {
			var d *Document
			if tr, err := result.LoadTrace(c.path); err != nil {
				t.Fatal(err)
			} else if tr != nil {
				d = Trace(tr)
			} else {
				r, err := result.Load(c.path)
				if err != nil {
					t.Fatal(err)
				}
				d = Run(r)
			}
			write(t, d) // well formed
			var b bytes.Buffer
			if err := d.Write(&b); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, b.Bytes())
		})
	}
}

func golden(t *testing.T, name string, got []byte) {
	fixture.Golden(t, name, got, *update, "./report/timeline")
}
