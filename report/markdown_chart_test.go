package report

import (
	"strings"
	"testing"
)

// The chart is linked only where the caller says its file sits beside the report.
func TestMarkdownLinksTheChartOnlyWhereItIs(t *testing.T) {
	const chart = "run.png"
	if md := renderMarkdown(t, ticketRun(), Options{Chart: chart}); !strings.Contains(md, "]("+chart+")") {
		t.Errorf("the report does not link %s, which sits beside it", chart)
	}
	if md := renderMarkdown(t, ticketRun(), Options{}); strings.Contains(md, ".png)") {
		t.Errorf("the report links a chart that is not there")
	}
}
