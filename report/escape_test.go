package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// hostile are strings a runtime, a worker or an edited file could carry into a report.
var hostile = []string{
	"```\n# not a heading\n<script>alert(1)</script>\n```",
	"<img src=x onerror=alert(1)>",
	"[click](https://evil.example/)",
	"a | b | c",
	"````\n````",
	"**bold** _em_ ~~strike~~ &amp;",
	"\x1b[31mred\x1b[0m\r\n",
	"`tick` ``two``",
	"abc\u202e\u2066txt.exe", // bidirectional controls: shown in an order other than their own
}

// hostileRun carries every hostile string in every field a report prints.
func hostileRun() *result.Run {
	h := func(i int) string { return hostile[i%len(hostile)] }
	r := &result.Run{SchemaVersion: 1, Tool: result.Tool{Name: "clmemprobe", Version: h(0)}, Started: h(1), Command: []string{h(2), h(3)},
		Platform: result.Platform{Name: h(4), Vendor: h(5), Version: h(6)},
		Devices:  []result.Device{{Name: h(7), Vendor: h(0), Type: h(1), Version: h(2), DriverVersion: h(3), PCIBusID: h(4), GlobalMemBytes: 1 << 30}},
		Config:   result.Config{Touch: result.Touch(h(5)), SizeBytes: 1 << 20, MaxAllocs: 10},
		Environment: &result.Environment{OS: h(6), Kernel: h(7), CPU: h(0), OpenCLLibrary: h(1), ICDVendorsDir: h(2),
			ICDFiles: map[string]string{h(3): h(4)}, DRIDevices: []string{h(5)}, EnvVars: map[string]string{"POCL_X": h(6)},
			Platforms: []result.Platform{{Name: h(7)}}},
		Judgement: result.Judgement{Verdict: []string{h(0), h(1)}},
	}
	for i := 0; i < 3; i++ {
		r.Jobs = append(r.Jobs, result.JobResult{Strategy: result.Strategy(h(i)), Devices: []int{0}, SizeBytes: 1 << 20,
			Outcome: result.OutcomeFailed, Reason: h(i + 1), Signal: h(i + 2), LastStage: result.Stage(h(i + 3)), DeviceSampler: result.DeviceSource(h(i + 4)),
			Notices: []string{h(i + 5), h(i + 6)}, WorkerOutput: h(i + 7),
			FirstFailure: &result.FirstFailure{Stage: result.Stage(h(i)), Name: h(i + 1), Call: h(i + 2)}, Samples: []result.Sample{}})
	}
	return r
}

// ownHTML is the HTML the report writes itself: a collapsed section whose summary holds no markup.
var ownHTML = regexp.MustCompile(`^(<details><summary>[^<>]*</summary>|</details>)$`)

// The Markdown report of a run full of hostile strings parses to no HTML, no link, no heading or table
// beyond the report's own, and every hostile payload stays text or code.
func TestMarkdownEscapesForeignStrings(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, "markdown", judged(hostileRun())); err != nil {
		t.Fatal(err)
	}
	src := b.Bytes()
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	doc := md.Parser().Parse(text.NewReader(src))
	headings := 0
	err := ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.Kind() {
		case ast.KindRawHTML, ast.KindHTMLBlock:
			// The report's own collapsed sections are the only HTML: <details><summary>its words</summary>.
			if !ownHTML.MatchString(strings.TrimSpace(nodeText(n, src))) {
				t.Errorf("HTML got through: %q", nodeText(n, src))
			}
		case ast.KindLink, ast.KindImage:
			// A bare URL may be shown as one (GFM autolinks it, visibly); a link whose text hides its target may not.
			t.Errorf("a link got through: %q", nodeText(n, src))
		case ast.KindHeading:
			headings++
			if h := string(nodeText(n, src)); strings.HasPrefix(strings.TrimLeft(h, "\\`"), "# not a heading") || h == "not a heading" {
				t.Errorf("a foreign heading got through: %q", h)
			}
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The report's own headings: the title, six sections, one per strategy.
	if want := 1 + 6 + 3; headings != want {
		t.Errorf("%d headings, want %d:\n%s", headings, want, src)
	}
	if bytes.Contains(src, []byte("\x1b")) || bytes.Contains(src, []byte("\r")) {
		t.Errorf("control characters got through")
	}
}

// On a terminal, in Markdown and in Prometheus labels, foreign strings lose their control and bidirectional
// characters and stay on their line.
func TestOutputHasNoControlCharacters(t *testing.T) {
	for _, format := range []string{"table", "markdown", "prom"} {
		var b bytes.Buffer
		if err := Render(&b, format, judged(hostileRun())); err != nil {
			t.Fatal(err)
		}
		for _, c := range []string{"\x1b", "\r", "\u202e", "\u2066"} {
			if strings.Contains(b.String(), c) {
				t.Errorf("%s: %q got through", format, c)
			}
		}
	}
}

// nodeText is the source text under a node: its raw segments (inline HTML), its text children, or its
// lines (a block without inline children).
func nodeText(n ast.Node, src []byte) string {
	var b strings.Builder
	if raw, ok := n.(*ast.RawHTML); ok {
		for i := 0; i < raw.Segments.Len(); i++ {
			seg := raw.Segments.At(i)
			b.Write(seg.Value(src))
		}
		return b.String()
	}
	if n.HasChildren() {
		_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
			if t, ok := c.(*ast.Text); ok && entering {
				b.Write(t.Segment.Value(src))
			}
			return ast.WalkContinue, nil
		})
		return b.String()
	}
	if n.Type() == ast.TypeBlock {
		for i := 0; i < n.Lines().Len(); i++ {
			seg := n.Lines().At(i)
			b.Write(seg.Value(src))
		}
	}
	return b.String()
}
