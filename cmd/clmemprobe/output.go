package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/clmemprobe/clmemprobe/cmd/clmemprobe/internal/safefile"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/mattn/go-isatty"
)

// The files of run --out.
const (
	runFile     = "run.json"
	samplesFile = "samples.jsonl"
	chartFile   = "run.png"
)

// outputDir is the folder of run --out, locked for the run. Every file in it is written new and renamed
// into place (safefile): run.json after every strategy, samples.jsonl as samples come, run.png at the end.
type outputDir struct {
	dir     string
	force   bool
	lock    *safefile.DirLock
	samples *safefile.Stream
}

// lockOutDir makes an --out folder, takes its lock (one command writes into a folder at a time), and refuses
// a folder where one of the command's files (names) is already there, unless force replaces it; what says
// whose files they are ("a result", "a trace").
func lockOutDir(dir string, force bool, what string, names ...string) (*safefile.DirLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, usageErr("--out: cannot create %s: %v", dir, err)
	}
	lock, err := safefile.LockDir(dir)
	if errors.Is(err, safefile.ErrLocked) {
		return nil, usageErr("--out %s: another clmemprobe command is writing into it; wait for it to end or choose another folder", dir)
	}
	if err != nil {
		return nil, usageErr("--out %s is not writable: %v", dir, err)
	}
	for _, name := range names {
		fi, err := os.Lstat(filepath.Join(dir, name))
		switch {
		case err != nil:
		case fileKind(fi) != "":
			// Not even --force replaces it: a FIFO or a folder there is someone's, not an old result.
			lock.Unlock()
			return nil, usageErr("--out %s: %s there is %s, not %s's file; remove it or choose another folder", dir, name, fileKind(fi), what)
		case !force:
			lock.Unlock()
			return nil, usageErr("--out %s already holds %s (%s): give --force to replace it, or choose another folder", dir, what, name)
		}
	}
	return lock, nil
}

// openOutputDir makes the folder, takes its lock, and refuses a folder that holds a result unless force.
func openOutputDir(dir string, force bool) (*outputDir, error) {
	lock, err := lockOutDir(dir, force, "a result", runFile, samplesFile, chartFile)
	if err != nil {
		return nil, err
	}
	o := &outputDir{dir: dir, force: force, lock: lock}
	if o.samples, err = safefile.CreateStream(filepath.Join(dir, samplesFile)); err != nil {
		lock.Unlock()
		return nil, usageErr("--out %s is not writable: %v", dir, err)
	}
	return o, nil
}

