package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/promcheck"
)

// lintedProm reads a metrics file the tool wrote and fails the test on anything Prometheus's parser or
// linter says about it.
func lintedProm(t *testing.T, path string) promcheck.Families {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fam, problems, err := promcheck.Parse(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", path, p)
	}
	return fam
}

// Every outcome a job can have, each from the fault-injection runtime, written by run --prom: promlint finds
// nothing, and each job's series say what its run.json says.
func TestPromMetricsForEveryOutcome(t *testing.T) {
	cases := []struct {
		name     string
		settings []string
		args     []string
	}{
		// shared crashes at the 30th buffer, per-device completes; faultcl has no device list: unsupported.
		{"crash", []string{"FAULTCL_CRASH_AT=30", "FAULTCL_FAULTS_MULTI_ONLY=1"}, []string{"--strategies", "shared,per-device,device-list", "--max-allocs", "100"}},
		{"hang", []string{"FAULTCL_HANG_AT=20"}, []string{"--strategies", "shared", "--max-allocs", "100", "--hang-timeout", "2s"}},
		{"timeout", []string{"FAULTCL_SLOW_US=20000"}, []string{"--strategies", "per-device", "--max-allocs", "1000", "--timeout", "1s"}},
		// 64 MiB of host staging: each 1 MiB buffer of a two-device context stages 1 MiB, so create fails at 64.
		{"failed", []string{fmt.Sprintf("FAULTCL_HOST_BUDGET=%d", 64*mib)}, []string{"--strategies", "shared", "--max-allocs", "100"}},
		// Fills that report success and write nothing: the first buffer's read-back makes the job wrong.
		{"wrong", []string{"FAULTCL_FILL=none"}, []string{"--strategies", "shared", "--max-allocs", "100", "--touch", "fill"}},
	}
	seen := map[result.Outcome]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prom := filepath.Join(t.TempDir(), "clmemprobe.prom")
			r, res, dir := runOut(t, FaultEnv(t, c.settings...), append(c.args, "--prom", prom)...)
			if wrote := strings.TrimSuffix(wroteLine("clmemprobe: wrote ", dir, "run.json", "samples.jsonl", "run.png", "timeline.json"), "\n") + ", " + prom + "\n"; !slices.Contains(strings.SplitAfter(res.stderr, "\n"), wrote) {
				t.Errorf("the line naming the files written does not name %s: %q", prom, res.stderr)
			}
			fam := lintedProm(t, prom)
			for i := range r.Jobs {
				s := &r.Jobs[i]
				job := map[string]string{"strategy": string(s.Strategy), "size_bytes": strconv.FormatUint(s.SizeBytes, 10), "variant": result.VariantName(s.Variant)}
				if v, n := fam.Value("clmemprobe_allocations_ok", job); n != 1 || v != float64(s.AllocationsOK) {
					t.Errorf("%s: allocations_ok %v in %d series, run.json says %d", s.Strategy, v, n, s.AllocationsOK)
				}
				if v, n := fam.Value("clmemprobe_outcome", promcheck.Labels(job, "outcome", string(s.Outcome))); n != 1 || v != 1 {
					t.Errorf("%s: outcome %s is %v in %d series, want 1", s.Strategy, s.Outcome, v, n)
				}
				if ff := s.FirstFailure; ff != nil {
					l := promcheck.Labels(job, "stage", string(ff.Stage), "code_name", ff.Name)
					if v, n := fam.Value("clmemprobe_first_failure_code", l); n != 1 || v != float64(ff.Code) {
						t.Errorf("%s: first failure %v in %d series, run.json says %d at %s", s.Strategy, v, n, ff.Code, ff.Stage)
					}
				}
				if v, n := fam.Value("clmemprobe_loop_duration_seconds", job); n != 1 || v != s.Seconds {
					t.Errorf("%s: loop duration %v, run.json says %v", s.Strategy, v, s.Seconds)
				}
				seen[s.Outcome] = true
			}
			end, err := time.Parse(time.RFC3339, r.Ended)
			if v, n := fam.Value("clmemprobe_run_end_timestamp_seconds", nil); err != nil || n != 1 || v != float64(end.Unix()) {
				t.Errorf("end time %v in %d series, run.json says %q", v, n, r.Ended)
			}
		})
	}
	for _, o := range result.Outcomes {
		if !seen[o] {
			t.Errorf("no job ended %s: the cases must cover every outcome", o)
		}
	}
}

// node_exporter's textfile collector reads every *.prom file of its folder whenever it is scraped, while
// clmemprobe may be replacing one. A reader polling as fast as it can must only ever see a whole file,
// either the old one or the new one, and never a temporary file under a *.prom name.
func TestPromFileIsReplacedAtomically(t *testing.T) {
	env := Env()
	dir := t.TempDir()
	prom := filepath.Join(dir, "clmemprobe.prom")
	// Two results whose expositions differ: the fixture, and the fixture with other thresholds.
	a := filepath.Join(Root(), "probe", "result", "testdata", "run-v1.json")
	r, err := result.Load(a)
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.Jobs {
		r.Jobs[i].AllocationsOK++
		r.Jobs[i].BytesOK += r.Jobs[i].SizeBytes
	}
	b := filepath.Join(t.TempDir(), "other.json")
	var buf bytes.Buffer
	if err := report.Render(&buf, "json", findings.Judge(r)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, in := range []string{a, b} {
		res := runTool(t, env, "report", "--format", "prom", in)
		if res.code != 0 {
			t.Fatalf("report --format prom %s: exit %d: %s", in, res.code, res.stderr)
		}
		want[res.stdout] = true
	}
	if len(want) != 2 {
		t.Fatal("the two results must render differently")
	}

	var stop atomic.Bool
	var reads, torn, strays atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			names, _ := filepath.Glob(filepath.Join(dir, "*.prom"))
			for _, n := range names {
				if n != prom {
					strays.Add(1)
					continue
				}
				got, err := os.ReadFile(n)
				if err != nil {
					continue // not there yet
				}
				reads.Add(1)
				if !want[string(got)] {
					torn.Add(1)
				}
			}
		}
	}()
	const writes = 40
	for i := 0; i < writes; i++ {
		in := []string{a, b}[i%2]
		if res := runTool(t, env, "report", "--format", "prom", "--output", prom, in); res.code != 0 {
			t.Fatalf("write %d: exit %d: %s", i, res.code, res.stderr)
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d writes, %d reads", writes, reads.Load())
	if reads.Load() < writes {
		t.Errorf("only %d reads during %d writes: the test did not race the writer", reads.Load(), writes)
	}
	if torn.Load() > 0 || strays.Load() > 0 {
		t.Errorf("%d reads saw a file that was neither the old nor the new whole file; %d saw a temporary file named *.prom", torn.Load(), strays.Load())
	}
	if fi, err := os.Lstat(prom); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the metrics file: %v, mode %v; want 0644", err, fi.Mode())
	}
}
