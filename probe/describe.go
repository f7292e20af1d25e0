package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/report/result"
)

// describeAnswer is what the describing child answers.
type describeAnswer struct {
	Inventory result.Inventory `json:"inventory,omitempty"`
	Error     string           `json:"error,omitempty"`
	NoOpenCL  bool             `json:"no_opencl,omitempty"`
}

// Describe lists the platforms and devices of the OpenCL library at libPath, in a child process: a runtime
// that crashes or hangs while loading or enumerating cannot take the caller down, and its memory is not
// counted as the tool's. It takes at most setup (plus the child's start and end). Every failure wraps
// ErrNoOpenCL and says what to do.
func Describe(ctx context.Context, libPath string, setup time.Duration) (result.Inventory, error) {
	e, err := supervise(ctx, supervision{spec: childSpec{Kind: kindDescribe, Library: libPath}, limits: Limits{Setup: setup}, returnAtResult: true})
	if err != nil {
		return nil, err
	}
	var a describeAnswer
	if e.answer == nil || json.Unmarshal(e.answer, &a) != nil {
		if ctxStopped(e) {
			return nil, context.Canceled
		}
		return nil, &childFault{setup: true, msg: "the OpenCL runtime " + failedHow(e) + ", listing platforms and devices"}
	}
	if a.Error != "" {
		return nil, fmt.Errorf("%w: %s", ErrNoOpenCL, a.Error)
	}
	return a.Inventory, nil
}

// failedHow says in words how a child that gave no answer ended.
func failedHow(e *ending) string {
	switch {
	case ctxStopped(e):
		return "was interrupted"
	case e.killed == result.OutcomeHung:
		return "hung: " + e.reason
	case e.signal != "":
		how := "crashed with " + e.signal
		if e.detail != "" {
			how += " (" + e.detail + ")"
		}
		if e.printed != "" {
			how += " after printing " + strconv.Quote(e.printed)
		}
		return how
	}
	return "failed: " + e.reason
}

func ctxStopped(e *ending) bool {
	return e.killed == result.OutcomeStopped && e.reason == "interrupted"
}

// lastLine is ": " and the last line a child printed, or "".
func lastLine(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == ' ') {
		s = s[:len(s)-1]
	}
	if s == "" {
		return ""
	}
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			s = s[i+1:]
			break
		}
	}
	return ": " + s
}

// describe is the child's side: load, enumerate, answer.
func (c *child) describe() *describeAnswer {
	inv, _, err := c.inventory()
	if err != nil {
		return &describeAnswer{Error: err.Error(), NoOpenCL: true}
	}
	return &describeAnswer{Inventory: inv}
}

// inventory loads the library and lists everything, as plain data and as the binding's devices, with a hint
// of what to do when it cannot.
func (c *child) inventory() (result.Inventory, [][]*cl.Device, error) {
	if err := c.open(); err != nil {
		return nil, nil, fmt.Errorf("%v; install an OpenCL runtime and the ICD loader (Debian/Ubuntu: apt-get install ocl-icd-libopencl1 pocl-opencl-icd), or name the library with --opencl-lib or %s", err, cl.LibraryEnv)
	}
	ps, devs, err := c.lib.AllDevices()
	if errors.Is(err, cl.ErrNoPlatform) {
		return nil, nil, fmt.Errorf("%s loaded but reports no platform: no vendor runtime is registered (check /etc/OpenCL/vendors or OCL_ICD_VENDORS)", c.spec.Library)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("enumerating platforms and devices failed: %v", err)
	}
	inv := make(result.Inventory, 0, len(ps))
	for i, p := range ps {
		pl := result.PlatformListing{Platform: result.Platform{Index: p.Index, Name: p.Name, Vendor: p.Vendor, Version: p.Version},
			Extensions: p.Extensions, Devices: []result.Device{}}
		for _, d := range devs[i] {
			pl.Devices = append(pl.Devices, result.Device{Index: d.PlatformIndex, Platform: p.Index, Name: d.Name, Vendor: d.Vendor,
				Type: d.Type, Version: d.Version, DriverVersion: d.DriverVersion, GlobalMemBytes: d.GlobalMem, MaxAllocBytes: d.MaxAlloc,
				HostUnified: d.HostUnified, ComputeUnits: d.ComputeUnits, PCIBusID: d.PCIBusID, Extensions: d.Extensions})
		}
		inv = append(inv, pl)
	}
	return inv, devs, nil
}
