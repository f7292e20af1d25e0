package probe

import (
	"context"
	"errors"
	"fmt"

	"github.com/clmemprobe/clmemprobe/probe/internal/supervise"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// The exchange's sync modes.
const (
	SyncEvents = wire.SyncEvents // each migrate waits on the producers' kernel events: the right way
	SyncNone   = wire.SyncNone   // no cross-queue wait lists: shows what goes wrong without them
)

// ExchangeRequest is a halo exchange to run: which devices, how big, how long, how synchronised. Its
// Validate rejects requests the exchange cannot run.
type ExchangeRequest = wire.ExchangeSpec

// Exchange runs the halo exchange in a child process. A runtime that fails, crashes or hangs while setting
// up is an error wrapping ErrNoOpenCL; one that crashes or hangs during the steps, ErrChildFault; one whose
// calls fail during the steps, an error naming the call.
func Exchange(ctx context.Context, libPath string, r ExchangeRequest, limits Limits) (*result.Exchange, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	groups, end := session(true)
	defer end()
	e, err := supervise.Run(ctx, supervise.Child{Spec: wire.Spec{Kind: wire.KindExchange, Library: libPath, Exchange: &r}, Limits: limits,
		Groups: groups})
	if err != nil {
		return nil, err
	}
	a, err := supervise.Answer[wire.ExchangeAnswer](e)
	if err != nil {
		switch {
		case e.Stop == supervise.Interrupted:
			return interruptedExchange(r, e.Count), context.Canceled
		case e.Stage == wire.StageSetup:
			return nil, &childFault{setup: true, msg: "the OpenCL runtime " + supervise.How(err) + ", setting up the exchange"}
		}
		return nil, &childFault{msg: fmt.Sprintf("the OpenCL runtime %s, after %d of %d exchange steps", supervise.How(err), e.Count, r.Steps)}
	}
	switch {
	case a.Error != "" && a.InSetup:
		return nil, fmt.Errorf("%w: %s", ErrNoOpenCL, a.Error)
	case a.Error != "":
		return nil, errors.New(a.Error)
	}
	return a.Exchange, nil
}

// interruptedExchange is the document of an exchange Ctrl-C stopped after done steps: its plan and how far
// it got, nothing verified or timed (the worker answers only at its end).
func interruptedExchange(r ExchangeRequest, done uint64) *result.Exchange {
	return &result.Exchange{Devices: r.Devices, Cells: r.Cells, Halo: r.Halo, Steps: r.Steps, Sync: r.Sync, VerifyEvery: r.VerifyEvery,
		Interrupted: true, StepsDone: done}
}
