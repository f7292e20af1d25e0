package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/judge"
	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"
)

// mergeOptions are the flags of `merge`.
type mergeOptions struct {
	outputOptions
	Tolerance percentValue
	All       bool // every node of a large job, not only its outliers
	args      []string
}

func mergeCommand(stdout, stderr io.Writer) *cli.Command {
	var o mergeOptions
	return &cli.Command{
		Name:      "merge",
		Usage:     "merge the results of many nodes into one fleet view; exit 1 when a node is an outlier",
		ArgsUsage: "DIR|RUN.json...",
		Description: `Reads run.json files (every file named run.json under each DIR, symlinks not followed) and shows one row
per node, strategy, size and variant, grouped by device model and driver version, with each job's median
threshold (buffers reached) and spread. Only comparable runs share a group: same platform, devices,
driver, touch mode and budget. A node is an outlier when its threshold, its host cost per buffer or its
device cost per buffer differs from its job's median by more than --tolerance (costs also by more than 1%
of the buffer size), or when its outcome is not the job's most common one. A file that cannot be used is
named on stderr, one line each, and the others are still merged. In a table or markdown, a job of more than ` + fmt.Sprint(report.FleetRowLimit) + `
nodes shows its outliers and a count of the healthy others (--all: every node); json and csv hold every row.

` + exitCodesOne("a node is an outlier", exitOK, exitRegression, exitUsage, exitOutput),
		Flags: []cli.Flag{
			formatFlag(&o.Format, "table", strings.Join(report.Names(report.KindFleet), ", "), ofKind(report.KindFleet)),
			o.outputFlag("write to this file instead of stdout (png needs it, or a redirected stdout)"),
			toleranceFlag(&o.Tolerance, "how far from its job's median a node may be before it is an outlier, as a percentage"),
			o.wideFlag(),
			&cli.BoolFlag{Name: "all", Destination: &o.All, Usage: "show every node of a large job in a table or markdown, not only its outliers"},
		},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			o.args = c.Args().Slice()
			return runMerge(c.Context, o, stdout, stderr)
		},
	}
}

// validate checks the arguments merge takes. It has no side effects.
func (o mergeOptions) validate() error {
	if len(o.args) == 0 {
		return usageErr("merge needs at least one folder or run.json (see clmemprobe merge --help)")
	}
	return nil
}

func runMerge(_ context.Context, o mergeOptions, stdout, stderr io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	// Checked before the inputs are looked through, and again against every file named or found there, not
	// only those that load: a broken input is still someone's file.
	if err := checkOutput("--output", o.Output, o.args...); err != nil {
		return err
	}
	limit := newHeapLimit()
	defer limit.restore()
	files, read := findFleet(o.args, o.Output != "", limit)
	if err := checkOutput("--output", o.Output, append(append([]string{}, o.args...), read...)...); err != nil {
		return err
	}
	merger := loadFleet(files, limit)
	bad := files.errors()
	results := merger.Results()
	if results == 0 && len(bad) == 1 {
		return usageErr("%s", oneLine(bad[0].Error()))
	}
	for _, b := range bad {
		fmt.Fprintln(stderr, "clmemprobe:", oneLine(b.Error()))
	}
	if results == 0 {
		return usageErr("none of the %d inputs named above holds a result to merge", len(bad))
	}
	fleet := judge.Merge(merger, o.Tolerance.Fraction)
	if err := emitFleet(stdout, o, fleet); err != nil {
		return err
	}
	switch {
	case len(bad) > 0:
		return usageErr("%d %s could not be used (named above); the merge shows the %d %s that could", len(bad),
			report.Plural(len(bad), "input", "inputs"), results, report.Plural(results, "result", "results"))
	case fleet.Outliers > 0:
		return &exitError{exitRegression, nil}
	}
	return nil
}

// emitFleet writes the merge as emit does, with --all.
func emitFleet(stdout io.Writer, o mergeOptions, fleet *comparison.Fleet) error {
	f := o.Format.Format
	opts := report.Options{AllRows: o.All}
	if o.Output == "" {
		if file, ok := stdout.(*os.File); ok && f.Binary && isatty.IsTerminal(file.Fd()) {
			return usageErr("a %s chart is binary: give --output FILE or redirect stdout", f.Name)
		}
		opts = textOptions(stdout, o.Wide)
		opts.AllRows = o.All
	}
	return emitWith(stdout, o.Output, f, fleet, opts)
}

// fleetFiles are the inputs of a merge in the order named and found: a file to load, or why it is not one.
// The paths share one arena, which the merger keeps its nodes' files in too (by index): a million of them as
// strings in structs cost ~100 bytes each, and a copy of each in the merged rows ~50 more.
type fleetFiles struct {
	paths comparison.Sources // a path that failed is empty
	mu    sync.Mutex
	errs  map[int]error // the inputs that are not files to load, or did not load
}

func (f *fleetFiles) add(path string) {
	f.paths.Add(path)
}

func (f *fleetFiles) fail(err error) {
	f.setErr(f.paths.Add(""), err)
}

func (f *fleetFiles) setErr(i int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.errs == nil {
		f.errs = map[int]error{}
	}
	f.errs[i] = err
}

