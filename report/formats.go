// Package report renders clmemprobe's documents (a run, a comparison, an exchange, a device listing, an
// environment) in the formats of one registry. Every command picks its output format here; a new format is
// one file with its render functions plus its line in formats and its registrations in renderers.
package report

import (
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/chart"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/export"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/markdown"
	"github.com/clmemprobe/clmemprobe/report/prom"
	"github.com/clmemprobe/clmemprobe/report/repro"
	"github.com/clmemprobe/clmemprobe/report/table"
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

// Format is one output format: its name, what it is for, and whether it is binary.
type Format struct {
	Name string
	Help string
	// Binary formats (charts) are never written to a terminal.
	Binary bool
}

// formats are the output formats, in the order help texts list them.
var formats = []Format{
	{Name: "table", Help: "tables and sentences for a terminal"},
	{Name: "json", Help: "the document as indented JSON, for scripts"},
	{Name: "markdown", Help: "a report for a bug ticket"},
	{Name: "csv", Help: "every kept sample, one row per strategy and sample"},
	{Name: "prom", Help: "Prometheus text exposition, for node_exporter's textfile collector"},
	{Name: "repro", Help: "a C program that repeats one strategy's first failure (--strategy, --variant pick it)"},
	{Name: "png", Help: "a chart: memory against buffers (a sweep: buffers reached against size)", Binary: true},
	{Name: "svg", Help: "the same chart as SVG", Binary: true},
	{Name: "timeline", Help: "memory counters, job or program slices and failure instants in Chrome's trace event format, for Perfetto (ui.perfetto.dev) and chrome://tracing"},
	{Name: "pprof", Help: "a trace's ledger as a pprof profile: buffers and bytes each call site held when the program ended (go tool pprof -top FILE)", Binary: true},
	{Name: "pprof-failure", Help: "the same, live at the program's first failure", Binary: true},
}

// renderers is the registry: one registration per document kind and format. A new format is a file of
// render functions and its lines here (and in formats); a new kind of document, its type's lines.
var renderers = []registration{
	as(KindRun, "table", table.WriteTable),
	as(KindRun, "json", jsonOf[findings.Judged]),
	as(KindRun, "markdown", markdown.WriteMarkdown),
	as(KindRun, "csv", export.WriteCSV),
	as(KindRun, "prom", prom.WriteProm),
	as(KindRun, "repro", repro.WriteRepro),
	as(KindRun, "png", chart.WritePNG),
	as(KindRun, "svg", chart.WriteSVG),
	as(KindRun, "timeline", writeTimeline),

	as(KindTrace, "table", table.WriteTraceTable),
	as(KindTrace, "json", jsonOf[findings.JudgedTrace]),
	as(KindTrace, "markdown", markdown.WriteTraceMarkdown),
	as(KindTrace, "repro", repro.WriteTraceRepro),
	as(KindTrace, "timeline", writeTraceTimeline),
	as(KindTrace, "pprof", writeProfileAtEnd),
	as(KindTrace, "pprof-failure", writeProfileAtFailure),

	as(KindComparison, "table", table.WriteComparison),
	as(KindComparison, "json", jsonOf[*comparison.Comparison]),
	as(KindComparison, "markdown", markdown.WriteComparisonMarkdown),

	as(KindFleet, "table", table.WriteFleetText),
	as(KindFleet, "json", export.WriteFleetJSON),
	as(KindFleet, "markdown", markdown.WriteFleetMarkdown),
	as(KindFleet, "csv", export.WriteFleetCSV),
	as(KindFleet, "png", chart.WriteFleetPNG),

	as(KindHealth, "table", table.WriteHealthText),
	as(KindHealth, "json", jsonOf[*comparison.Health]),

	as(KindLargest, "table", table.WriteLargestTable),
	as(KindLargest, "json", jsonOf[findings.JudgedLargest]),
	as(KindLargest, "markdown", markdown.WriteLargestMarkdown),

	as(KindRemedy, "table", table.WriteRemedyTable),
	as(KindRemedy, "json", jsonOf[findings.JudgedRemedy]),
	as(KindRemedy, "markdown", markdown.WriteRemedyMarkdown),

	as(KindExchange, "table", table.WriteExchangeText),
	as(KindExchange, "json", jsonOf[findings.JudgedExchange]),
	as(KindExchange, "markdown", markdown.WriteExchangeMarkdown),

	as(KindInventory, "table", table.WriteInventory),
	as(KindInventory, "json", jsonOf[*result.Inventory]),

	as(KindEnvironment, "table", table.WriteEnvironmentText),
	as(KindEnvironment, "json", jsonOf[*result.Environment]),
	as(KindEnvironment, "markdown", markdown.WriteEnvironmentMarkdown),

	as(KindPlan, "table", table.WritePlanText),
	as(KindPlan, "json", jsonOf[*result.DryRun]),

	as(KindExpectations, "json", jsonOf[*result.Expectations]),

	as(KindPresets, "table", table.WritePresetsText),
	as(KindPresets, "json", jsonOf[*table.PresetList]),
}

// registration writes the documents of one kind, all of one Go type, in one format.
type registration struct {
	kind   Kind
	format string
	doc    reflect.Type
	write  func(io.Writer, any, Options) error
}

// as registers fn as the renderer of kind k in the named format; the kind's documents are fn's type T.
func as[T any](k Kind, format string, fn func(io.Writer, T, Options) error) registration {
	return registration{kind: k, format: format, doc: reflect.TypeFor[T](),
		write: func(w io.Writer, doc any, o Options) error { return fn(w, doc.(T), o) }}
}

// find is the renderer of kind k in the named format; nil where there is none.
func find(k Kind, format string) *registration {
	for i := range renderers {
		if renderers[i].kind == k && renderers[i].format == format {
			return &renderers[i]
		}
	}
	return nil
}

// Names lists the formats that render documents of kind k.
func Names(k Kind) []string {
	var out []string
	for _, f := range formats {
		if find(k, f.Name) != nil {
			out = append(out, f.Name)
		}
	}
	return out
}

// TextFormats lists the formats that render doc, binary ones (charts, profiles) left out.
func TextFormats(doc any) ([]string, error) {
	kind, err := KindOf(doc)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range formats {
		if !f.Binary && find(kind, f.Name) != nil {
			out = append(out, f.Name)
		}
	}
	return out, nil
}

// Lookup returns the named format if it renders documents of kind k, else an error that lists the choices.
func Lookup(name string, k Kind) (*Format, error) {
	for i := range formats {
		if formats[i].Name == name && find(k, name) != nil {
			return &formats[i], nil
		}
	}
	return nil, fmt.Errorf("unknown format %q: choose %s", name, strings.Join(Names(k), ", "))
}

// Render writes doc in the named format, for a file or a pipe.
func Render(w io.Writer, name string, doc any) error {
	return RenderWith(w, name, doc, Options{})
}

// RenderWith writes doc in the named format, shaped by opts.
func RenderWith(w io.Writer, name string, doc any, opts Options) error {
	k, err := KindOf(doc)
	if err != nil {
		return err
	}
	if _, err := Lookup(name, k); err != nil {
		return err
	}
	return find(k, name).write(w, doc, opts)
}

// KindOf is the kind whose renderers take documents of doc's type.
func KindOf(doc any) (Kind, error) {
	switch doc.(type) {
	case *result.Run, *result.Trace, *result.Largest, *result.Remedy, *result.ExchangeRun:
		// A bare document would be rendered with whatever verdict it holds, or none: the caller judges it
		// first.
		return 0, fmt.Errorf("report: a %T is rendered judged (package judge)", doc)
	}
	t := reflect.TypeOf(doc)
	for _, r := range renderers {
		if r.doc == t {
			return r.kind, nil
		}
	}
	return 0, fmt.Errorf("report: cannot render a %T", doc)
}

// jsonOf renders any document as indented JSON.
func jsonOf[T any](w io.Writer, doc T, _ Options) error { return export.WriteJSON(w, doc) }
