// Command clmemprobe finds where and why OpenCL allocations fail (-4, -5, -6) on the user's own runtime: it
// reproduces the repeated clCreateBuffer loop under several context strategies, each in its own worker
// process, samples host and device memory, and reports the first failure of each and what a buffer costs.
//
// Each command lives in its own file: an options struct bound to its flags, a pure validate, and a run
// function. This file maps errors to exit codes, in one place.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/urfave/cli/v2"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.2.0-dev"

// Exit codes, documented in every command's help and in the README.
const (
	exitOK          = 0
	exitRegression  = 1 // compare: a threshold regressed; exchange: wrong cells; also any error no other code names
	exitUsage       = 2 // bad flags, arguments or input files
	exitNoOpenCL    = 3 // no OpenCL library, platform or device, or a runtime that failed at set-up
	exitOutput      = 4 // results could not be written
	exitWorkerFault = 5 // a worker crashed or hung (the result is still written)
	exitInterrupted = 130
)

// exitMeanings are the exit codes and what each means, as help texts list them.
var exitMeanings = map[int]string{
	exitOK:          "the command did what was asked",
	exitRegression:  "compare: a threshold regressed; merge: a node is an outlier; check: below expectation; exchange: wrong cells; or an error no other code names",
	exitUsage:       "bad input: a flag, an argument or an input file",
	exitNoOpenCL:    "no OpenCL: the library, a platform or a device is missing, or the runtime failed while setting up; or ulimit -v leaves the tool too little address space for itself",
	exitOutput:      "the tool could not write its results or its output (an output whose folder is missing, is a file or takes no new file is found before any work)",
	exitWorkerFault: "a worker crashed or hung, or its runtime reported a fill it did not write (the result is written)",
	exitInterrupted: "interrupted with Ctrl-C (what was written so far stays)",
}

// runExitOK and runInterrupted are what 0 and 130 mean for run (and, named as run's, in the program's help).
const (
	runExitOK      = "strategies that failed an allocation are results, not errors"
	runInterrupted = "run writes a partial result"
)

// exitCodes is the EXIT CODES section of a help text, with the codes a command can end with.
func exitCodes(codes ...int) string { return exitCodesWith(nil, codes...) }

// exitCodesOne is exitCodes for a command that says what its exit code 1 means.
func exitCodesOne(one string, codes ...int) string {
	return exitCodesWith(map[int]string{exitRegression: one}, codes...)
}

// exitCodesWith is exitCodes for a command that says what some codes mean for it: each help text speaks of
// its own command, never of another's (check's 0 is a healthy node, not run's "failures are results").
func exitCodesWith(own map[int]string, codes ...int) string {
	b := &strings.Builder{}
	b.WriteString("EXIT CODES:")
	for _, c := range codes {
		m, ok := own[c]
		if !ok {
			m = exitMeanings[c]
		}
		fmt.Fprintf(b, "\n   %-4d %s", c, m)
	}
	return b.String()
}

// withOutFolder adds to exit code 2 of a help text what it also means with --out (a folder in use or
// holding a result): only the help of a command with --out says it, as a help text names only its own
// command's flags; the program's help says whose flag it is.
func withOutFolder(help, whose string) string {
	usage := exitMeanings[exitUsage]
	return strings.Replace(help, usage, usage+", or "+whose+"--out folder in use or holding a result", 1)
}

// exitCodesHelp lists every code, for the program's own help.
var exitCodesHelp = withOutFolder(exitCodesWith(map[int]string{exitOK: exitMeanings[exitOK] + "; run: " + runExitOK,
	exitInterrupted: exitMeanings[exitInterrupted] + "; " + runInterrupted}, exitOK, exitRegression, exitUsage, exitNoOpenCL, exitOutput, exitWorkerFault, exitInterrupted), "run's ")

// exitError carries an exit code to main; err nil means "nothing more to say".
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageErr is bad input: the command line or an input file must change.
func usageErr(format string, a ...any) error {
	return &exitError{exitUsage, fmt.Errorf(format, a...)}
}

// outputErr is a failure to write results.
func outputErr(format string, a ...any) error {
	return &exitError{exitOutput, fmt.Errorf(format, a...)}
}

