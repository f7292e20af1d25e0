package main

import (
	"os"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/cl"
	"github.com/clmemprobe/clmemprobe/probe/env"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/urfave/cli/v2"
)

func envCommand() *cli.Command {
	return &cli.Command{
		Name:  "env",
		Usage: "print the environment block that goes into bug reports",
		Description: "OS and kernel, CPU, RAM and swap, overcommit and vm.max_map_count, the ICD loader's vendor files,\n" +
			"the OpenCL platforms, /dev/dri nodes and their drivers, and the environment variables that change what\n" +
			"vendor runtimes do. Works without OpenCL (the platforms are then left out).\n\n" + exitCodesHelp,
		Flags:        []cli.Flag{openclLibFlag(), &cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			lib := cl.ResolveLibraryPath(c.String("opencl-lib"))
			e := env.Collect(env.DefaultRoots, lib)
			if rt, err := probe.OpenRuntime(lib); err == nil {
				e.Platforms = rt.Platforms
			}
			if c.Bool("json") {
				return writeIndentedJSON(e)
			}
			return report.WriteEnvironment(os.Stdout, e)
		},
	}
}
