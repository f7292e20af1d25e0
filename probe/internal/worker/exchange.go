package worker

import (
	"errors"
	"fmt"

	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/internal/exchange"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
)

// exchange is the exchange child: it picks the spec's devices and runs the exchange on them.
func (c *child) exchange() *wire.ExchangeAnswer {
	r := c.spec.Exchange
	if r == nil {
		return &wire.ExchangeAnswer{Error: "no exchange in the spec", InSetup: true}
	}
	_, devs, err := c.inventory()
	if err != nil {
		return &wire.ExchangeAnswer{Error: err.Error(), InSetup: true}
	}
	if r.Platform >= len(devs) {
		return &wire.ExchangeAnswer{Error: fmt.Sprintf("platform %d is gone", r.Platform), InSetup: true}
	}
	cfg := exchange.Config{Indices: r.Devices, Cells: r.Cells, Halo: r.Halo, Steps: r.Steps, Sync: r.Sync,
		VerifyEvery: r.VerifyEvery, BenchBytes: r.BenchBytes, BenchReps: r.BenchReps, AllocHostPtr: r.AllocHostPtr}
	for _, i := range r.Devices {
		if i >= len(devs[r.Platform]) {
			return &wire.ExchangeAnswer{Error: fmt.Sprintf("device %d is gone", i), InSetup: true}
		}
		cfg.Devices = append(cfg.Devices, devs[r.Platform][i])
	}
	started := false
	cfg.OnStep = func(done uint64) {
		if !started {
			c.cell.SetStage(wire.StageRunning)
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
		return &wire.ExchangeAnswer{Error: how, InSetup: !started}
	}
	return &wire.ExchangeAnswer{Exchange: ex}
}
