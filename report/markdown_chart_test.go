package report

import (
	"testing"
)

// The chart is linked only where the caller says its file sits beside the report.
func TestMarkdownLinksTheChartOnlyWhereItIs(t *testing.T) {
	const chart = "run.png"
	with, without := renderMarkdown(t, ticketRun(), Options{Chart: chart}), renderMarkdown(t, ticketRun(), Options{})
	if with == without {
		t.Errorf("the report is the same with %s beside it as without", chart)
	}
	golden(t, "markdown-ticket-chart", []byte(with)) // the link to run.png
	golden(t, "markdown-ticket", []byte(without))    // no link
}
