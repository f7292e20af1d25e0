package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/judge"
	"github.com/urfave/cli/v2"
)

// checkOptions are the flags of `check`.
type checkOptions struct {
	runtimeOptions           // --opencl-lib
	outputOptions            // -v: each job's comparison on stderr
	Expect            string // the expectations file, or a run.json
	Prom              string // the Prometheus textfile to replace
	TimeLimit         durationValue
	Tolerance         percentValue
	Record            bool
	args, commandLine []string
}

// checkMargin is kept back from the time limit for starting up, judging and writing: the command ends within
// its time limit, not at it.
const checkMargin = 2 * time.Second

func checkCommand(stdout, stderr io.Writer) *cli.Command {
	var o checkOptions
	return &cli.Command{
		Name:      "check",
		Usage:     "a health check for schedulers: a short probe held to recorded expectations, bounded in time",
		ArgsUsage: "(with --record: RUN.json)",
		Description: `clmemprobe check --expect FILE runs the jobs FILE names (strategies, sizes, touch mode and budget, on the
same devices) and holds each to the threshold it reached when it was recorded: healthy when it reaches at
least that less --tolerance, or its whole budget; below expectation when it reaches less, crashes, hangs,
or cannot finish within --time-limit. FILE is an expectations file, a run.json or a run's folder; make the
small file with
  clmemprobe check --record --output expect.json RUN.json
(without --output it goes to stdout) from a run short enough to fit the time limit (a few hundred buffers
with --touch fill) that every job ended by itself. --record and --expect take a baseline by one rule: an
interrupted run, one with a job the host guard, Ctrl-C or --timeout stopped (its count is where the stop
came, not the runtime's threshold), or one with a job that crashed or hung (check fails every crash and
hang, so such a baseline would fail every check) is refused with exit 2 before anything runs, and so is an
expectations file holding such a job. A job of the check's own run that crashes, hangs or is stopped is
below expectation (exit 1): a node that fails so is unhealthy, not bad input. The whole check ends within
--time-limit (default 50s, under the 60 s Slurm gives a HealthCheckProgram; --budget is its old name,
still taken) and prints one line. A different device model than the recorded one is bad input; a
different driver is noted, not judged.

` + exitCodesWith(map[int]string{exitOK: "healthy: every job reached its recorded threshold less --tolerance, or its whole budget (with --record: the expectations are written)",
			exitRegression:  "below expectation: a job reached less than recorded, crashed, hung or did not finish within --time-limit",
			exitUsage:       "bad input: a flag, an argument, or a FILE that is no baseline (an interrupted run, a job stopped, crashed or hung) or was recorded on another device model",
			exitInterrupted: "interrupted with Ctrl-C: nothing is judged (once the jobs began, one line says how many of them ran)"},
			exitOK, exitRegression, exitUsage, exitNoOpenCL, exitOutput, exitInterrupted),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "expect", Destination: &o.Expect, Usage: "the expectations file (or a run.json) to hold this node to"},
			durationFlag(&o.TimeLimit, "time-limit", "50s", "the most time the whole check may take (--budget is its old name)", "budget"),
			toleranceFlag(&o.Tolerance, "how far below the expected threshold a job may end and still be healthy"),
			&cli.BoolFlag{Name: "record", Destination: &o.Record, Usage: "write the expectations of RUN.json (or a run's folder) to --output, or stdout, instead of checking; a run that --expect would refuse is refused (exit 2): an interrupted run, one with a job the host guard, Ctrl-C or --timeout stopped (its thresholds are not the runtime's), or one with a job that crashed or hung (check fails every crash and hang)"},
			o.outputFlag("with --record: the expectations file to write (default: stdout)"),
			&cli.StringFlag{Name: "prom", Destination: &o.Prom, Usage: "also write the check's run as Prometheus metrics to this file, replaced atomically"},
			formatFlag(&o.Format, "table", "table (one line) or json", ofKind(report.KindHealth)),
			o.libraryFlag(),
			o.quietFlag(),
			o.verboseFlag("also print each job's comparison on stderr, one line each: buffers reached and outcome against the recorded ones"),
		},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			o.args, o.commandLine = c.Args().Slice(), os.Args
			return runCheck(c.Context, o, stdout, stderr)
		},
	}
}