// errors are the inputs that could not be used, in the order they were named and found.
func (f *fleetFiles) errors() []error {
	var out []error
	for _, i := range slices.Sorted(maps.Keys(f.errs)) {
		out = append(out, f.errs[i])
	}
	return out
}

// findFleet lists every result the paths name: files as given, folders searched for run.json without
// following symlinks, each file once; read is every file named or found, for checkOutput (kept only where
// it asks: a million paths are a lot to keep for nothing).
func findFleet(paths []string, keepRead bool, limit *heapLimit) (files *fleetFiles, read []string) {
	files = &fleetFiles{}
	seen := map[[2]uint64]struct{}{} // device and inode: a file named twice (a folder and a file in it, a link) counts once
	add := func(path string) {
		if len(seen)%heapLimitEvery == 0 {
			limit.update()
		}
		if keepRead {
			read = append(read, path)
		}
		if fi, err := os.Stat(path); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				id := [2]uint64{uint64(st.Dev), st.Ino}
				if _, ok := seen[id]; ok {
					return
				}
				seen[id] = struct{}{}
			}
		}
		files.add(path)
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			files.fail(fmt.Errorf("%s: %v", p, reason(err)))
			continue
		}
		if !fi.IsDir() {
			add(p)
			continue
		}
		walkFleet(p, add, files.fail)
	}
	return files, read
}

// walkFleet adds every run.json under the folder p, and fails with what cannot be read.
func walkFleet(p string, add func(string), fail func(error)) {
	found := 0
	err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			fail(fmt.Errorf("%s: %v", path, reason(err)))
			return nil
		}
		if d.Type().IsRegular() && d.Name() == runFile {
			found++
			add(path)
		}
		return nil
	})
	if err != nil {
		fail(err)
	} else if found == 0 {
		fail(fmt.Errorf("%s: no %s under this folder", p, runFile))
	}
}

// loadFleet loads the files on one goroutine per CPU (decoding is the work: 10,000 results of this build are
// about 1 GB of JSON) and merges each as it loads, keeping only its rows, so that memory grows with the rows
// and never holds more runs than there are goroutines. Each file is read with the lean scan, which builds
// nothing of the samples and the other bulk merge never reads, and gives Load's answer for any file. A file
// that does not load gets its error in files, in place, so that the errors are told in the order the files
// were named.
func loadFleet(files *fleetFiles, limit *heapLimit) *comparison.FleetMerger {
	var (
		merger = comparison.FleetMerger{Sources: &files.paths}
		mu     sync.Mutex
		next   atomic.Int64
		wg     sync.WaitGroup
	)
	n := files.paths.Len()
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			var loader result.Loader
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				path := files.paths.Path(i)
				if path == "" {
					continue // an input that failed when it was found
				}
				r, err := loader.LoadLean(path)
				if err != nil {
					if !strings.Contains(err.Error(), path) {
						err = fmt.Errorf("%s: %w", path, err)
					}
					files.setErr(i, err)
					continue
				}
				node := comparison.NodeIn(i, r)
				mu.Lock()
				merger.Add(node)
				if merger.Results()%heapLimitEvery == 0 {
					limit.update()
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return &merger
}

// heapLimitEvery is how many files a merge finds, or results it adds, between two looks at what it holds: at
// ~160 bytes a node, 4,096 nodes are well under a megabyte of new rows.
const heapLimitEvery = 4096

// heapLimit keeps a merge's heap near what the merge holds. By default (GOGC=100) Go lets the heap grow to
// twice what was live at the last collection; what a merge holds is its rows, which only grow, and what
// it throws away is each file's scan, so at a million nodes the default let ~160 MB of rows take ~330 MB
// of heap and 385 MiB of RSS. A memory limit of what is live plus an eighth (at least 32 MiB) makes the
// collector run before the garbage doubles the heap, and makes the runtime give freed pages back to the
// system to stay under it. It is sized from what the last collection found live, so it moves up with the
// rows and never sits below them (a limit under what is live makes Go collect without end); while less is
// live than the floor, GOGC's own goal is the lower one and nothing changes (a merge of 10,000 issue files
// holds a few MB). A lower GOGC alone would also collect more often at small merges, where there is nothing
// to save.
type heapLimit struct {
	live   []metrics.Sample
	before int64 // the limit the process had (math.MaxInt64 unless GOMEMLIMIT was set): never raised
}

func newHeapLimit() *heapLimit {
	h := &heapLimit{live: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}, before: debug.SetMemoryLimit(-1)}
	h.update()
	return h
}

// update sets the limit from what the last collection found live.
func (h *heapLimit) update() {
	metrics.Read(h.live)
	if h.live[0].Value.Kind() != metrics.KindUint64 {
		return // a runtime without the metric: leave the limit as it was
	}
	live := int64(h.live[0].Value.Uint64())
	debug.SetMemoryLimit(min(h.before, live+max(live/8, 32<<20)))
}

// restore puts back the limit the process had (the tests merge in one process, many times).
func (h *heapLimit) restore() { debug.SetMemoryLimit(h.before) }

// reason is what went wrong with a file, without the path the caller names itself.
func reason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
