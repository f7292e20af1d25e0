package timeline

import (
	"fmt"
	"strconv"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// Run is the timeline of a run. Process 1, the machine, has the counters of the memory every job's samples
// read beside its worker: the system's available memory, the memory cgroup's usage, each device's used
// memory. Each job is a process of its own (job i is process 1+i, named by its strategy, buffer size,
// variant and flags and its worker's process id): its slice on thread 1, its worker's RSS and the buffers
// and bytes it had allocated (sample index times the buffer size) as counters, and an instant where the
// loop ended otherwise than at its budget: the first failure (its code's name, index, call, stage), a guard
// stop, a stop for a time limit or a hang, an interrupt (scoped to the whole run), a kill by a signal.
//
// A job starts at its loop's start less its set-up and lasts its seconds (set-up included); its samples
// count from its loop's start. A job that recorded no loop start (unsupported, or ended in its set-up) is
// placed after the job before it, as the engine runs jobs one after another, and says so in its args.
// Times count from the run's start (started), or from the earliest job where that is later or missing.
func Run(r *result.Run) *Document {
	b := &builder{}
	origin, hasOrigin := runOrigin(r)
	names := deviceNames{}
	for _, d := range r.Devices {
		names[d.Index] = d.Name
	}
	b.processName(pidMachine, "machine: host memory and devices", 0)
	at := 0.0
	for i := range r.Jobs {
		at = b.job(i, &r.Jobs[i], origin, hasOrigin, at, names)
	}
	other := map[string]string{"document": "run", "tool": r.Tool.Name + " " + r.Tool.Version, "started": r.Started,
		"platform": r.Platform.Name, "devices": result.DeviceModel(r.Devices), "time_unit": "ts and dur in microseconds from time_origin"}
	if hasOrigin {
		other["time_origin"] = origin.UTC().Format(time.RFC3339Nano)
	}
	if r.Ended != "" {
		other["ended"] = r.Ended
	}
	if r.Partial {
		other["partial"] = "the run was interrupted or is still being written"
	}
	return b.document(other)
}

// runOrigin is the time the run's events count from: its start, or the earliest job's where that is
// earlier (the start is written to the second) or the start is missing; false where neither is known.
func runOrigin(r *result.Run) (time.Time, bool) {
	origin, err := time.Parse(time.RFC3339Nano, r.Started)
	ok := err == nil
	for i := range r.Jobs {
		s := &r.Jobs[i]
		t, err := time.Parse(time.RFC3339Nano, s.LoopStarted)
		if err != nil {
			continue
		}
		if t = t.Add(-time.Duration(s.SetupSeconds * float64(time.Second))); !ok || t.Before(origin) {
			origin, ok = t, true
		}
	}
	return origin, ok
}

// job adds job i, which began no earlier than after (seconds from the origin), and returns when it ended.
func (b *builder) job(i int, s *result.JobResult, origin time.Time, hasOrigin bool, after float64, names deviceNames) float64 {
	pid := pidFirstJob + i
	label := jobLabel(s)
	name := fmt.Sprintf("job %d: %s", i+1, label)
	if s.WorkerPID > 0 {
		name += " (worker " + strconv.Itoa(s.WorkerPID) + ")"
	}
	b.processName(pid, name, i+1)
	b.threadName(pid, tidMain, "worker")
	start, loop, placed := after, 0.0, false
	if t, err := time.Parse(time.RFC3339Nano, s.LoopStarted); err == nil && hasOrigin {
		loop, placed = t.Sub(origin).Seconds(), true
		start = max(loop-s.SetupSeconds, 0)
	}
	end := start + s.Seconds
	b.slice(pid, tidMain, "job", label, micros(start), micros(s.Seconds), jobArgs(s, placed))
	if placed {
		for k := range s.Samples {
			smp := &s.Samples[k]
			ts := micros(loop + smp.Seconds)
			if smp.RSSBytes > 0 {
				b.counter(pid, "RSS", ts, map[string]any{"bytes": smp.RSSBytes})
			}
			b.counter(pid, "buffers", ts, map[string]any{"buffers": smp.Index})
			b.counter(pid, "buffer bytes", ts, map[string]any{"bytes": smp.Index * s.SizeBytes})
			b.machine(ts, smp, names, noOwn)
		}
	}
	b.jobEnd(pid, s, loop, placed, end)
	return end
}

// jobLabel names a job: "shared 1 MiB", "per-device 4 MiB, variant cap, flags use-host-ptr".
func jobLabel(s *result.JobResult) string {
	label := string(s.Strategy) + " " + units.Size(s.SizeBytes)
	if s.Variant != "" {
		label += ", variant " + s.Variant
	}
	if s.Flags != "" {
		label += ", flags " + s.Flags
	}
	return label
}

// jobArgs are what a job's slice says of it.
func jobArgs(s *result.JobResult, placed bool) map[string]any {
	a := map[string]any{"strategy": s.Strategy, "size_bytes": s.SizeBytes, "outcome": s.Outcome,
		"allocations_ok": s.AllocationsOK, "bytes_ok": s.BytesOK}
	for k, v := range map[string]string{"variant": s.Variant, "flags": s.Flags, "reason": s.Reason, "signal": s.Signal} {
		if v != "" {
			a[k] = v
		}
	}
	if len(s.Devices) > 0 {
		a["devices"] = s.Devices
	}
	if s.SetupSeconds > 0 {
		a["setup_seconds"] = s.SetupSeconds
	}
	if s.WorkerPID > 0 {
		a["worker_pid"] = s.WorkerPID
	}
	if len(s.Repeats) > 0 {
		a["repeats"] = len(s.Repeats) // further workers of the job, which recorded no samples to show
	}
	if !placed {
		a["placed"] = "after the job before it: the job recorded no loop start"
	}
	return a
}

// jobEnd adds the instants of how a job's loop ended: its first failure, a stop, a kill. A failure and a
// guard stop end the loop, at its end (loop_seconds) where recorded; the others are at the job's end.
func (b *builder) jobEnd(pid int, s *result.JobResult, loop float64, placed bool, end float64) {
	loopEnd := end
	if placed && s.LoopSeconds > 0 {
		loopEnd = loop + s.LoopSeconds
	}
	if f := s.FirstFailure; f != nil {
		b.instant(pid, tidMain, ScopeProcess, "failure", "first failure: "+codeName(f.Name, f.Code), micros(failureAt(s, loop, placed, end)),
			map[string]any{"index": f.Index, "code": f.Code, "name": f.Name, "call": f.Call, "stage": f.Stage, "device": f.Device})
	}
	why := map[string]any{}
	if s.Reason != "" {
		why["reason"] = s.Reason
	}
	switch {
	case s.GuardStopped():
		if s.Guard != "" {
			why["guard"] = s.Guard
		}
		b.instant(pid, tidMain, ScopeProcess, "stop", "host guard stop", micros(loopEnd), why)
	case s.Interrupted():
		b.instant(pid, tidMain, ScopeGlobal, "stop", "interrupted", micros(end), why)
	case s.StopCause != "":
		b.instant(pid, tidMain, ScopeProcess, "stop", "stopped: "+s.StopCause.Words(), micros(end), why)
	}
	if s.Signal != "" {
		b.instant(pid, tidMain, ScopeProcess, "stop", "killed by "+s.Signal, micros(end), map[string]any{"signal": s.Signal})
	}
}

// failureAt is when a job's first failure happened, in seconds from the origin: at the end of the loop it
// ended, where the job recorded the loop's time; else at the first sample taken at or after the failing
// buffer (the worker's last); else at the job's end.
func failureAt(s *result.JobResult, loop float64, placed bool, end float64) float64 {
	if !placed {
		return end
	}
	if s.LoopSeconds > 0 {
		return loop + s.LoopSeconds
	}
	for _, smp := range s.Samples {
		if smp.Index >= s.FirstFailure.Index {
			return loop + smp.Seconds
		}
	}
	return end
}

// codeName is a status code's name, or its number where the document names none.
func codeName(name string, code int32) string {
	if name != "" {
		return name
	}
	return "code " + strconv.Itoa(int(code))
}
