// Package probe is clmemprobe's engine: a plan runs each strategy in a worker process that repeats the
// allocation loop; the parent supervises it (watchdog, timeout, host guard, interrupt), collects its events
// and builds the result. The engine never prints: it reports through an Observer.
package probe

import (
	"fmt"
	"strings"
	"time"
)

// Strategy is how the buffers of the loop are laid out over contexts.
type Strategy string

// The strategies. Buffer i is always meant for device i mod n of the selected devices.
const (
	Shared       Strategy = "shared"        // one context over all devices
	PerDevice    Strategy = "per-device"    // one context per device
	MigrateFirst Strategy = "migrate-first" // shared context, each buffer migrated to its device at once
	DeviceList   Strategy = "device-list"   // shared context, buffer placed on its device by CL_MEM_DEVICE_HANDLE_LIST_KHR
)

// AllStrategies lists every strategy in the order they run.
var AllStrategies = []Strategy{Shared, PerDevice, MigrateFirst, DeviceList}

// DefaultStrategies are run when none is asked for.
var DefaultStrategies = []Strategy{Shared, PerDevice, MigrateFirst}

// Touch is what the loop does to each buffer after creating it.
type Touch string

// The touch modes.
const (
	TouchNone   Touch = "none"   // create only: exactly the user's loop
	TouchFill   Touch = "fill"   // clEnqueueFillBuffer on the buffer's device
	TouchKernel Touch = "kernel" // a kernel writes every byte on the buffer's device
)

// ParseStrategies reads a comma-separated list of strategies ("all" for every one).
func ParseStrategies(s string) ([]Strategy, error) {
	if strings.EqualFold(strings.TrimSpace(s), "all") {
		return AllStrategies, nil
	}
	seen := map[Strategy]bool{}
	var out []Strategy
	for _, part := range strings.Split(s, ",") {
		st := Strategy(strings.TrimSpace(strings.ToLower(part)))
		if !st.valid() {
			return nil, fmt.Errorf("unknown strategy %q (choose from %s, or all)", part, joinStrategies(AllStrategies))
		}
		if seen[st] {
			return nil, fmt.Errorf("strategy %q is listed twice", st)
		}
		seen[st] = true
		out = append(out, st)
	}
	return out, nil
}

func (s Strategy) valid() bool {
	for _, k := range AllStrategies {
		if s == k {
			return true
		}
	}
	return false
}

func joinStrategies(ss []Strategy) string {
	var names []string
	for _, s := range ss {
		names = append(names, string(s))
	}
	return strings.Join(names, ", ")
}

// ParseTouch reads a touch mode.
func ParseTouch(s string) (Touch, error) {
	switch t := Touch(strings.ToLower(strings.TrimSpace(s))); t {
	case TouchNone, TouchFill, TouchKernel:
		return t, nil
	}
	return "", fmt.Errorf("unknown touch mode %q (choose from none, fill, kernel)", s)
}

// Plan is a validated request for a run. Device indices are positions within the chosen platform.
type Plan struct {
	Library     string
	Platform    int
	Devices     []int
	Strategies  []Strategy
	Sizes       []uint64 // one sweep step per size; usually one
	MaxAllocs   uint64
	MaxBytes    uint64 // 0: no byte budget
	Touch       Touch
	Timeout     time.Duration // per strategy
	HangTimeout time.Duration // no progress for this long: hung
	HostReserve uint64        // stop before system available memory drops below this
	// SampleInterval is the least time between samples; the worker also keeps its sampling under about
	// 5% of the loop's time, so it samples less often when a sample is slow.
	SampleInterval time.Duration
	OutDir         string
	WorkDir        string // where the progress cell lives; "" is the system temp folder
	Command        []string
}

// Budget returns how many allocations a strategy makes at a given buffer size: the smaller of --max-allocs
// and --max-bytes divided by the size.
func (p *Plan) Budget(size uint64) uint64 {
	n := p.MaxAllocs
	if p.MaxBytes > 0 && size > 0 {
		if b := p.MaxBytes / size; b < n {
			n = b
		}
	}
	return n
}
