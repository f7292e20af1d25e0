package main

import (
	"context"
	"fmt"
	"io"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/judge"
	"github.com/urfave/cli/v2"
)

// remedyOptions are the flags of `remedy`: run's job flags, to start from the job they describe, and the
// runtime and output flags as run has them.
type remedyOptions struct {
	runtimeOptions
	outputOptions
	jobOptions
	args []string
}

func remedyCommand(stdout, stderr io.Writer) *cli.Command {
	var o remedyOptions
	return &cli.Command{
		Name:      "remedy",
		Usage:     "from a failing job, try the known changes, each in its own job, and rank them by how far each goes",
		ArgsUsage: "[RUN.json | DIR]",
		Description: `Starts from a failing job: the first that failed (or crashed, hung, wrote a wrong fill) in a run.json,
or the job run's flags describe (its first strategy, size, flag set and variant). It runs that job again as
the baseline, then each known change to it in its own job, with the same touch and budget:
   one context per device, each buffer placed on its device (device-list), pooled allocations (pool);
   buffers 4x as large and a quarter the size, over the same bytes;
   the host-pointer flags alloc-host-ptr and use-host-ptr, and the flags the platform's vendor documents;
   the runtime's documented settings (Intel NEO's small-buffer pool keys, with a control arm that sets only
   NEOReadDebugKeys=1, which alone changes behaviour; ROCm's DISABLE_DEFERRED_ALLOC), and a raised
   descriptor limit.
It ranks them: those that lift the failure (reach the budget where the baseline failed) first, then by
gain (bytes placed against the baseline's), then the smallest change. The headline names the smallest
change that lifts the failure and how far it goes, and the changes that did not help (within 10%).

` + exitCodes(exitOK, exitUsage, exitNoOpenCL, exitOutput, exitInterrupted),
		Flags:        jobFlags(&o.runtimeOptions, &o.outputOptions, &o.jobOptions, nil),
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			o.args = c.Args().Slice()
			o.jobOptions.given(c)
			return runRemedy(c.Context, o, stdout, stderr)
		},
	}
}

// validate checks the rules between remedy's flags that their values alone cannot say. It has no side
// effects.
func (o remedyOptions) validate() error {
	if len(o.args) > 1 {
		return usageErr("remedy takes one RUN.json (or run's flags), got %d arguments", len(o.args))
	}
	if err := o.quietOrVerbose(); err != nil {
		return err
	}
	return o.jobOptions.validate()
}

func runRemedy(ctx context.Context, o remedyOptions, stdout, stderr io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	var from *result.Run
	if len(o.args) == 1 {
		r, _, err := loadResultBytes(resultPath(o.args[0]))
		if err != nil {
			return err
		}
		from = r
	}
	plan, _, err := o.planned(o.runtimeOptions, nil, "")
	if err != nil {
		return err
	}
	plan.Repeat = 1 // each job runs once: --repeat is run's
	if from != nil {
		plan.Library = from.Config.OpenCLLibrary
	}
	ctx, stop, inv, err := beginProbe(ctx, o.Output, plan.Library, plan.Limits.Setup, stderr)
	defer stop()
	if err != nil {
		return err
	}
	if plan, err = placed(plan, inv, o.Platform, o.Devices.Indices); err != nil {
		return err
	}
	base, err := remedyBase(plan, inv, from)
	if err != nil {
		return err
	}
	rem := result.NewRemedy(result.NewHeader(version, plan.Command, inv, base.Platform))
	rem.Touch = base.Touch
	for _, i := range base.Devices {
		rem.Devices = append(rem.Devices, inv[base.Platform].Devices[i])
	}
	changes := probe.RemedyChanges(base, rem.Platform)
	rem.ChangesPlanned = len(changes)
	say := func(k int, what string, j result.RemedyJob) {
		if !o.Quiet {
			fmt.Fprintf(stderr, "clmemprobe: %d/%d %s: %s after %d buffers (%s)\n", k, len(changes)+1, what, j.Outcome, j.AllocationsOK, units.Bytes(j.BytesOK))
		}
	}
	var started bool
	if rem.Baseline, started, err = remedyJob(ctx, base, inv, "the baseline"); err != nil && ctx.Err() == nil {
		return err
	}
	if started {
		say(1, "the baseline", rem.Baseline)
	}
	for k, ch := range changes {
		if ctx.Err() != nil {
			break
		}
		j, started, err := remedyJob(ctx, ch.Plan, inv, ch.Name)
		if err != nil && ctx.Err() == nil {
			return err
		}
		if !started { // Ctrl-C came before its job began: a change not run is absent
			break
		}
		rem.Remedies = append(rem.Remedies, j)
		say(k+2, ch.Name, j)
	}
	rem.Interrupted = ctx.Err() != nil
	f, err := lookupFormat(o.Format.Name(), report.KindRemedy)
	if err != nil {
		return err
	}
	if err := emit(stdout, o.Output, f, judge.Remedy(rem), o.Wide); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return &exitError{exitInterrupted, nil}
	}
	return nil
}

// remedyBase is the plan of the one job remedy starts from: the run's first job that did not end well
// (else its first), or the first job of run's flags, on the devices the runtime has.
func remedyBase(p probe.Plan, inv result.Inventory, from *result.Run) (probe.Plan, error) {
	p.Strategies, p.Sizes = p.Strategies[:1], p.Sizes[:1]
	if len(p.FlagSets) > 1 {
		p.FlagSets = p.FlagSets[:1]
	}
	if len(p.Variants) > 1 {
		p.Variants = p.Variants[:1]
	}
	if from == nil {
		return p, nil
	}
	c := from.Config
	if c.Platform >= len(inv) {
		return p, usageErr("the run was on platform %d; this machine has %d", c.Platform, len(inv))
	}
	for _, d := range c.Devices {
		if d >= len(inv[c.Platform].Devices) {
			return p, usageErr("the run used device %d of platform %d; this machine's platform has %d", d, c.Platform, len(inv[c.Platform].Devices))
		}
	}
	s := &from.Jobs[0]
	for i := range from.Jobs {
		if o := from.Jobs[i].Outcome; o != result.OutcomeCompleted && o != result.OutcomeUnsupported && o != result.OutcomeStopped {
			s = &from.Jobs[i]
			break
		}
	}
	var err error
	if p, err = probe.JobPlan(p, c, s); err != nil {
		return p, usageErr("%v", err)
	}
	return p, nil
}

// remedyJob runs a plan of one job and says how it went; started is false when Ctrl-C came before the job
// began, and then the job says it was interrupted with nothing done.
func remedyJob(ctx context.Context, p probe.Plan, inv result.Inventory, change string) (j result.RemedyJob, started bool, err error) {
	run, err := probe.Run(ctx, p, inv, nil)
	if run == nil || len(run.Jobs) == 0 {
		j = result.RemedyJob{Change: change, Strategy: p.Strategies[0], SizeBytes: p.Sizes[0]}
		if ctx.Err() != nil {
			j.Outcome, j.StopCause, j.Reason = result.OutcomeStopped, result.StopInterrupted, "interrupted before it began"
		}
		return j, false, err
	}
	j = judge.RemedyJob(run)
	j.Change, j.Strategy, j.SizeBytes = change, p.Strategies[0], p.Sizes[0]
	return j, true, err
}
