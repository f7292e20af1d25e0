package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// Batched attribution waits for the device once per batch of buffers, not after each. The first failure must
// be the one a wait after every buffer finds: the same buffer, stage, code and device, for every strategy and
// touch, on runtimes that fail at the enqueue, at the wait (the batch's wait: the failed command is found by
// its event), or without saying which command failed (the batch is done again, one wait per buffer).
// batchMadeAgain is the note of a batch whose wait failed without naming a command: which, and that it was
// made again with a wait after each buffer.
var batchMadeAgain = regexp.MustCompile(`^the runtime reported clFinish: CL_MEM_OBJECT_ALLOCATION_FAILURE \(-4\) at clFinish without a failed command ` +
	`in the batch of buffers #[0-9]+-#[0-9]+; they were released and made again with a wait after each$`)

func TestBatchedAttributionIsExact(t *testing.T) {
	// 250 MiB per device: with 1 MiB buffers round robin over two devices, the failure falls at #500, inside
	// a batch (500 = 7 x 64 + 52), not at its edge.
	lazy := []string{"FAULTCL_MODEL=lazy", fmt.Sprintf("FAULTCL_DEVICE_MEM=%d", 250*mib)}
	cases := []struct {
		name     string
		settings []string
		touch    string
		note     bool // the runtime does not say which command failed: the batch is replayed
	}{
		{"fails at the enqueue, fill", lazy, "fill", false},
		{"fails at the enqueue, kernel", lazy, "kernel", false},
		{"fails at the wait, fill", append(lazy, "FAULTCL_LAZY_AT_FINISH=1"), "fill", false},
		{"fails at the wait, kernel", append(lazy, "FAULTCL_LAZY_AT_FINISH=1"), "kernel", false},
		{"fails at the wait, no event says which", append(lazy, "FAULTCL_LAZY_AT_FINISH=1", "FAULTCL_NO_EVENT_STATUS=1"), "fill", true},
		{"replicating, fails at create", []string{hostBudget(123)}, "fill", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := FaultEnv(t, c.settings...)
			args := []string{"--touch", c.touch, "--max-allocs", "2000", "--strategies", "all"}
			per, _, _ := runOut(t, env, append(args, "--attribution", "per-buffer")...)
			bat, _, _ := runOut(t, env, args...)
			if bat.Config.Attribution != "batched" || per.Config.Attribution != "per-buffer" {
				t.Errorf("config.attribution %q and %q", bat.Config.Attribution, per.Config.Attribution)
			}
			for i := range per.Jobs {
				p, b := &per.Jobs[i], &bat.Jobs[i]
				if p.Outcome == result.OutcomeUnsupported {
					continue
				}
				// One context per device (per-device, pool) does not replicate: it may complete.
				if p.Outcome != result.OutcomeFailed && !(!p.Strategy.SharesContext() && p.Outcome == result.OutcomeCompleted) {
					t.Fatalf("%s: %s, want a failure to attribute", p.Strategy, p.Outcome)
				}
				pf, bf := where(p.FirstFailure), where(b.FirstFailure)
				if b.Outcome != p.Outcome || b.AllocationsOK != p.AllocationsOK || bf != pf {
					t.Errorf("%s: batched %s at %d %+v; a wait per buffer %s at %d %+v", p.Strategy, b.Outcome, b.AllocationsOK, bf, p.Outcome, p.AllocationsOK, pf)
				}
				if p.Attribution != "per-buffer" {
					t.Errorf("%s: attribution %q with --attribution per-buffer", p.Strategy, p.Attribution)
				}
				wantMode := "batched"
				if c.note {
					wantMode = "per-buffer"
				}
				if b.Attribution != wantMode || (b.AttributionNote != "") != c.note {
					t.Errorf("%s: attribution %q (%q), want %s", p.Strategy, b.Attribution, b.AttributionNote, wantMode)
				}
				if c.note && !batchMadeAgain.MatchString(b.AttributionNote) {
					t.Errorf("%s: the note does not say why: %q", p.Strategy, b.AttributionNote)
				}
			}
			// The expected index, from the runtime's parameters: migrate-first and the fills place each
			// buffer on its one device; the shared contexts of the replicating model stage every buffer.
			if c.settings[0] == "FAULTCL_MODEL=lazy" {
				if s := strategy(t, bat, result.PerDevice); s.FirstFailure.Index != 500 {
					t.Errorf("per-device failed at #%d, want #500 (2 devices x 250 MiB)", s.FirstFailure.Index)
				}
			}
		})
	}
}

// where is what pins a failure: its buffer, stage, code, call and device (not the memory read after it).
func where(f *result.FirstFailure) string {
	if f == nil {
		return "none"
	}
	return fmt.Sprintf("#%d %s %d %s %s device %d", f.Index, f.Stage, f.Code, f.Name, f.Call, f.Device)
}

// On a runtime known to report allocation failures at the enqueue (NVIDIA's), batches go without an event
// per command. Should a wait fail there all the same, the batch is done again one wait per buffer: still exact.
func TestBatchesWithoutEventsWhereTheRuntimeReportsAtTheEnqueue(t *testing.T) {
	lazy := []string{"FAULTCL_MODEL=lazy", fmt.Sprintf("FAULTCL_DEVICE_MEM=%d", 250*mib), "FAULTCL_PLATFORM_NAME=NVIDIA CUDA (faultcl standing in)"}
	r, _, _ := runOut(t, FaultEnv(t, lazy...), "--touch", "fill", "--max-allocs", "2000", "--strategies", "per-device")
	s := r.Jobs[0]
	if s.FirstFailure == nil || s.FirstFailure.Index != 500 || s.FirstFailure.Stage != result.StageTouch || s.Attribution != "batched" ||
		!strings.HasPrefix(s.AttributionNote, "batches without an event per command") {
		t.Errorf("failed at %s, attribution %q (%q); want #500 at touch, batched without events", where(s.FirstFailure), s.Attribution, s.AttributionNote)
	}
	r, _, _ = runOut(t, FaultEnv(t, append(lazy, "FAULTCL_LAZY_AT_FINISH=1")...), "--touch", "fill", "--max-allocs", "2000", "--strategies", "per-device")
	s = r.Jobs[0]
	if s.FirstFailure == nil || s.FirstFailure.Index != 500 || s.FirstFailure.Stage != result.StageFinish || s.Attribution != "per-buffer" ||
		!batchMadeAgain.MatchString(s.AttributionNote) {
		t.Errorf("failed at %s, attribution %q (%q); want #500 at finish after the batch was done again", where(s.FirstFailure), s.Attribution, s.AttributionNote)
	}
}
