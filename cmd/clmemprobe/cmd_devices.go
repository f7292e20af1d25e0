package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/cl"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/urfave/cli/v2"
)

type devicesOptions struct {
	lib  string
	json bool
}

func devicesCommand() *cli.Command {
	return &cli.Command{
		Name:         "devices",
		Usage:        "list every OpenCL platform and device with the figures the probe uses",
		Description:  "Lists platforms and devices: name, vendor, type, OpenCL and driver version, global memory, maximum\nallocation, host-unified memory, PCI bus id. Device numbers are what run --devices takes.\n\n" + exitCodesHelp,
		Flags:        []cli.Flag{openclLibFlag(), &cli.BoolFlag{Name: "json", Usage: "print JSON instead of a table"}},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("devices takes no arguments, got %q", c.Args().First())
			}
			return runDevices(devicesOptions{lib: c.String("opencl-lib"), json: c.Bool("json")})
		},
	}
}

// platformListing is the JSON shape of `devices --json`.
type platformListing struct {
	report.Platform
	Extensions []string        `json:"extensions"`
	Devices    []report.Device `json:"devices"`
}

func runDevices(o devicesOptions) error {
	rt, err := probe.OpenRuntime(cl.ResolveLibraryPath(o.lib))
	if err != nil {
		return err
	}
	var listing []platformListing
	for i, p := range rt.Platforms {
		listing = append(listing, platformListing{Platform: p, Extensions: rt.PlatformExtensions[i], Devices: append([]report.Device{}, rt.Devices[i]...)})
	}
	if o.json {
		return writeIndentedJSON(listing)
	}
	for _, p := range listing {
		fmt.Printf("Platform %d: %s (%s), %s\n", p.Index, p.Name, p.Vendor, p.Version)
		t := report.NewTable(os.Stdout, false)
		t.Header("Device", "Name", "Type", "Global memory", "Max alloc", "Unified", "Version", "Driver", "PCI")
		for _, d := range p.Devices {
			_ = t.Append([]string{fmt.Sprint(d.Index), d.Name, d.Type, report.FormatBytes(d.GlobalMemBytes),
				report.FormatBytes(d.MaxAllocBytes), report.YesNo(d.HostUnified), shortVersion(d.Version), d.DriverVersion, report.OrDash(d.PCIBusID)})
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	return nil
}

// shortVersion keeps "OpenCL 3.0" of a device version string that runtimes pad with build details.
func shortVersion(v string) string {
	f := strings.Fields(v)
	if len(f) >= 2 {
		return f[0] + " " + f[1]
	}
	return v
}
