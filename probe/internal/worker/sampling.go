package worker

import (
	"math"
	"os"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// Sampling while the loop runs.
const (
	// defaultSampleInterval is the least time between samples where the spec names none.
	defaultSampleInterval = 10 * time.Millisecond
	// sampleShare: sampling takes at most one sampleShare-th of the time (5%): after a sample that took t,
	// the next waits (sampleShare-1)*t at least.
	sampleShare = 20
	// mapsEvery is how often the mappings are counted while far from vm.max_map_count; mapsNear how close
	// (a mapsNear-th of the limit) makes every sample count them.
	mapsEvery = time.Second
	mapsNear  = 4
	// driftShare: a running sample whose reading saw more than one driftShare-th of the count go by (1%)
	// is dropped (see takeSample).
	driftShare = 100
)

// running is the index takeSample is given while the loop runs: the sample is placed by the counts seen.
const running = math.MaxUint64

// sampleLoop samples on a schedule: at least SampleInterval apart, and never more than one sampleShare-th
// of the time, so a slow sample (many mappings to count) thins itself out instead of slowing the loop.
func (w *worker) sampleLoop(stop <-chan struct{}) {
	interval := w.spec.SampleInterval
	if interval <= 0 {
		interval = defaultSampleInterval
	}
	wait := interval
	for {
		select {
		case <-stop:
			return
		case <-time.After(wait):
		}
		t0 := time.Now()
		w.takeSample(running)
		wait = max(interval, (sampleShare-1)*time.Since(t0))
	}
}

// takeSample reads host and device memory now and sends the sample. index is the buffer count when the loop
// is stopped; running means the loop is running, and the sample is placed at the middle of the counts seen
// before and after the reading, so the fitted cost has no bias from the buffers made while the sample was
// read.
func (w *worker) takeSample(index uint64) result.Sample {
	w.sampleMu.Lock()
	defer w.sampleMu.Unlock()
	isRunning := index == running
	if isRunning {
		index = w.tally.finished()
	}
	s := result.Sample{Index: index, Seconds: time.Since(w.loopStart).Seconds()}
	withMappings := !isRunning || w.maxMapCount == 0 || w.lastMappings*mapsNear >= w.maxMapCount || time.Since(w.mapsReadAt) >= mapsEvery
	_ = w.host.Read(&s, withMappings)
	if withMappings && s.Mappings > 0 && w.reserve != nil {
		s.Mappings += w.reserve.given // held when the loop ended, given back for the worker to report in
	}
	if withMappings {
		w.lastMappings, w.mapsReadAt = s.Mappings, time.Now()
	}
	if w.devSamp != nil {
		s.DeviceSamples, _ = w.devSamp.Read()
	}
	if isRunning {
		after := w.tally.finished()
		// A reading the scheduler held up while the loop ran on (a loaded machine, thousands of fast creates
		// meanwhile) cannot say which count its figures belong to; fitted, one such sample moved a cost by 1%.
		// It is dropped; the samples taken with the loop stopped, at fixed counts, carry the fit.
		if after-index > max(1, after/driftShare) {
			return s
		}
		s.Index = (index + after) / 2
	}
	if err := w.ev.Send(wire.Event{T: wire.EventSample, Sample: &s}); err != nil {
		// The parent is gone: nobody will read the result, so stop at once rather than run on.
		os.Exit(exitNoParent)
	}
	return s
}

// deviceProcesses lists the processes on the job's devices, where the device sampler can (NVML); nil
// otherwise. A device whose list could not be read is left out.
func (w *worker) deviceProcesses() map[int][]result.DeviceProcess {
	pl, ok := w.devSamp.(sample.ProcessLister)
	if !ok {
		return nil
	}
	procs, _ := pl.Processes()
	return procs
}

// ledgerAtStart is the resource ledger as the loop begins, from its first sample: the worker's limits and
// counts, its memory cgroup, and each device's memory in use with the processes holding it.
func (w *worker) ledgerAtStart(first result.Sample) *result.Resources {
	rs := startLedger(w.root, first, w.spec.Limits)
	if cg := w.cgroup; cg != nil {
		kills, _ := cg.OOMKills()
		rs.Cgroup = &result.Cgroup{Version: cg.Version, Path: cg.Path, OOMKillsAtStart: kills, OOMKillsAtEnd: kills,
			Memory: result.Resource{AtStart: first.CgroupBytes, AtEnd: first.CgroupBytes, Limit: cg.Limit(), LimitSource: cgroupLimitFile(cg.Version)}}
	}
	procs := w.deviceProcesses()
	for _, d := range first.DeviceSamples {
		rs.Devices = append(rs.Devices, result.DeviceLedger{Device: d.Device, UsedAtStartBytes: d.UsedBytes, ProcessesAtStart: procs[d.Device]})
	}
	return rs
}

// cgroupLimitFile names the file a cgroup's memory limit is read from, for reports.
func cgroupLimitFile(version int) string {
	if version == 1 {
		return "memory.limit_in_bytes"
	}
	return "memory.max"
}