// exitCode is the one place that maps errors to exit codes. An error none of the cases names is 1: 4 says
// only that something could not be written, which a script may retry elsewhere, and an unknown error is
// no such thing.
func exitCode(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.Is(err, probe.ErrTraceStart):
		return exitUsage // trace: the program could not be started (not an executable this system runs)
	case errors.Is(err, probe.ErrNoOpenCL):
		return exitNoOpenCL
	case errors.Is(err, probe.ErrChildFault):
		return exitWorkerFault
	case couldNotWrite(err):
		return exitOutput
	}
	return exitRegression
}

// couldNotWrite reports whether an error is a file system that takes no more: full, over its quota or read
// only (the engine's progress page in a full TMPDIR, for one), which the commands did not wrap themselves.
func couldNotWrite(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EROFS)
}

// began is when this process started, for the run's startup time.
var began = time.Now()

// isChild reports whether this process is a child: this same binary re-executed by the engine.
func isChild(args []string) bool { return len(args) > 1 && args[1] == probe.ChildCommand }

// init keeps a child's main goroutine, which runs its job and so its allocation loop, on the process's
// first thread (an init's LockOSThread holds main there). NVIDIA's runtime creates buffers faster there
// than on a thread the process made later, as a C loop does
// (see docs/performance.md#the-create-loop-off-the-main-thread).
func init() {
	if isChild(os.Args) {
		runtime.LockOSThread()
	}
}

func main() {
	// A child never goes through the command line.
	if isChild(os.Args) {
		os.Exit(probe.RunChild(os.Stdin))
	}
	if err := probe.FitParent(); err != nil {
		fmt.Fprintln(os.Stderr, "clmemprobe:", err)
		os.Exit(exitNoOpenCL)
	}
	os.Exit(realMain(os.Args, os.Stdout, os.Stderr))
}

// realMain runs the command line and returns the exit code; every error becomes one line on stderr
// (sayError).
func realMain(args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	completeFrom(app, args, stdout)
	args, err := helpArgs(app, args)
	if err == nil {
		err = spacedSize(app, args)
	}
	if err == nil {
		err = app.RunContext(context.Background(), flagsFirst(app, args))
	}
	sayError(stderr, err)
	return exitCode(err)
}

// sayError writes err on stderr: one line starting "clmemprobe:" (an error of several things, such as each
// registered runtime's reason for giving no platform, one line each, indented under the first). An exit
// code without an error says nothing more, as the command said it (check's line, run's table), except 4:
// what could not be written is never left unsaid.
func sayError(stderr io.Writer, err error) {
	var ee *exitError
	var lined interface{ Lines() []string }
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.err == nil && ee.code == exitOutput:
		fmt.Fprintln(stderr, "clmemprobe: could not write the output (the cause was not recorded); check the disk and the output's folder")
	case errors.As(err, &ee) && ee.err == nil:
	case errors.As(err, &lined):
		lines := lined.Lines()
		fmt.Fprintln(stderr, "clmemprobe:", oneLine(lines[0]))
		for _, l := range lines[1:] {
			fmt.Fprintln(stderr, "  "+oneLine(l))
		}
	case errors.Is(err, context.Canceled):
		// Go's words for a cancelled context mean nothing to a user: the interrupt is what happened.
		fmt.Fprintln(stderr, "clmemprobe: interrupted (Ctrl-C)")
	default:
		fmt.Fprintln(stderr, "clmemprobe:", oneLine(err.Error()))
	}
}

// oneLine keeps an error message on one line of plain text, whatever a runtime or a file name put into it.
func oneLine(s string) string { return report.TerminalLine(s) }

// abortWait is how long the command has, after a second Ctrl-C killed every child, to write what it has
// (a trace, whose program is now dead, writes its result in milliseconds) before the tool exits anyway.
const abortWait = 2 * time.Second

// beginProbe is what a command that runs jobs does before them: refuse an --output it could not write (before
// any work), arm Ctrl-C (withInterrupt) and list the runtime's platforms and devices. stop releases Ctrl-C;
// it is a no-op when the error is set.
func beginProbe(ctx context.Context, output, library string, setup time.Duration, stderr io.Writer) (context.Context, func(), result.Inventory, error) {
	if err := checkOutput("--output", output); err != nil {
		return ctx, func() {}, nil, err
	}
	ctx, stop := withInterrupt(ctx, stderr)
	inv, err := probe.Describe(ctx, library, setup)
	if err != nil {
		stop()
		return ctx, func() {}, nil, err
	}
	return ctx, stop, inv, nil
}