// validate checks the rules between check's flags and its arguments. It has no side effects.
func (o checkOptions) validate() error {
	if err := o.quietOrVerbose(); err != nil {
		return err
	}
	if o.Record {
		if len(o.args) != 1 || o.Expect != "" {
			return usageErr("check --record needs one RUN.json (or a run's folder) argument, and no --expect (see clmemprobe check --help)")
		}
		return nil
	}
	if o.Expect == "" {
		return usageErr("check needs --expect FILE (make one with clmemprobe check --record --output FILE RUN.json)")
	}
	if len(o.args) > 0 {
		return usageErr("check takes no arguments, got %q (the expectations go in --expect)", o.args[0])
	}
	if o.Output != "" {
		return usageErr("--output is for --record; the check prints one line (and --prom writes metrics)")
	}
	if o.TimeLimit.D < 5*time.Second {
		return usageErr("--time-limit %s is too short to load a runtime and run a job; give at least 5s", o.TimeLimit.Text)
	}
	if _, err := defaultHostReserve(); err != nil {
		return usageErr("%v", err)
	}
	return nil
}

// recordExpectations writes what check holds a node to, from a recorded run, to --output or stdout.
func recordExpectations(o checkOptions, stdout, stderr io.Writer) error {
	runFile := resultPath(o.args[0])
	if err := checkOutput("--output", o.Output, runFile); err != nil {
		return err
	}
	r, err := loadResult(runFile)
	if err != nil {
		return err
	}
	exp := result.ExpectationsFrom(r)
	if err := comparison.Baseline(exp); err != nil {
		return notABaseline("check --record: ", runFile, err)
	}
	// Said once the expectations are written: a failure says one line, and only that.
	note := func() {
		if n := budgetOnly(r); n != "" && !o.Quiet {
			fmt.Fprintln(stderr, "clmemprobe:", n)
		}
	}
	if o.Output == "" {
		if err := render(stdout, "json", exp); err != nil {
			return err
		}
		note()
		return nil
	}
	if err := renderFile(o.Output, "json", exp); err != nil {
		return err
	}
	if !o.Quiet {
		fmt.Fprintf(stderr, "clmemprobe: wrote %s\n", o.Output)
	}
	note()
	return nil
}

