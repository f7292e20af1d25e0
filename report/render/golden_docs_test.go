package render_test

import (
	"testing"

	"github.com/clmemprobe/clmemprobe/report"
	goldenset "github.com/clmemprobe/clmemprobe/report/internal/golden"
)

// The golden documents in every text format (each uses the shared pieces) match report's golden files (report/testdata/golden; go test ./report
// -update rewrites them): the root's check, run here so that this package's coverage is its own.
func TestGoldenDocumentsIn(t *testing.T) {
	reg := goldenset.Registry{TextFormats: report.TextFormats, Render: report.RenderWith}
	goldenset.Check(t, reg, func(format string) bool { return true }, false, "./report")
}
