// Package report renders clmemprobe's documents (a run, a comparison, an exchange, a device listing, an
// environment) in the formats of one registry. Every command picks its output format here; a new format is
// one file with its render functions plus one line in the formats list below.
package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/findings"
)

// Kind is a kind of document.
type Kind int

// The documents the tool renders.
const (
	KindRun          Kind = iota // a probe run, judged (findings.Judged)
	KindComparison               // compare's answer (*comparison.Comparison)
	KindExchange                 // the halo exchange, judged (findings.JudgedExchange)
	KindInventory                // the device listing (*result.Inventory)
	KindEnvironment              // the environment block (*result.Environment)
	KindPlan                     // what run --dry-run would do (*result.DryRun)
	KindFleet                    // merge's answer (*comparison.Fleet)
	KindHealth                   // check's answer (*comparison.Health)
	KindExpectations             // what check holds a node to (*result.Expectations)
	KindPresets                  // run --variant-preset list (*PresetList)
	KindTrace                    // a traced program, judged (findings.JudgedTrace)
	KindLargest                  // the largest buffer search, judged (findings.JudgedLargest)
	KindRemedy                   // the remedy search, judged (findings.JudgedRemedy)
)

// Options shape text output for the terminal it goes to; the zero value suits files and pipes.
type Options struct {
	Width int  // the terminal's columns: a table wider than this drops columns and wraps; 0 is no limit
	ASCII bool // plain ASCII borders, for terminals without UTF-8
	Wide  bool // every column, however wide the table
	// Strategy and Variant pick the job of a format that shows one (repro); empty: the most informative.
	Strategy, Variant string
	// Flags picks the job by its buffers' flags, as results write them ("use-host-ptr").
	Flags string
	// AllFindings lists every finding under a table, not the short verdict of findings.BriefBullets
	// lines; MoreHint is how the user gets them there ("-v lists them"), said where the short verdict
	// left some out.
	AllFindings bool
	MoreHint    string
	// AllRows shows every node of a merge in a table, however many (else a job of more than FleetRowLimit
	// nodes shows its outliers and a count of the others).
	AllRows bool
	// Chart is the name of a chart file that sits beside the rendered document (the bundle's run.png), for
	// the Markdown report to link; empty where none does.
	Chart string
}

// Format is one output format and the documents it can render; a nil renderer means "not for that kind".
type Format struct {
	Name string
	Help string
	// Binary formats (charts) are never written to a terminal.
	Binary       bool
	Run          func(io.Writer, findings.Judged, Options) error
	Comparison   func(io.Writer, *comparison.Comparison, Options) error
	Exchange     func(io.Writer, findings.JudgedExchange, Options) error
	Inventory    func(io.Writer, *result.Inventory, Options) error
	Environment  func(io.Writer, *result.Environment, Options) error
	Plan         func(io.Writer, *result.DryRun, Options) error
	Fleet        func(io.Writer, *comparison.Fleet, Options) error
	Health       func(io.Writer, *comparison.Health, Options) error
	Expectations func(io.Writer, *result.Expectations, Options) error
	Presets      func(io.Writer, *PresetList, Options) error
	Trace        func(io.Writer, findings.JudgedTrace, Options) error
	Largest      func(io.Writer, findings.JudgedLargest, Options) error
	Remedy       func(io.Writer, findings.JudgedRemedy, Options) error
}

// formats is the registry, in the order help texts list them.
var formats = []Format{
	{Name: "table", Help: "tables and sentences for a terminal", Run: writeTable, Comparison: writeComparison,
		Exchange: writeExchangeText, Inventory: writeInventory, Environment: writeEnvironmentText, Plan: writePlanText,
		Fleet: writeFleetText, Health: writeHealthText, Presets: writePresetsText, Trace: writeTraceTable, Largest: writeLargestTable,
		Remedy: writeRemedyTable},
	{Name: "json", Help: "the document as indented JSON, for scripts", Run: jsonOf[findings.Judged], Comparison: jsonOf[*comparison.Comparison],
		Exchange: jsonOf[findings.JudgedExchange], Inventory: jsonOf[*result.Inventory], Environment: jsonOf[*result.Environment],
		Plan: jsonOf[*result.DryRun], Fleet: writeFleetJSON, Health: jsonOf[*comparison.Health], Expectations: jsonOf[*result.Expectations], Presets: jsonOf[*PresetList],
		Trace: jsonOf[findings.JudgedTrace], Largest: jsonOf[findings.JudgedLargest], Remedy: jsonOf[findings.JudgedRemedy]},
	{Name: "markdown", Help: "a report for a bug ticket", Run: writeMarkdown, Comparison: writeComparisonMarkdown, Exchange: writeExchangeMarkdown,
		Environment: writeEnvironmentMarkdown, Fleet: writeFleetMarkdown, Trace: writeTraceMarkdown, Largest: writeLargestMarkdown,
		Remedy: writeRemedyMarkdown},
	{Name: "csv", Help: "every kept sample, one row per strategy and sample", Run: writeCSV, Fleet: writeFleetCSV},
	{Name: "prom", Help: "Prometheus text exposition, for node_exporter's textfile collector", Run: writeProm},
	{Name: "repro", Help: "a C program that repeats one strategy's first failure (--strategy, --variant pick it)", Run: writeRepro, Trace: writeTraceRepro},
	{Name: "png", Help: "a chart: memory against buffers (a sweep: buffers reached against size)", Binary: true, Run: writePNG, Fleet: writeFleetPNG},
	{Name: "svg", Help: "the same chart as SVG", Binary: true, Run: writeSVG},
	{Name: "timeline", Help: "memory counters, job or program slices and failure instants in Chrome's trace event format, for Perfetto (ui.perfetto.dev) and chrome://tracing", Run: writeTimeline, Trace: writeTraceTimeline},
	{Name: "pprof", Help: "a trace's ledger as a pprof profile: buffers and bytes each call site held when the program ended (go tool pprof -top FILE)", Binary: true, Trace: writeProfileAtEnd},
	{Name: "pprof-failure", Help: "the same, live at the program's first failure", Binary: true, Trace: writeProfileAtFailure},
}