// budgetOnly says what expectations recorded from jobs that never failed hold: that the budget is reached
// again, not the runtime's own limit; "" when every job failed within it.
func budgetOnly(r *result.Run) string {
	n := 0
	for i := range r.Jobs {
		if r.Jobs[i].Outcome == result.OutcomeCompleted {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d jobs reached the budget of %d buffers without a failure: for them the check tests only that the budget is reached again; record a run with a larger --max-allocs (or --max-bytes) to hold them to where the runtime fails",
		n, len(r.Jobs), r.Config.MaxAllocs)
}

// notABaseline is bad input for a run or expectations that comparison.Baseline refuses: which file, what is
// wrong with it, and what to record instead. who is the flag or command that was given the file.
func notABaseline(who, file string, err error) error {
	var ref *comparison.Refusal
	if !errors.As(err, &ref) {
		return usageErr("%s%s: %v", who, file, err)
	}
	advice := map[comparison.BaselineFault]string{
		comparison.BaselineInterrupted: "record a run that ran to its end",
		comparison.BaselineStopped:     "record a run in which every job ends by itself (fewer --max-allocs)",
		comparison.BaselineBroken:      "record a run without them (other --strategies, or the node once fixed)",
	}[ref.Fault]
	return usageErr("%s%s is not a baseline: %v; %s", who, file, err, advice)
}

func runCheck(ctx context.Context, o checkOptions, stdout, stderr io.Writer) error {
	start := time.Now()
	if err := o.validate(); err != nil {
		return err
	}
	if o.Record {
		return recordExpectations(o, stdout, stderr)
	}
	timeLimit := o.TimeLimit.D
	if err := checkOutput("--prom", o.Prom, resultPath(o.Expect)); err != nil {
		return err
	}
	// A check ends within its time limit: a FIFO or a terminal could hold it up for ever. A run's folder
	// stands for its run.json, as everywhere.
	expect := resultPath(o.Expect)
	if fi, err := os.Stat(expect); err == nil && !fi.Mode().IsRegular() {
		return usageErr("--expect %s is not a plain file; give the expectations file (check --record writes one)", o.Expect)
	}
	exp, err := result.LoadExpectations(expect)
	if errors.Is(err, os.ErrNotExist) {
		return usageErr("--expect %s: no such file; give the expectations file check --record wrote (clmemprobe check --record --output expect.json RUN.json records one)", o.Expect)
	}
	if err != nil {
		return usageErr("--expect: %v", err)
	}
	// The rule check --record applies: a file that check --record would have refused is no baseline either.
	if err := comparison.Baseline(exp); err != nil {
		return notABaseline("--expect ", o.Expect, err)
	}
	var recorded float64
	for _, j := range exp.Jobs {
		recorded += j.Seconds
	}
	if time.Duration(recorded*float64(time.Second)) > timeLimit/2 {
		return usageErr("the recorded jobs took %.1f s, more than half of --time-limit %s: record a shorter run (fewer --max-allocs) or give a longer time limit", recorded, timeLimit)
	}
	// The time limit is a deadline for the whole command: listing devices, every job, judging, writing.
	deadline := start.Add(timeLimit - checkMargin)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	ctx, stop := withInterrupt(ctx, stderr)
	defer stop()
	inv, err := probe.Describe(ctx, o.library(), time.Until(deadline))
	if err != nil {
		return err
	}
	plan, err := checkPlan(o, exp, inv, time.Until(deadline))
	if err != nil {
		return err
	}
	run, runErr := probe.Run(ctx, plan, inv, nil)
	if runErr != nil && !errors.Is(runErr, context.Canceled) && !errors.Is(runErr, context.DeadlineExceeded) {
		return runErr
	}
	if errors.Is(ctx.Err(), context.Canceled) { // Ctrl-C, not the time limit (DeadlineExceeded)
		return interruptedCheck(stdout, o.Format.Name(), run, len(exp.Jobs))
	}
	judged := judge.Run(run)
	health := judge.Check(exp, run, o.Tolerance.Fraction, timeLimit, time.Since(start))
	var writeErr error
	if o.Prom != "" {
		writeErr = renderFile(o.Prom, "prom", judged)
	}
	if err := renderWide(stdout, o.Format.Name(), health, false); err != nil {
		return err
	}
	if o.Verbose {
		// After the line: stdout, which a scheduler reads, stays one line, whatever stderr gets.
		_ = report.WriteHealthJobs(stderr, health)
	}
	switch {
	case writeErr != nil:
		return writeErr
	case !health.Healthy:
		return &exitError{exitRegression, nil}
	}
	return nil
}

// interruptedCheck is a check Ctrl-C stopped once its jobs began: it judges nothing (a job cut short and
// jobs never run say nothing of the node), says in the check's format how far it got, and exits 130.
func interruptedCheck(stdout io.Writer, format string, run *result.Run, planned int) error {
	if err := renderWide(stdout, format, judge.CheckInterrupted(run, planned), false); err != nil {
		return err
	}
	return &exitError{exitInterrupted, nil}
}

// checkPlan is the plan of the recorded jobs on this node's matching platform and devices, each job given
// an equal share of the time left.
func checkPlan(o checkOptions, exp *result.Expectations, inv result.Inventory, left time.Duration) (probe.Plan, error) {
	p, err := probe.ExpectedPlan(exp, left)
	if err != nil {
		return p, usageErr("%v", err)
	}
	p.Library, p.Command, p.ToolVersion = o.library(), result.RedactArgs(o.commandLine), version
	p.HostReserve, _ = defaultHostReserve() // validated
	// A platform or a device the node had when it was recorded and lacks now is a node without its GPU:
	// no OpenCL for what it is there for (exit 3), which a scheduler drains like any failed check.
	if p.Platform, err = selectPlatform(inv, exp.Platform); err != nil {
		return p, &exitError{exitNoOpenCL, fmt.Errorf("the expectations name platform %q, which this node lacks: %v", exp.Platform, err)}
	}
	if p.Devices, err = selectDevices(inv, p.Platform, exp.Devices); err != nil {
		return p, &exitError{exitNoOpenCL, fmt.Errorf("the expectations name devices %v, which this node lacks: %v", exp.Devices, err)}
	}
	var devs []result.Device
	for _, i := range p.Devices {
		devs = append(devs, inv[p.Platform].Devices[i])
	}
	if model := result.DeviceModel(devs); model != exp.DeviceModel {
		return p, usageErr("this node has %s where the expectations were recorded on %s: give this node its own expectations", model, exp.DeviceModel)
	}
	return p, nil
}
