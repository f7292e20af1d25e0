package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/internal/exchange"
	"github.com/clmemprobe/clmemprobe/report/result"
)

// The exchange's sync modes.
const (
	SyncEvents = exchange.SyncEvents // each migrate waits on the producers' kernel events: the right way
	SyncNone   = exchange.SyncNone   // no cross-queue wait lists: shows what goes wrong without them
)

// ExchangeRequest is a halo exchange to run: which devices, how big, how long, how synchronised.
type ExchangeRequest struct {
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

// Validate rejects requests the exchange cannot run; the device count is checked once devices are chosen.
func (r *ExchangeRequest) Validate() error {
	switch {
	case r.Devices != nil && len(r.Devices) < 2:
		return fmt.Errorf("the exchange needs at least two devices (got %d): select them with --devices", len(r.Devices))
	case r.Halo == 0:
		return fmt.Errorf("--halo must be at least 1 cell")
	case r.Cells < r.Halo:
		return fmt.Errorf("the halo (%d cells) is wider than a slab (%d cells per device): raise --cells or lower --halo", r.Halo, r.Cells)
	case r.Cells > 1<<31:
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

// exchangeSpec is the exchange job as the child gets it.
type exchangeSpec = ExchangeRequest

// exchangeAnswer is what the exchange child answers.
type exchangeAnswer struct {
	Exchange *result.Exchange `json:"exchange,omitempty"`
	Error    string           `json:"error,omitempty"`
	// InSetup is true when the error came before the first step (loading, devices, context, kernels).
	InSetup bool `json:"in_setup,omitempty"`
}

// Exchange runs the halo exchange in a child process. A runtime that fails, crashes or hangs while setting
// up is an error wrapping ErrNoOpenCL; one that crashes or hangs during the steps, ErrChildFault; one whose
// calls fail during the steps, an error naming the call.
func Exchange(ctx context.Context, libPath string, r ExchangeRequest, limits Limits) (*result.Exchange, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	e, err := supervise(ctx, supervision{spec: childSpec{Kind: kindExchange, Library: libPath, Exchange: &r}, limits: limits})
	if err != nil {
		return nil, err
	}
	var a exchangeAnswer
	if e.answer == nil || json.Unmarshal(e.answer, &a) != nil {
		if ctxStopped(e) {
			return nil, context.Canceled
		}
		if e.stage == cellSetup {
			return nil, &childFault{setup: true, msg: "the OpenCL runtime " + failedHow(e) + ", setting up the exchange"}
		}
		return nil, &childFault{msg: fmt.Sprintf("the OpenCL runtime %s, after %d of %d exchange steps", failedHow(e), e.count, r.Steps)}
	}
	switch {
	case a.Error != "" && a.InSetup:
		return nil, fmt.Errorf("%w: %s", ErrNoOpenCL, a.Error)
	case a.Error != "":
		return nil, errors.New(a.Error)
	}
	return a.Exchange, nil
}

// exchange is the child's side.
func (c *child) exchange() *exchangeAnswer {
	r := c.spec.Exchange
	if r == nil {
		return &exchangeAnswer{Error: "no exchange in the spec", InSetup: true}
	}
	_, devs, err := c.inventory()
	if err != nil {
		return &exchangeAnswer{Error: err.Error(), InSetup: true}
	}
	if r.Platform >= len(devs) {
		return &exchangeAnswer{Error: fmt.Sprintf("platform %d is gone", r.Platform), InSetup: true}
	}
	cfg := exchange.Config{Indices: r.Devices, Cells: r.Cells, Halo: r.Halo, Steps: r.Steps, Sync: r.Sync,
		VerifyEvery: r.VerifyEvery, BenchBytes: r.BenchBytes, BenchReps: r.BenchReps, AllocHostPtr: r.AllocHostPtr}
	for _, i := range r.Devices {
		if i >= len(devs[r.Platform]) {
			return &exchangeAnswer{Error: fmt.Sprintf("device %d is gone", i), InSetup: true}
		}
		cfg.Devices = append(cfg.Devices, devs[r.Platform][i])
	}
	started := false
	cfg.OnStep = func(done uint64) {
		if !started {
			c.cell.SetStage(cellRunning)
			started = true
		}
		c.cell.SetCount(done)
	}
	ex, err := exchange.Run(c.lib, cfg)
	if err != nil {
		var ce *cl.CallError
		how := err.Error()
		if errors.As(err, &ce) && !started {
			how = "setting up the exchange: " + how
		}
		return &exchangeAnswer{Error: how, InSetup: !started}
	}
	return &exchangeAnswer{Exchange: ex}
}