// renders reports whether f can render documents of kind k.
func (f *Format) renders(k Kind) bool {
	switch k {
	case KindRun:
		return f.Run != nil
	case KindComparison:
		return f.Comparison != nil
	case KindExchange:
		return f.Exchange != nil
	case KindInventory:
		return f.Inventory != nil
	case KindEnvironment:
		return f.Environment != nil
	case KindPlan:
		return f.Plan != nil
	case KindFleet:
		return f.Fleet != nil
	case KindHealth:
		return f.Health != nil
	case KindExpectations:
		return f.Expectations != nil
	case KindPresets:
		return f.Presets != nil
	case KindTrace:
		return f.Trace != nil
	case KindLargest:
		return f.Largest != nil
	case KindRemedy:
		return f.Remedy != nil
	}
	return false
}

// Names lists the formats that render documents of kind k.
func Names(k Kind) []string {
	var out []string
	for i := range formats {
		if formats[i].renders(k) {
			out = append(out, formats[i].Name)
		}
	}
	return out
}

// Lookup returns the named format if it renders documents of kind k, else an error that lists the choices.
func Lookup(name string, k Kind) (*Format, error) {
	for i := range formats {
		if formats[i].Name == name && formats[i].renders(k) {
			return &formats[i], nil
		}
	}
	return nil, fmt.Errorf("unknown format %q: choose %s", name, strings.Join(Names(k), ", "))
}

// Render writes doc in the named format, for a file or a pipe.
func Render(w io.Writer, name string, doc any) error { return RenderWith(w, name, doc, Options{}) }

// RenderWith writes doc in the named format, shaped by opts.
func RenderWith(w io.Writer, name string, doc any, opts Options) error {
	k, err := kindOf(doc)
	if err != nil {
		return err
	}
	f, err := Lookup(name, k)
	if err != nil {
		return err
	}
	switch d := doc.(type) {
	case findings.Judged:
		return f.Run(w, d, opts)
	case *comparison.Comparison:
		return f.Comparison(w, d, opts)
	case findings.JudgedExchange:
		return f.Exchange(w, d, opts)
	case *result.Inventory:
		return f.Inventory(w, d, opts)
	case *result.Environment:
		return f.Environment(w, d, opts)
	case *result.DryRun:
		return f.Plan(w, d, opts)
	case *comparison.Fleet:
		return f.Fleet(w, d, opts)
	case *comparison.Health:
		return f.Health(w, d, opts)
	case *result.Expectations:
		return f.Expectations(w, d, opts)
	case *PresetList:
		return f.Presets(w, d, opts)
	case findings.JudgedTrace:
		return f.Trace(w, d, opts)
	case findings.JudgedLargest:
		return f.Largest(w, d, opts)
	case findings.JudgedRemedy:
		return f.Remedy(w, d, opts)
	}
	return fmt.Errorf("report: cannot render a %T", doc)
}

func kindOf(doc any) (Kind, error) {
	switch doc.(type) {
	case findings.Judged:
		return KindRun, nil
	case *result.Run, *result.Trace, *result.Largest, *result.Remedy, *result.ExchangeRun:
		// A bare document would be rendered with whatever verdict it holds, or none: the caller judges it
		// first.
		return 0, fmt.Errorf("report: a %T is rendered judged (package judge)", doc)
	case *comparison.Comparison:
		return KindComparison, nil
	case findings.JudgedExchange:
		return KindExchange, nil
	case *result.Inventory:
		return KindInventory, nil
	case *result.Environment:
		return KindEnvironment, nil
	case *result.DryRun:
		return KindPlan, nil
	case *comparison.Fleet:
		return KindFleet, nil
	case *comparison.Health:
		return KindHealth, nil
	case *result.Expectations:
		return KindExpectations, nil
	case *PresetList:
		return KindPresets, nil
	case findings.JudgedTrace:
		return KindTrace, nil
	case findings.JudgedLargest:
		return KindLargest, nil
	case findings.JudgedRemedy:
		return KindRemedy, nil
	}
	return 0, fmt.Errorf("report: cannot render a %T", doc)
}

// jsonOf renders any document as indented JSON.
func jsonOf[T any](w io.Writer, doc T, _ Options) error { return writeJSON(w, doc) }