// begin puts the new run in place of an old one: the samples stream takes samples.jsonl's name and an old
// chart goes, so no file of the old result stands beside the new run.json.
func (o *outputDir) begin() error {
	if o.force {
		if err := os.Remove(filepath.Join(o.dir, chartFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return o.samples.Publish()
}

// written lists the result's files that are in the folder now.
func (o *outputDir) written() []string {
	var out []string
	for _, name := range []string{runFile, samplesFile, chartFile} {
		if _, err := os.Lstat(filepath.Join(o.dir, name)); err == nil {
			out = append(out, filepath.Join(o.dir, name))
		}
	}
	return out
}

func (o *outputDir) close() error {
	err := o.samples.Close()
	return errors.Join(err, o.lock.Unlock())
}

// writeSample appends one sample to samples.jsonl, a JSON object per line.
func (o *outputDir) writeSample(st result.Strategy, size uint64, s *result.Sample) error {
	line, err := json.Marshal(struct {
		Strategy result.Strategy `json:"strategy"`
		Size     uint64          `json:"size_bytes"`
		*result.Sample
	}{st, size, s})
	if err != nil {
		return err
	}
	return o.samples.Write(append(line, '\n'))
}

// writeRun replaces run.json.
func (o *outputDir) writeRun(j findings.Judged) error {
	return o.write(runFile, func(w io.Writer) error { return report.Render(w, "json", j) })
}

// writeChart replaces run.png.
func (o *outputDir) writeChart(j findings.Judged) error {
	return o.write(chartFile, func(w io.Writer) error { return report.Render(w, "png", j) })
}

func (o *outputDir) write(name string, render func(io.Writer) error) error {
	return named(name, safefile.WriteFile(filepath.Join(o.dir, name), render))
}

// samplesErr is the samples stream's first failed write, named.
func (o *outputDir) samplesErr() error { return named(samplesFile, o.samples.Err()) }

// named says which file an error is about, without the temporary file's path.
func named(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	return nil
}

// checkedWriter remembers the first failed write, for writers (table renderers) that do not pass every
// error on.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = err
	}
	return n, err
}

// render writes doc to w in the named format, shaped for where w goes; a failed write of any part of it is
// exit code 4.
func render(w io.Writer, format string, doc any) error { return renderWide(w, format, doc, false) }

// renderWide is render with every column of a table, however wide, when wide; shape adjusts the options
// further (a run's full verdict under -v).
func renderWide(w io.Writer, format string, doc any, wide bool, shape ...func(*report.Options)) error {
	cw := &checkedWriter{w: w}
	opts := textOptions(w, wide)
	for _, f := range shape {
		f(&opts)
	}
	err := report.RenderWith(cw, format, doc, opts)
	if cw.err != nil {
		err = cw.err
	}
	if err != nil {
		return outputErr("cannot write the output: %v", err)
	}
	return nil
}

// emit writes doc in format f to the file output, or to stdout when output is empty; a chart is never
// written to a terminal.
func emit(stdout io.Writer, output string, f *report.Format, doc any, wide bool, shape ...func(*report.Options)) error {
	if output != "" {
		return renderFile(output, f.Name, doc, shape...)
	}
	if file, ok := stdout.(*os.File); ok && f.Binary && isatty.IsTerminal(file.Fd()) {
		return usageErr("a %s chart is binary: give --output FILE or redirect stdout", f.Name)
	}
	return renderWide(stdout, f.Name, doc, wide, shape...)
}

// emitWith writes doc in format f with the given options, to the file output or stdout.
func emitWith(stdout io.Writer, output string, f *report.Format, doc any, opts report.Options) error {
	if output != "" {
		if err := safefile.WriteFile(output, func(w io.Writer) error { return report.RenderWith(w, f.Name, doc, opts) }); err != nil {
			return outputErr("cannot write %s: %v", output, err)
		}
		return nil
	}
	cw := &checkedWriter{w: stdout}
	err := report.RenderWith(cw, f.Name, doc, opts)
	if cw.err != nil {
		err = cw.err
	}
	if err != nil {
		return outputErr("cannot write the output: %v", err)
	}
	return nil
}

// renderFile writes doc to path as a new file renamed into place.
func renderFile(path, format string, doc any, shape ...func(*report.Options)) error {
	var opts report.Options
	for _, f := range shape {
		f(&opts)
	}
	if err := safefile.WriteFile(path, func(w io.Writer) error { return report.RenderWith(w, format, doc, opts) }); err != nil {
		return outputErr("cannot write %s: %v", path, err)
	}
	return nil
}

// joinErrors makes one line of several errors.
func joinErrors(errs ...error) error {
	var parts []string
	for _, e := range errs {
		if e != nil {
			parts = append(parts, e.Error())
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return errors.New(strings.Join(parts, "; "))
}

// resultFileOf reports which of run --out's files path would be, or "".
func resultFileOf(path, outDir string) string {
	if outDir == "" {
		return ""
	}
	abs, err1 := filepath.Abs(path)
	for _, name := range []string{runFile, samplesFile, chartFile, traceFile} {
		f, err2 := filepath.Abs(filepath.Join(outDir, name))
		if err1 == nil && err2 == nil && abs == f || same(path, filepath.Join(outDir, name)) {
			return name
		}
	}
	return ""
}

// checkOutput refuses, before any work, a file to write that the tool must not replace: a folder, a
// device, a FIFO or a socket, or a link to one (the file is replaced by a rename, which would put a plain
// file where /dev/null was), one of the command's own inputs, or a file in a folder that does not exist.
func checkOutput(flag, path string, inputs ...string) error {
	if fi, err := os.Lstat(path); err == nil {
		kind := fileKind(fi)
		if fi.Mode()&fs.ModeSymlink != 0 {
			// Never followed to write; looked at only to refuse a link to what must not be replaced.
			if target, err := os.Stat(path); err == nil && fileKind(target) != "" {
				kind = "a link to " + fileKind(target)
			}
		}
		if kind != "" {
			return usageErr("%s %s is %s; give the name of a file to write", flag, path, kind)
		}
		for _, in := range inputs {
			if same(path, in) {
				return usageErr("%s %s is the input %s; give another name, the input stays as it is", flag, path, in)
			}
		}
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return usageErr("%s %s: the folder %s does not exist; create it first", flag, path, dir)
	}
	return nil
}

// fileKind names what fi is when it is not a plain file or a symlink, else "".
func fileKind(fi fs.FileInfo) string {
	switch m := fi.Mode(); {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeIrregular != 0:
		return "not a plain file"
	}
	return ""
}

// same reports whether a and b name one file (links followed: an input is read through them).
func same(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
