package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/findings"
)

// A bundle unpacks into one folder, and each file is what the tool's own commands say it is.
func TestBundleHoldsTheTicket(t *testing.T) {
	env := FaultEnv(t, hostBudget(64))
	r, _, dir := runOut(t, env, "--strategies", "shared,per-device", "--max-allocs", "500")
	runJSON := filepath.Join(dir, "run.json")
	out := filepath.Join(t.TempDir(), "ticket.tar.gz")
	// --keep-identity: the result as given, byte for byte (without it, the host's name is taken out).
	res := runTool(t, Env(), "bundle", "--keep-identity", "--output", out, runJSON)
	files := untar(t, out)
	want := []string{"ISSUE.md", "README.md", "run.json", "report.md", "run.png", "run.svg", "timeline.json", "repro.c", "environment.txt"}
	if _, ok := files[kernelLogFile]; ok {
		want = append(want, kernelLogFile) // the kernel logged something while it ran
	}
	if len(files) != len(want) {
		t.Errorf("the bundle holds %d files, want %v", len(files), want)
	}
	if line := "clmemprobe: wrote " + out + " (" + strings.Join(want, ", ") + ")\n"; res.code != 0 || res.stderr != line {
		t.Fatalf("bundle: exit %d: %q, want %q", res.code, res.stderr, line)
	}
	original, _ := os.ReadFile(runJSON)
	if !bytes.Equal(files["run.json"], original) {
		t.Errorf("run.json is not the result as given")
	}
	// report.md is the report of the result, with the link to the chart beside it in the bundle.
	chartLink := "\n![Host and device memory against buffers allocated](run.png)\n"
	if md := runTool(t, Env(), "report", "--format", "markdown", runJSON); strings.Replace(string(files["report.md"]), chartLink, "", 1) != md.stdout {
		t.Errorf("report.md is not the report of the result")
	}
	if repro := runTool(t, Env(), "report", "--format", "repro", runJSON); string(files["repro.c"]) != repro.stdout {
		t.Errorf("repro.c is not the reproducer of the result")
	}
	if _, err := png.Decode(bytes.NewReader(files["run.png"])); err != nil {
		t.Errorf("run.png: %v", err)
	}
	if !bytes.Contains(files["run.svg"], []byte("<svg")) {
		t.Errorf("run.svg is not SVG")
	}
	if tl := runTool(t, Env(), "report", "--format", "timeline", runJSON); string(files["timeline.json"]) != tl.stdout {
		t.Errorf("timeline.json is not the timeline of the result")
	}
	if e := r.Environment; !bytes.Contains(files["environment.txt"], []byte(e.Kernel)) || !bytes.Contains(files["environment.txt"], []byte(e.OS)) {
		t.Errorf("environment.txt does not hold the run's environment (%s, %s)", e.OS, e.Kernel)
	}
	// The README says what happened and how to reproduce it: what bundleReadme writes of this result,
	// whose prose TestBundleReadmesMatchGoldenFiles holds.
	if h, _ := findings.Judge(r).Headline(); !bytes.Equal(files["README.md"], bundledReadme(t, files)) || h.About != result.FindingFailure {
		t.Errorf("README.md is not the README of the result (a first failure):\n%s", files["README.md"])
	}
	// The reproducer from the bundle repeats the failure.
	runRepro(t, compileC(t, string(files["repro.c"])), env, strategy(t, r, result.Shared))
}

// untar reads a bundle: every entry a regular file (or the one folder) under clmemprobe-ticket/, mode 0644.
func untar(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeDir && h.Name == bundleDir+"/" {
			continue
		}
		name, ok := strings.CutPrefix(h.Name, bundleDir+"/")
		if !ok || h.Typeflag != tar.TypeReg || strings.Contains(name, "/") || h.Mode != 0o644 {
			t.Errorf("entry %q (type %c, mode %o): want a plain file in %s/", h.Name, h.Typeflag, h.Mode, bundleDir)
			continue
		}
		files[name], _ = io.ReadAll(tr)
	}
	return files
}
