package findings

import (
	"fmt"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

func site(fn string, live uint64, sampled bool) result.TraceSite {
	return result.TraceSite{Frames: []result.TraceFrame{{Function: fn, File: "/src/" + fn + ".c", Line: 7}}, Live: live, LiveB: live << 20, Sampled: sampled}
}

// The never-released sentences: one per site that kept buffers (most bytes first, at most three, the rest
// counted), "about" where the figures are scaled from samples, and for a program that did not exit by
// itself, what was still live when it was ended rather than "never released".
func TestLedgerSentences(t *testing.T) {
	code := 0
	tr := &result.Trace{Exit: result.TraceExit{Code: &code}, Contexts: []result.TraceContext{{}},
		Ledger: &result.TraceLedger{Sites: []result.TraceSite{site("a", 4, false), site("b", 3, true), site("c", 0, false), site("d", 2, false), site("e", 1, false)}, NotAttributed: 7}}
	got := ledgerSentences(tr)
	want := []string{
		"4 buffers (4 MiB) created in a (a.c:7) were never released.",
		"About 3 buffers (3 MiB) created in b (b.c:7) were never released.",
		"2 buffers (2 MiB) created in d (d.c:7) were never released.",
		"1 site more kept allocations to the end; the ledger lists them.",
		"7 allocations were not attributed to a site (the ledger's tables were full): the sites' figures leave them out, the contexts' figures count the buffers among them.",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
	tr.Exit = result.TraceExit{Signal: "SIGKILL"}
	tr.Ledger.Sites, tr.Ledger.NotAttributed = tr.Ledger.Sites[:1], 0
	if got := ledgerSentences(tr); len(got) != 1 || got[0] != "4 buffers (4 MiB) created in a (a.c:7) were still live when the program was ended." {
		t.Fatalf("killed: %q", got)
	}
}

// The site that held the most at the first failure, as a share of every context's live bytes then; in a
// program of several contexts, with its context.
func TestLedgerAtFailureShare(t *testing.T) {
	big, small := site("big", 0, false), site("small", 0, false)
	big.AtFailure, big.AtFailureB, big.Context = 3, 3<<20, 1
	small.AtFailure, small.AtFailureB = 1, 1<<20
	tr := &result.Trace{Contexts: []result.TraceContext{{}, {}}, Ledger: &result.TraceLedger{Sites: []result.TraceSite{small, big}},
		FirstFailure: &result.TraceFailure{Live: []result.TraceLive{{Context: 0, Buffers: 1, Bytes: 1 << 20}, {Context: 1, Buffers: 5, Bytes: 5 << 20}}}}
	want := "At the failure, big (big.c:7) (context 1) held 50% of the live bytes (3 MiB in 3 buffers)."
	if got := atFailure(tr); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
