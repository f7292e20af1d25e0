package report

import (
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/findings"
)

// judged is what the commands hand the renderers: a run or a trace judged (findings.Judge), any other
// document as it is.
func judged(doc any) any {
	switch d := doc.(type) {
	case *result.Run:
		return findings.Judge(d)
	case *result.Trace:
		return findings.JudgeTrace(d)
	}
	return doc
}
