package wire

import (
	"fmt"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// The exchange's sync modes.
const (
	SyncEvents = "events" // each migrate waits on the producers' kernel events: the right way
	SyncNone   = "none"   // no cross-queue wait lists: shows what goes wrong without them
)

// ExchangeSpec is a halo exchange to run: which devices, how big, how long, how synchronised.
type ExchangeSpec struct {
	Platform     int    `json:"platform"`
	Devices      []int  `json:"devices"` // positions within the platform; at least two
	Cells        uint64 `json:"cells"`   // 32-bit cells per device
	Halo         uint64 `json:"halo"`
	Steps        uint64 `json:"steps"`
	Sync         string `json:"sync"`
	VerifyEvery  uint64 `json:"verify_every"` // 0: verify after the last step only
	BenchBytes   uint64 `json:"bench_bytes"`
	BenchReps    int    `json:"bench_reps"`
	AllocHostPtr bool   `json:"alloc_host_ptr"`
}

// maxCells bounds the cells per device: the kernel indexes them with 32-bit integers.
const maxCells = 1 << 31

// Validate rejects requests the exchange cannot run; the device count is checked once devices are chosen.
func (r *ExchangeSpec) Validate() error {
	switch {
	case r.Devices != nil && len(r.Devices) < 2:
		return fmt.Errorf("the exchange needs at least two devices (got %d): select them with --devices", len(r.Devices))
	case r.Halo == 0:
		return fmt.Errorf("--halo must be at least 1 cell")
	case r.Cells < r.Halo:
		return fmt.Errorf("the halo (%d cells) is wider than a slab (%d cells per device): raise --cells or lower --halo", r.Halo, r.Cells)
	case r.Cells > maxCells:
		return fmt.Errorf("--cells %d is too large (at most 2^31 per device)", r.Cells)
	case r.Steps == 0:
		return fmt.Errorf("--steps must be at least 1")
	case r.Sync != SyncEvents && r.Sync != SyncNone:
		return fmt.Errorf("--sync %q: choose events or none", r.Sync)
	case r.BenchReps < 0:
		return fmt.Errorf("--bench-reps cannot be negative")
	}
	return nil
}

// ExchangeAnswer is what the exchange child answers.
type ExchangeAnswer struct {
	Exchange *result.Exchange `json:"exchange,omitempty"`
	Error    string           `json:"error,omitempty"`
	// InSetup is true when the error came before the first step (loading, devices, context, kernels).
	InSetup bool `json:"in_setup,omitempty"`
}
