// Package render holds what several output formats share: the Options that shape text output, the
// escaping of foreign strings for a terminal or Markdown (Style), the glue that keeps a number and its unit
// on one line, the command lines a document quotes and the words of sizes, outcomes and traced calls. It
// imports no format package and no registry: every format package imports it.
package render

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
