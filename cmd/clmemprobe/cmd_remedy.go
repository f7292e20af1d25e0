package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/judge"
	"github.com/urfave/cli/v2"
)

func remedyCommand(stdout, stderr io.Writer) *cli.Command {
	var o runOptions
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
		Flags:        remedyFlags(&o),
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			o.args, o.commandLine = c.Args().Slice(), os.Args
			o.Variants, o.Presets = c.StringSlice("variant"), c.StringSlice("variant-preset")
			return runRemedy(c.Context, o, stdout, stderr)
		},
	}
}

// runOnly are run's flags that remedy leaves out: its own files, a dry run, repeats and a traced program's
// jobs are not a remedy's.
var runOnly = map[string]bool{"out": true, "prom": true, "force": true, "dry-run": true, "repeat": true, "like": true, "wide": true}

// remedyFlags are run's flags but runOnly, bound to o.
func remedyFlags(o *runOptions) []cli.Flag {
	var out []cli.Flag
	for _, f := range runFlags(o) {
		if !runOnly[f.Names()[0]] {
			out = append(out, f)
		}
	}
	return out
}

func runRemedy(ctx context.Context, o runOptions, stdout, stderr io.Writer) error {
	var from *result.Run
	if len(o.args) > 1 {
		return usageErr("remedy takes one RUN.json (or run's flags), got %d arguments", len(o.args))
	}
	if len(o.args) == 1 {
		r, _, err := loadResultBytes(resultPath(o.args[0]))
		if err != nil {
			return err
		}
		from, o.args = r, nil
	}
	o.Repeat = "1" // run's flag, not remedy's: each job runs once
	req, err := o.validate()
	if err != nil {
		return err
	}
	if from != nil {
		req.plan.Library = from.Config.OpenCLLibrary
	}
	ctx, stop, inv, err := beginProbe(ctx, req.output, req.plan.Library, req.plan.Limits.Setup, stderr)
	defer stop()
	if err != nil {
		return err
	}
	base, err := remedyBase(req, inv, from)
	if err != nil {
		return err
	}
	rem := result.NewRemedy(result.NewHeader(version, result.RedactArgs(o.commandLine), inv, base.Platform))
	rem.Touch = base.Touch
	for _, i := range base.Devices {
		rem.Devices = append(rem.Devices, inv[base.Platform].Devices[i])
	}
	changes := probe.RemedyChanges(base, rem.Platform)
	rem.ChangesPlanned = len(changes)
	say := func(k int, what string, j result.RemedyJob) {
		if !req.quiet {
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
	f, err := lookupFormat(req.format, report.KindRemedy)
	if err != nil {
		return err
	}
	if err := emit(stdout, req.output, f, judge.Remedy(rem), req.wide); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return &exitError{exitInterrupted, nil}
	}
	return nil
}

// remedyBase is the plan of the one job remedy starts from: the run's first job that did not end well
// (else its first), or the first job of run's flags, on the devices the runtime has.
func remedyBase(req *runRequest, inv result.Inventory, from *result.Run) (probe.Plan, error) {
	p, err := req.planFor(inv)
	if err != nil {
		return p, err
	}
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
