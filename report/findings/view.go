package findings

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/clmemprobe/clmemprobe/report/result"
)

// Thresholds the findings judge by. They are ratios of what was measured, never vendor names.
const (
	fullFraction    = 0.90                  // a device at or above this fraction of its global memory is full
	farFraction     = 0.50                  // below this it is far from full
	overcommitted   = 1.05                  // given more than this fraction of its memory, the runtime does not enforce it
	hostLowFraction = 0.10                  // system available memory below this fraction of RAM has run out
	mapFraction     = 0.90                  // of vm.max_map_count
	addressFraction = 0.90                  // of the address-space limit
	cheapFraction   = result.PlacedFraction // a cost per buffer under what means placed is no cost
	contextRatio    = 2.0                   // per-device reaching this many times the buffers of a shared context
	sameCount       = 0.02                  // counts within this fraction of each other are the same count
)

// view is one strategy with what the findings derive from it: the fit, the failing device and how full it
// was, by measurement where there is one.
type view struct {
	s   *result.JobResult
	run *result.Run
	fit *result.Fit
	// limit is what ended the strategy, once the limits of its size are classified.
	limit limitFinding

	// failedWhat names what failed, where a limit says "when ... failed": "buffer #N" (the view's failure),
	// unless set (a traced program's command on a buffer the job's number does not stand for).
	failedWhat string
	// givenUnknown, where set, says why the bytes given to the failing device before the failure are not
	// known (a traced command on an older buffer): the rules that read them do not apply.
	givenUnknown string
	failDev      int    // the device the failed buffer was meant for; -1 when none
	global       uint64 // that device's global memory, 0 when unknown
	sampled      bool   // a device sampler applied
	used         uint64 // that device's sampled use at the end, when sampled
	usedKnown    bool
	given        uint64 // bytes of the buffers meant for that device before the failure
	hostUnified  bool   // every device's memory is host memory
	availAtEnd   uint64 // system available memory at the end
	vmsAtEnd     uint64
	ram          uint64
}

func newView(r *result.Run, s *result.JobResult) *view {
	v := &view{s: s, run: r, failDev: -1, fit: s.JudgedFit()}
	if r.Environment != nil {
		v.ram = r.Environment.HostMemBytes
	}
	v.sampled = s.DeviceSampler != "" && !strings.HasPrefix(s.DeviceSampler, "not available")
	v.hostUnified = len(r.Devices) > 0
	for _, d := range r.Devices {
		v.hostUnified = v.hostUnified && d.HostUnified
	}
	if n := len(s.Samples); n > 0 {
		last := s.Samples[n-1]
		v.availAtEnd, v.vmsAtEnd = last.AvailBytes, last.VMSBytes
	}
	if f := s.FirstFailure; f != nil {
		if f.HostAvail > 0 {
			v.availAtEnd = f.HostAvail
		}
		if f.Stage != result.StageSetup {
			v.failDev = f.Device
		}
	}
	if v.failDev < 0 {
		return v
	}
	v.global = result.GlobalOf(r, s, v.failDev)
	if n := len(s.Samples); n > 0 && v.sampled {
		for _, d := range s.Samples[n-1].DeviceSamples {
			if d.Device == v.failDev {
				v.used, v.usedKnown = d.UsedBytes, true
			}
		}
	}
	// Buffers i < index with i mod n == pos were meant for the failing device.
	pos := -1
	for i, d := range s.Devices {
		if d == v.failDev {
			pos = i
		}
	}
	if pos >= 0 && len(s.Devices) > 0 {
		n := uint64(len(s.Devices))
		idx := s.FirstFailure.Index
		count := idx / n
		if idx%n > uint64(pos) {
			count++
		}
		v.given = count * s.SizeBytes
	}
	return v
}

// failed is what failed, for "when ... failed".
func (v *view) failed() string {
	if v.failedWhat != "" {
		return v.failedWhat
	}
	return fmt.Sprintf("buffer #%d", v.s.FirstFailure.Index)
}

// fill is used (or given) bytes as a fraction of the failing device's memory.
func (v *view) fill(bytes uint64) float64 {
	if v.global == 0 {
		return 0
	}
	return float64(bytes) / float64(v.global)
}

// deviceCost sums the fitted device memory per buffer over the devices, and says whether there is any.
func (v *view) deviceCost() (float64, bool) {
	if !v.fit.OK || len(v.s.DeviceBytesPerBuffer) == 0 {
		return 0, false
	}
	var sum float64
	for _, b := range v.s.DeviceBytesPerBuffer {
		sum += b
	}
	return sum, true
}

// outsideRSS is host memory per buffer that the system lost, or committed, while the process's RSS did not
// grow with it: memory a driver or a runtime holds outside the process (shared memory, pinned staging), or
// promised and not yet touched. signal names which measurement shows it. System available memory is the
// better witness of memory taken; Committed_AS also sees shared memory that MemAvailable under-counts.
func (v *view) outsideRSS() (bytes float64, signal string, ok bool) {
	if !v.fit.OK {
		return 0, "", false
	}
	// The difference rests on a machine-wide slope: it must clear the threshold by that slope's noise (and
	// RSS's), or it is the machine, not the buffers.
	threshold := max(cheapFraction*float64(v.s.SizeBytes), 4096)
	noise := v.s.Noise()
	if sys := v.s.SystemBytesPerBuffer; sys != nil && *sys-v.s.HostBytesPerBuffer > threshold+noise.System+noise.Host {
		return *sys - v.s.HostBytesPerBuffer, "system available memory", true
	}
	if c := v.s.CommittedBytesPerBuffer; c != nil && *c-v.s.HostBytesPerBuffer > threshold+noise.Committed+noise.Host {
		return *c - v.s.HostBytesPerBuffer, "the system's committed memory (Committed_AS)", true
	}
	return 0, "", false
}

// deviceIndex names a device for evidence keys.
func deviceIndex(d int) string { return strconv.Itoa(d) }

func pct(f float64) float64 { return math.Round(1000*f) / 10 }
