package report

import (
	"io"

	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/profile"
)

// writeProfileAtEnd writes a trace's ledger as a pprof profile of what each call site held when the
// program ended: what trace --out writes to live-at-exit.pb.gz.
func writeProfileAtEnd(w io.Writer, j findings.JudgedTrace, _ Options) error {
	return profile.Write(w, j.Trace(), profile.AtEnd)
}

// writeProfileAtFailure writes what each call site held at the program's first failure
// (live-at-failure.pb.gz).
func writeProfileAtFailure(w io.Writer, j findings.JudgedTrace, _ Options) error {
	return profile.Write(w, j.Trace(), profile.AtFailure)
}
