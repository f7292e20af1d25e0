package table

import (
	"fmt"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// TraceDeviceLine is the devices' memory in one sentence, which the renderers give a trace without a
// failure (at a failure the verdict says it): at the first failure (the sample that stands for it), else at
// the last sample with device figures, per device measured, the program's own share where the
// sampler told it; or why device memory was not measured.
func TraceDeviceLine(t *result.Trace) string {
	if !t.DeviceMeasured() {
		return "Device memory not measured: " + t.DeviceWhyNot() + "."
	}
	at, when := t.FailureSample(), "at the failure"
	if at < 0 {
		when = "at the last sample"
		for i, s := range t.Samples {
			if len(s.DeviceSamples) > 0 {
				at = i
			}
		}
	}
	if at < 0 {
		return "Device memory: no sample has device figures (" + string(t.DeviceSampler) + ")."
	}
	s := &t.Samples[at]
	parts := make([]string, 0, len(s.DeviceSamples))
	for _, d := range s.DeviceSamples {
		part := fmt.Sprintf("device %d %s used", d.Device, units.Bytes(d.UsedBytes))
		if d.Device >= 0 && d.Device < len(t.Devices) && t.Devices[d.Device].GlobalMemBytes > 0 {
			part += " of " + units.Bytes(t.Devices[d.Device].GlobalMemBytes)
		}
		if own, ok := s.ProgramBytes(d.Device); ok {
			part += ", the program's own " + units.Bytes(own)
		}
		parts = append(parts, part)
	}
	return fmt.Sprintf("Device memory %s (after %d allocation calls, %.2f s): %s; read by %s.", when, s.Index, s.Seconds, strings.Join(parts, "; "), t.DeviceSampler)
}
