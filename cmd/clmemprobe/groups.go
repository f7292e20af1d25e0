package main

// Shared flag groups (restic's embedded option groups): the flags several commands take are one struct,
// embedded in each such command's options, with one constructor per flag, so a flag means, parses and
// reads the same wherever it is; a command places the flags it takes where its help lists them.

import (
	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/urfave/cli/v2"
)

// runtimeOptions are the flags of the commands that load a runtime: which library, platform and devices,
// and how long setting the runtime up may take.
type runtimeOptions struct {
	OpenCLLib string // as given; library() is the library it names
	Platform  string // an index or a part of its name: the runtime says which platforms there are
	Devices   deviceList
	Setup     durationValue
}

// library is the OpenCL library to load: --opencl-lib, else the default.
func (r *runtimeOptions) library() string { return probe.LibraryPath(r.OpenCLLib) }

func (r *runtimeOptions) libraryFlag() cli.Flag {
	return &cli.StringFlag{Name: "opencl-lib", Destination: &r.OpenCLLib,
		Usage: "OpenCL library to load (default: $CLMEMPROBE_OPENCL_LIB, else libOpenCL.so.1, the ICD loader)"}
}

func (r *runtimeOptions) platformFlag() cli.Flag {
	return &cli.StringFlag{Name: "platform", Destination: &r.Platform, Usage: "platform index or part of its name (default: the first platform with devices)"}
}

// devicesFlag is --devices, in the words of the command's help.
func (r *runtimeOptions) devicesFlag(usage string) cli.Flag {
	return valueFlag("devices", &r.Devices, "all", usage)
}

func (r *runtimeOptions) setupFlag() cli.Flag {
	return durationFlag(&r.Setup, "setup-timeout", "120s", "time limit for loading the runtime, listing devices, creating contexts and building kernels")
}

// outputOptions are the flags of the commands that render a document: its format, where it goes, and how
// much is said.
type outputOptions struct {
	Format  formatValue
	Output  string // the file the document goes to instead of stdout; empty: stdout
	Wide    bool
	Quiet   bool
	Verbose bool
}

// outputFlag is -o: what would go to stdout goes to the file, written new in its folder, synced and renamed
// into place (emit, safefile), so a link there is replaced, not followed.
func (o *outputOptions) outputFlag(usage string) cli.Flag {
	return &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Destination: &o.Output, Usage: usage}
}

// wideFlag is --wide of every command whose table leaves out columns on a narrow terminal.
func (o *outputOptions) wideFlag() cli.Flag {
	return &cli.BoolFlag{Name: "wide", Destination: &o.Wide, Usage: "show every column of a table, however wide the terminal"}
}

// quietFlag is -q of the commands that say what they did on stderr: with it they say nothing there but
// errors and warnings.
func (o *outputOptions) quietFlag() cli.Flag {
	return &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Destination: &o.Quiet,
		Usage: "nothing on stderr but errors and warnings: no progress line, no \"wrote ...\" line"}
}

// verboseFlag is -v, in the words of the command's help.
func (o *outputOptions) verboseFlag(usage string) cli.Flag {
	return &cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Destination: &o.Verbose, Usage: usage}
}

// quietOrVerbose refuses the two together.
func (o *outputOptions) quietOrVerbose() error {
	if o.Quiet && o.Verbose {
		return usageErr("--quiet and --verbose contradict each other: give one")
	}
	return nil
}
