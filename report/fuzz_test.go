package report

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/comparison"
)

// hostileSeeds are files that broke the tool once, or would break a careless renderer: each must render
// or be refused, never panic, hang or eat memory.
var hostileSeeds = map[string]string{
	"failed without first_failure": `{"schema_version":1,"tool":{"name":"clmemprobe"},"strategies":[{"strategy":"shared","size_bytes":1048576,"outcome":"failed","allocations_ok":5,"samples":[]}]}`,
	"size 0":                       `{"schema_version":1,"tool":{"name":"clmemprobe"},"strategies":[{"strategy":"shared","size_bytes":0,"outcome":"completed","allocations_ok":5,"samples":[]}]}`,
	"indices near 2^53":            `{"schema_version":1,"tool":{"name":"clmemprobe"},"strategies":[{"strategy":"shared","size_bytes":1,"outcome":"completed","allocations_ok":9007199254740990,"samples":[{"index":9007199254740980,"t":1,"host_rss_bytes":1},{"index":9007199254740990,"t":2,"host_rss_bytes":2}],"samples_total":2}]}`,
	"indices near 2^64":            `{"schema_version":1,"tool":{"name":"clmemprobe"},"strategies":[{"strategy":"shared","size_bytes":1,"outcome":"completed","allocations_ok":18446744073709551615,"samples":[{"index":18446744073709551610,"t":1},{"index":18446744073709551615,"t":2}]}]}`,
	"NaN":                          `{"schema_version":1,"tool":{"name":"clmemprobe"},"strategies":[{"strategy":"shared","size_bytes":1,"outcome":"completed","host_bytes_per_buffer":"NaN","samples":[]}]}`,
	"negative count":               `{"schema_version":1,"tool":{"name":"clmemprobe"},"strategies":[{"strategy":"shared","size_bytes":1,"outcome":"completed","allocations_ok":-3,"samples":[]}]}`,
	"huge cost":                    `{"schema_version":1,"tool":{"name":"clmemprobe"},"strategies":[{"strategy":"shared","size_bytes":1,"outcome":"completed","host_bytes_per_buffer":1e308,"samples":[]}]}`,
	"sweep of tiny and huge sizes": `{"schema_version":1,"tool":{"name":"clmemprobe"},"devices":[{"index":0,"global_mem_bytes":1}],"strategies":[{"strategy":"shared","devices":[0],"size_bytes":1,"outcome":"failed","allocations_ok":0,"first_failure":{"index":0,"stage":"create","device":0},"samples":[]},{"strategy":"shared","devices":[0],"size_bytes":9007199254740992,"outcome":"completed","allocations_ok":9007199254740992,"samples":[]}]}`,
	"one sample far out":           `{"schema_version":1,"tool":{"name":"clmemprobe"},"strategies":[{"strategy":"shared","size_bytes":3,"outcome":"hung","allocations_ok":1,"samples":[{"index":1,"t":1e9,"host_rss_bytes":18446744073709551615,"devices":[{"device":-5,"used_bytes":18446744073709551615}]}],"samples_total":1}]}`,
	"markdown injection":           "{\"schema_version\":1,\"tool\":{\"name\":\"clmemprobe\"},\"platform\":{\"name\":\"```\\n<script>alert(1)</script>|\"},\"strategies\":[{\"strategy\":\"shared\",\"size_bytes\":1,\"outcome\":\"failed\",\"first_failure\":{\"stage\":\"create\",\"name\":\"CL_OUT_OF_HOST_MEMORY\",\"call\":\"`x`\"},\"notices\":[\"```\\n# pwned\\n```\"],\"worker_output\":\"````\\n<b>\",\"samples\":[]}]}",
	"deep nesting":                 `{"schema_version":1,"tool":{"name":"clmemprobe"},"x":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`,
}

// FuzzLoadAndRender drives file bytes through loading, the findings and every renderer of a run and of a
// comparison: none may panic or hang. A file is either refused by Decode or rendered in every format.
func FuzzLoadAndRender(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("..", "probe", "result", "testdata", "run-v1.json"))
	if err != nil {
		f.Fatalf("the schema 1 seed: %v", err)
	}
	f.Add(b)
	for _, s := range hostileSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := result.Decode(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for _, name := range Names(KindRun) {
				// A chart may refuse data it cannot draw; every other format renders every loaded result.
				if err := Render(io.Discard, name, judged(r)); err != nil && !strings.Contains(err.Error(), "chart") && !errors.Is(err, ErrNothingToReproduce) {
					t.Errorf("%s: %v", name, err)
				}
			}
			_ = Render(io.Discard, "table", comparison.Compare(r, r, 0.1))
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("rendering did not finish in 20 s")
		}
	})
}

// The hostile seeds are refused or rendered; the ones named here must be refused.
func TestHostileFilesAreRefusedOrRendered(t *testing.T) {
	refused := []string{"failed without first_failure", "size 0", "indices near 2^64", "NaN", "negative count", "huge cost"}
	for name, s := range hostileSeeds {
		_, err := result.Decode(strings.NewReader(s), name)
		want := false
		for _, n := range refused {
			want = want || n == name
		}
		if (err != nil) != want {
			t.Errorf("%s: error %v, want refused %v", name, err, want)
		}
	}
	var nr *result.NotAResultError
	if _, err := result.Decode(io.LimitReader(zeros{}, 1<<40), "/dev/zero"); !errors.As(err, &nr) || nr.Why != "not JSON: it does not start with {" {
		t.Errorf("zeros: %v", err)
	}
}

// zeros reads as /dev/zero does.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
