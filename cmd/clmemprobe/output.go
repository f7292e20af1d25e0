package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/result"
)

// outputDir is the folder of run --out: run.json, samples.jsonl and run.png.
type outputDir struct {
	dir     string
	samples *os.File
}

// openOutputDir makes the folder and opens the samples stream.
func openOutputDir(dir string) (*outputDir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, usageErr("--out: cannot create %s: %v", dir, err)
	}
	f, err := os.Create(filepath.Join(dir, "samples.jsonl"))
	if err != nil {
		return nil, usageErr("--out: %s is not writable: %v", dir, err)
	}
	return &outputDir{dir: dir, samples: f}, nil
}

func (o *outputDir) close() { o.samples.Close() }

// writeSample appends one sample to samples.jsonl.
func (o *outputDir) writeSample(st result.Strategy, size uint64, s *result.Sample) error {
	line, err := json.Marshal(struct {
		Strategy result.Strategy `json:"strategy"`
		Size     uint64          `json:"size_bytes"`
		*result.Sample
	}{st, size, s})
	if err != nil {
		return err
	}
	_, err = o.samples.Write(append(line, '\n'))
	return err
}

// writeRun replaces run.json atomically.
func (o *outputDir) writeRun(r *result.Run) error {
	return o.replace("run.json", func(f *os.File) error { return report.Render(f, "json", r) })
}

// writeChart replaces run.png.
func (o *outputDir) writeChart(r *result.Run) error {
	return o.replace("run.png", func(f *os.File) error { return report.Render(f, "png", r) })
}

// replace writes a file under a temporary name and renames it into place.
func (o *outputDir) replace(name string, write func(*os.File) error) error {
	tmp, err := os.CreateTemp(o.dir, "."+name+"-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", name, err)
	}
	if err := write(tmp); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("cannot write %s: %v", name, err)
	}
	_ = tmp.Chmod(0o644)
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("cannot write %s: %v", name, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(o.dir, name)); err != nil {
		return fmt.Errorf("cannot write %s: %v", name, err)
	}
	return nil
}
