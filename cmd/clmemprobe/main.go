// Command clmemprobe finds where and why OpenCL allocations fail (-4, -5, -6) on the user's own runtime: it
// reproduces the repeated clCreateBuffer loop under several context strategies, each in its own worker
// process, samples host and device memory, and reports the first failure of each and what a buffer costs.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/urfave/cli/v2"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// Exit codes, documented in every command's help and in the README.
const (
	exitOK          = 0
	exitRegression  = 1 // compare: a threshold regressed; exchange: wrong cells
	exitUsage       = 2 // bad flags, arguments or input files
	exitNoOpenCL    = 3 // no OpenCL library, platform or device
	exitOutput      = 4 // results could not be written, or another failure of the tool itself
	exitWorkerFault = 5 // a worker crashed or hung (the result is still written)
	exitInterrupted = 130
)

const exitCodesHelp = `EXIT CODES:
   0    the probe ran; strategies that failed an allocation are results, not errors
   1    compare: a threshold regressed beyond the tolerance; exchange: wrong cells
   2    bad input: a flag, an argument or an input file
   3    no OpenCL: the library, a platform or a device is missing
   4    the tool could not write its results (or failed itself)
   5    a worker crashed or hung (the runtime died; the result is written)
   130  interrupted with Ctrl-C (a partial result is written)`

// exitError carries an exit code to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, a ...any) error {
	return &exitError{exitUsage, fmt.Errorf(format, a...)}
}

// exitCode is the one place that maps errors to exit codes.
func exitCode(err error) int {
	var ee *exitError
	var ue *probe.UsageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		return exitUsage
	case errors.Is(err, probe.ErrNoOpenCL):
		return exitNoOpenCL
	}
	return exitOutput
}

func main() {
	// A worker is this same binary re-executed by the parent; it never goes through the command line.
	if len(os.Args) > 1 && os.Args[1] == probe.WorkerCommand {
		os.Exit(probe.RunWorker(os.Stdin))
	}
	if len(os.Args) > 2 && os.Args[1] == probe.DescribeCommand {
		os.Exit(probe.RunDescribe(os.Args[2], os.Stdout))
	}
	os.Exit(run(os.Args))
}

func run(args []string) int {
	app := newApp()
	err := app.Run(args)
	if err != nil {
		var ee *exitError
		if !errors.As(err, &ee) || ee.err != nil {
			fmt.Fprintln(os.Stderr, "clmemprobe:", err)
		}
	}
	return exitCode(err)
}

func newApp() *cli.App {
	cli.VersionPrinter = func(c *cli.Context) { fmt.Println("clmemprobe", c.App.Version) }
	return &cli.App{
		Name:    "clmemprobe",
		Usage:   "find where and why OpenCL allocations fail, strategy by strategy, on your own runtime",
		Version: version,
		Description: "clmemprobe repeats the clCreateBuffer loop that fails in your program under several context\n" +
			"strategies (one context over all devices, one per device, migrate-first, device-list), each in its own\n" +
			"worker process, samples host and device memory, and reports the first failure of each: the buffer's\n" +
			"index, the call and stage that failed, the code (-4, -5, -6), and what a buffer costs.\n\n" + exitCodesHelp,
		Commands:             []*cli.Command{devicesCommand(), runCommand(), reportCommand(), compareCommand(), exchangeCommand(), envCommand()},
		HideHelpCommand:      true,
		EnableBashCompletion: false,
		OnUsageError: func(c *cli.Context, err error, isSubcommand bool) error {
			return usageErr("%v (see clmemprobe --help)", err)
		},
		ExitErrHandler: func(*cli.Context, error) {}, // main maps errors to codes
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("unknown command %q (commands: devices, run, report, compare, exchange, env; see clmemprobe --help)", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
	}
}

// openclLibFlag is shared by every command that talks to OpenCL.
func openclLibFlag() cli.Flag {
	return &cli.StringFlag{Name: "opencl-lib", Usage: "OpenCL library to load (default: $CLMEMPROBE_OPENCL_LIB, else libOpenCL.so.1, the ICD loader)"}
}

// commandUsageError makes flag errors of subcommands one clear line with exit code 2.
func commandUsageError(c *cli.Context, err error, isSubcommand bool) error {
	return usageErr("%s: %v (see clmemprobe %s --help)", c.Command.Name, err, c.Command.Name)
}

// flagsAfterArgs explains the one parsing rule users trip on: flags go before positional arguments.
func flagsAfterArgs(c *cli.Context, usage string) error {
	for _, a := range c.Args().Slice()[1:] {
		if strings.HasPrefix(a, "-") {
			return usageErr("%s: flags go before the file arguments, as in: clmemprobe %s", c.Command.Name, usage)
		}
	}
	return nil
}

// writeIndentedJSON prints v as indented JSON on stdout.
func writeIndentedJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
