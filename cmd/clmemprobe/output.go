package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/clmemprobe/clmemprobe/cmd/clmemprobe/internal/safefile"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/mattn/go-isatty"
)

// The files of run --out.
const (
	runFile     = "run.json"
	samplesFile = "samples.jsonl"
	chartFile   = "run.png"
	// timelineFile is written by trace --out too: the result as a timeline for Perfetto and chrome://tracing.
	timelineFile = "timeline.json"
)

// outputDir is the folder of run --out, locked for the run. Every file in it is written new and renamed
// into place (safefile): run.json after every strategy, samples.jsonl as samples come, run.png and
// timeline.json at the end.
type outputDir struct {
	dir     string
	force   bool
	lock    *safefile.DirLock
	samples *safefile.Stream
}

// lockOutDir makes an --out folder, takes its lock (one command writes into a folder at a time), and refuses
// a folder where one of the command's files (names) is already there, unless force replaces it; what says
// whose files they are ("a result", "a trace"). A folder that is a file, cannot be made or takes no new file
// is exit 4, as checkOutput's are; one in use or holding a result is bad input (exit 2).
func lockOutDir(dir string, force bool, what string, names ...string) (*safefile.DirLock, error) {
	if problem, missing := notAFolder(dir); problem != "" && !missing {
		return nil, outputErr("--out %s: %s; give a folder to write into (it is made if missing)", dir, problem)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, outputErr("--out %s: cannot create the folder (%s); give a folder you can write", dir, errorWords(err))
	}
	lock, err := safefile.LockDir(dir)
	if errors.Is(err, safefile.ErrLocked) {
		return nil, usageErr("--out %s: another clmemprobe command is writing into it; wait for it to end or choose another folder", dir)
	}
	if err != nil {
		return nil, outputErr("--out %s: the folder %s takes no new file (%s); give a folder you can write", dir, dir, errorWords(err))
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
	lock, err := lockOutDir(dir, force, "a result", runFile, samplesFile, chartFile, timelineFile)
	if err != nil {
		return nil, err
	}
	o := &outputDir{dir: dir, force: force, lock: lock}
	if o.samples, err = safefile.CreateStream(filepath.Join(dir, samplesFile)); err != nil {
		lock.Unlock()
		return nil, outputErr("--out %s: the folder %s takes no new file (%s); give a folder you can write", dir, dir, errorWords(err))
	}
	return o, nil
}

// begin puts the new run in place of an old one: the samples stream takes samples.jsonl's name and an old
// chart and timeline go, so no file of the old result stands beside the new run.json.
func (o *outputDir) begin() error {
	if o.force {
		for _, name := range []string{chartFile, timelineFile} {
			if err := os.Remove(filepath.Join(o.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	return o.samples.Publish()
}

// written lists the result's files that are in the folder now.
func (o *outputDir) written() []string {
	var out []string
	for _, name := range []string{runFile, samplesFile, chartFile, timelineFile} {
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

// writeTimeline replaces timeline.json.
func (o *outputDir) writeTimeline(j findings.Judged) error {
	return o.write(timelineFile, func(w io.Writer) error { return report.Render(w, "timeline", j) })
}

func (o *outputDir) write(name string, render func(io.Writer) error) error {
	return named(name, safefile.WriteFile(filepath.Join(o.dir, name), render))
}

// samplesErr is the samples stream's first failed write, named.
func (o *outputDir) samplesErr() error { return named(samplesFile, o.samples.Err()) }

// named says which file an error is about, without the temporary file's path.
func named(name string, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %s", name, errorWords(err))
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
			return outputErr("cannot write %s: %s", output, errorWords(err))
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
		return outputErr("cannot write %s: %s", path, errorWords(err))
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
	for _, name := range []string{runFile, samplesFile, chartFile, traceFile, timelineFile} {
		f, err2 := filepath.Abs(filepath.Join(outDir, name))
		if err1 == nil && err2 == nil && abs == f || same(path, filepath.Join(outDir, name)) {
			return name
		}
	}
	return ""
}

// checkOutput is the one check of a file a command will write (-o/--output, --prom), made before any work;
// "" is no file. It refuses as bad input (exit 2) a name the tool must not replace: a folder, a device, a
// FIFO or a socket, or a link to one (the file is replaced by a rename, which would put a plain file where
// /dev/null was), or one of the command's own inputs. It refuses as unwritable (exit 4) a file whose folder
// is missing, is a file, or takes no new file (read-only, not the user's, /proc): it creates the temporary
// file the write would create, and removes it, since no mode bit says that for root or a read-only mount.
func checkOutput(flag, path string, inputs ...string) error {
	if path == "" {
		return nil
	}
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
	if what, missing := notAFolder(dir); missing {
		return outputErr("%s %s: %s; create it first, or give a file in a folder that exists", flag, path, what)
	} else if what != "" {
		return outputErr("%s %s: %s; give a file in a folder", flag, path, what)
	}
	if err := safefile.Probe(path); err != nil {
		return outputErr("%s %s: the folder %s takes no new file (%s); give a file in a folder you can write", flag, path, dir, errorWords(err))
	}
	return nil
}

// notAFolder says what stands where the folder dir should be, "" when it is a folder: the nearest part of
// the path that exists and is not a folder ("x is a file, not a folder"), else that dir does not exist
// (missing is then true: a folder the command may make).
func notAFolder(dir string) (what string, missing bool) {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		switch {
		case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return "", false // not for us to tell: creating the file will say what is wrong
		case err == nil && fi.IsDir() && d == dir:
			return "", false
		case err == nil && fi.IsDir():
			return fmt.Sprintf("the folder %s does not exist", dir), true
		case err == nil:
			return fmt.Sprintf("%s is %s, not a folder", d, cmp.Or(fileKind(fi), "a file")), false
		case d == filepath.Dir(d):
			return fmt.Sprintf("the folder %s does not exist", dir), true
		}
	}
}

// errorWords is an error of the file system without the path it names ("read-only file system"): the
// path is the temporary file's, which the user never named and which is gone.
func errorWords(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
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
