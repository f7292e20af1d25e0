package sample

import (
	"github.com/clmemprobe/clmemprobe/probe/cl"
	"github.com/clmemprobe/clmemprobe/report"
)

// DeviceSampler reads used and free memory of the probed devices.
type DeviceSampler interface {
	// Name says which source the figures come from (for the report).
	Name() string
	// Read returns one entry per device it can see, indexed as the run numbers devices.
	Read() ([]report.DeviceSample, error)
}

// DeviceSamplerFor picks the first sampler that applies to devs (indices are their numbers in the run).
// When none does it returns nil and the reasons each one gave.
func DeviceSamplerFor(devs []*cl.Device, indices []int) (DeviceSampler, string) {
	return nil, "no device sampler applies"
}
