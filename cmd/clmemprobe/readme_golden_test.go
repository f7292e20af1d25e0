package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/findings"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden from what the code writes")

// goldenFile compares got with testdata/golden/NAME.golden; -update rewrites it.
func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/clmemprobe -run TestBundleReadmes -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s (-update rewrites it after a deliberate change)\n--- got ---\n%s", name, path, got)
	}
}

// readmeOfRun is the README bundle writes for a judged run: with repro.c where the run has something to
// repeat, else saying why not.
func readmeOfRun(j findings.Judged) []byte {
	return bundleReadme(j, report.Render(io.Discard, "repro", j))
}

// readmeOfTrace is the README bundle writes for a judged trace.
func readmeOfTrace(j findings.JudgedTrace) []byte {
	return traceReadme(j, report.Render(io.Discard, "repro", j))
}

// bundledReadme is the README that bundle must have written beside the run.json or trace.json it packed:
// the e2e tests compare the bundle's README with it byte for byte, and TestBundleReadmesMatchGoldenFiles
// holds its prose.
func bundledReadme(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	if b, ok := files["trace.json"]; ok {
		var tr result.Trace
		if err := json.Unmarshal(b, &tr); err != nil {
			t.Fatalf("the bundle's trace.json: %v", err)
		}
		return readmeOfTrace(findings.JudgeTrace(&tr))
	}
	return readmeOfRun(findings.Judge(bundledRun(t, files)))
}

// bundledRun is the run.json a bundle holds.
func bundledRun(t *testing.T, files map[string][]byte) *result.Run {
	t.Helper()
	r, err := result.Decode(bytes.NewReader(files["run.json"]), "run.json")
	if err != nil {
		t.Fatalf("the bundle's run.json: %v", err)
	}
	return r
}

// The bundle READMEs of fixed results (runs that failed, completed or were stopped by the guard; traces of
// a create failure, a fill failure and a leak without a failure) match their golden files.
func TestBundleReadmesMatchGoldenFiles(t *testing.T) {
	for _, c := range []struct{ golden, example string }{
		{"readme-run-failed", "faultcl-case-a/run.json"}, {"readme-run-completed", "pocl/run.json"},
		{"readme-run-stopped", "h200-guard/guard-1/run.json"}, {"readme-trace-fill", "h200-trace/trace-fill/trace.json"},
		{"readme-trace-leak", "h100-ledger/leak/trace.json"},
	} {
		path := filepath.Join(Root(), "docs", "examples", c.example)
		var readme []byte
		if filepath.Base(path) == "trace.json" {
			tr, err := result.LoadTrace(path)
			if err != nil {
				t.Fatal(err)
			}
			readme = readmeOfTrace(findings.JudgeTrace(tr))
		} else {
			r, err := result.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			readme = readmeOfRun(findings.Judge(r))
		}
		goldenFile(t, c.golden, readme)
	}
	create := &result.Trace{Program: "/opt/solver", Tool: result.Tool{Name: "clmemprobe", Version: "0.2.0"},
		Environment:  &result.Environment{Kernel: "6.1.0"},
		Devices:      []result.TraceDevice{{Index: 0, Name: "GPU A", GlobalMemBytes: 1 << 30}},
		Contexts:     []result.TraceContext{{Index: 0, Devices: []int{0}, DeviceCount: 1, BuffersCreated: 41, Failures: 1}},
		FirstFailure: &result.TraceFailure{Index: 41, Call: "clCreateBuffer", Code: -6, CodeName: "CL_OUT_OF_HOST_MEMORY", SizeBytes: 1 << 20, Flags: "read-write", Devices: []int{0}},
		Sequence: []result.TraceStep{{Call: "clCreateContext", Devices: 1, Count: 1}, {Call: "clCreateBuffer", Context: 0, Size: 1 << 20, Count: 41},
			{Call: "clCreateBuffer", Context: 0, Size: 1 << 20, Count: 1, Code: -6}}}
	goldenFile(t, "readme-trace-create", readmeOfTrace(findings.JudgeTrace(create)))
}