// withInterrupt returns a context that the first Ctrl-C (or SIGTERM) cancels: the engine stops the child
// in flight (a traced program gets SIGTERM) and the command writes what it has. A second Ctrl-C kills every
// child's process group at once (a traced program that ignores SIGTERM and SIGINT too) and gives the command
// abortWait to finish writing, then exits; what was written before stays (results are written after every
// strategy).
func withInterrupt(ctx context.Context, stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	sig := make(chan os.Signal, 2)
	finished := make(chan struct{})
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		if _, ok := <-sig; !ok {
			return
		}
		cancel()
		if _, ok := <-sig; !ok {
			return
		}
		probe.Abort()
		fmt.Fprintln(stderr, "clmemprobe: interrupted again: every child is killed; the result so far is kept")
		select {
		case <-finished:
		case <-time.After(abortWait):
			os.Exit(exitInterrupted)
		}
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(finished)
		close(sig)
		cancel()
	}
}

func newApp(stdout, stderr io.Writer) *cli.App {
	cli.VersionPrinter = func(c *cli.Context) { fmt.Fprintln(c.App.Writer, "clmemprobe", c.App.Version) }
	// --version has no -v: after run and check, -v is --verbose, and one letter means one thing.
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version"}
	cli.HelpPrinter = printHelp
	return &cli.App{
		Name:    "clmemprobe",
		Usage:   "find where and why OpenCL allocations fail, strategy by strategy, on your own runtime",
		Version: version,
		Description: "clmemprobe repeats the clCreateBuffer loop that fails in your program under several context\n" +
			"strategies (one context over all devices, one per device, migrate-first, device-list, pool), each in its own\n" +
			"worker process, samples host and device memory, and reports the first failure of each: the buffer's\n" +
			"index, the call and stage that failed, the code (-4, -5, -6), and what a buffer costs.\n" +
			"clmemprobe help COMMAND (or COMMAND --help) shows a command's flags and exit codes.\n\n" + exitCodesHelp,
		Commands: []*cli.Command{devicesCommand(stdout, stderr), runCommand(stdout, stderr), reportCommand(stdout),
			compareCommand(stdout), mergeCommand(stdout, stderr), checkCommand(stdout, stderr), bundleCommand(stderr), exchangeCommand(stdout, stderr), largestCommand(stdout, stderr), remedyCommand(stdout, stderr), traceCommand(stdout, stderr), envCommand(stdout, stderr), versionCommand(stdout), completionCommand(stdout)},
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		// --variant takes KEY=VALUE lists with commas: repeatable flags are never split at commas.
		DisableSliceFlagSeparator: true,
		EnableBashCompletion:      true,
		OnUsageError: func(c *cli.Context, err error, isSubcommand bool) error {
			return usageErr("%s%s (see clmemprobe --help)", flagError(err), flagSuggestion(&cli.Command{Flags: c.App.Flags}, err))
		},
		ExitErrHandler: func(*cli.Context, error) {}, // realMain maps errors to codes
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				var names []string
				for _, cmd := range c.App.Commands {
					names = append(names, cmd.Name)
				}
				if !slices.Contains(names, "help") {
					names = append(names, "help") // a command too, though not one of the app's: "hlep" means it
				}
				return usageErr("unknown command %q%s; the commands are %s (see clmemprobe --help)", c.Args().First(),
					suggestion(c.Args().First(), names), strings.Join(names, ", "))
			}
			return cli.ShowAppHelp(c)
		},
	}
}

// commandUsageError makes flag errors of subcommands one clear line with exit code 2, with the closest flag
// when the one given does not exist; a value that does not parse says its own line.
func commandUsageError(c *cli.Context, err error, isSubcommand bool) error {
	if line, ok := setErrorLine(err); ok {
		return usageErr("%s", line) // a typed value's own line, which names its flag
	}
	return usageErr("%s: %s%s (see clmemprobe %s --help)", c.Command.Name, flagError(err), flagSuggestion(c.Command, err), c.Command.Name)
}

// versionCommand prints the version, as --version does.
func versionCommand(stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version (also: clmemprobe --version)",
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("version takes no arguments, got %q", c.Args().First())
			}
			_, err := fmt.Fprintln(stdout, "clmemprobe", version)
			if err != nil {
				return outputErr("cannot write the output: %v", err)
			}
			return nil
		},
	}
}
