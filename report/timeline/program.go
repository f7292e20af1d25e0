package timeline

import (
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// Trace is the timeline of a traced program. Process 1, the machine, has the counters of the memory the
// samples read beside the program: the system's available memory, the memory cgroup's usage, and each
// device's memory, split into the program's own and other processes' where the sampler tells the
// program's share, else used. Process 2 is the program: its slice on thread 1 (from the trace's start to
// its end), each context's lifetime on a thread of its own, the program's RSS and each context's live
// buffers and bytes as counters, and instants at its first failure (the code's name and the failed call's
// index), at a kill by a signal, at its time limit, and at an interrupt (scoped to the whole trace).
// Times count from the trace's start, as the trace's own do.
func Trace(t *result.Trace) *Document {
	b := &builder{}
	names := deviceNames{}
	for _, d := range t.Devices {
		names[d.Index] = d.Name
	}
	b.processName(pidMachine, "machine: host memory and devices", 0)
	prog := "program"
	if t.Program != "" {
		prog = filepath.Base(t.Program)
	}
	b.processName(pidProgram, "program: "+strings.Join(append([]string{prog}, t.Args...), " "), 1)
	b.threadName(pidProgram, tidMain, "program")
	b.slice(pidProgram, tidMain, "program", prog, 0, micros(t.Seconds), programArgs(t))
	for _, c := range t.Contexts {
		b.context(t, &c)
	}
	for i := range t.Samples {
		s := &t.Samples[i]
		ts := micros(s.Seconds)
		if s.RSSBytes > 0 {
			b.counter(pidProgram, "RSS", ts, map[string]any{"bytes": s.RSSBytes})
		}
		for _, l := range s.Live {
			ctx := "context " + strconv.Itoa(l.Context)
			b.counter(pidProgram, ctx+" live buffers", ts, map[string]any{"buffers": l.Buffers})
			b.counter(pidProgram, ctx+" live bytes", ts, map[string]any{"bytes": l.Bytes})
		}
		b.machine(ts, &s.Sample, names, s.ProgramBytes)
	}
	b.programEnd(t)
	other := map[string]string{"document": "trace", "tool": t.Tool.Name + " " + t.Tool.Version, "started": t.Started,
		"program": t.Program, "time_unit": "ts and dur in microseconds from time_origin"}
	if _, err := time.Parse(time.RFC3339Nano, t.Started); err == nil {
		// The trace counts from the program's start, which started writes to the second.
		other["time_origin"] = "the program's start, in the second of started"
	}
	if t.Ended != "" {
		other["ended"] = t.Ended
	}
	if t.DeviceSampler != "" {
		other["device_sampler"] = string(t.DeviceSampler)
	}
	return b.document(other)
}

// programArgs are what the program's slice says of it.
func programArgs(t *result.Trace) map[string]any {
	a := map[string]any{"command": append([]string{t.Program}, t.Args...), "exit": t.Exit.Description,
		"allocations": t.Allocations, "creates_ok": t.CreatesOK, "creates_failed": t.CreatesFailed,
		"enqueues_failed": t.EnqueuesFailed, "interception": t.Interception}
	if t.Exit.Code != nil {
		a["exit_code"] = *t.Exit.Code
	}
	if t.Exit.Signal != "" {
		a["signal"] = t.Exit.Signal
	}
	if t.ProgramPID > 0 {
		a["pid"] = t.ProgramPID
	}
	return a
}

// context adds a context's lifetime, from its creation to its release or the program's end, on its thread.
func (b *builder) context(t *result.Trace, c *result.TraceContext) {
	tid := tidContext0 + c.Index
	name := "context " + strconv.Itoa(c.Index)
	b.threadName(pidProgram, tid, name)
	end, released := t.Seconds, c.ReleasedSeconds != nil
	if released {
		end = *c.ReleasedSeconds
	}
	args := map[string]any{"devices": c.Devices, "buffers_created": c.BuffersCreated, "bytes_created": c.BytesCreated,
		"peak_bytes": c.PeakBytes, "failures": c.Failures, "released": released}
	b.slice(pidProgram, tid, "context", name, micros(c.CreatedSeconds), micros(max(end-c.CreatedSeconds, 0)), args)
}

// programEnd adds the instants of how the program went: its first failure, a kill, its time limit, an
// interrupt. All but the failure are at the trace's end.
func (b *builder) programEnd(t *result.Trace) {
	if f := t.FirstFailure; f != nil {
		args := map[string]any{"index": f.Index, "code": f.Code, "name": f.CodeName, "call": f.Call, "context": f.Context}
		if f.SizeBytes > 0 {
			args["size_bytes"] = f.SizeBytes
		}
		if f.Flags != "" {
			args["flags"] = f.Flags
		}
		b.instant(pidProgram, tidMain, ScopeProcess, "failure", "first failure: "+codeName(f.CodeName, f.Code), micros(f.Seconds), args)
	}
	end, why := micros(t.Seconds), map[string]any{"exit": t.Exit.Description}
	if t.Exit.TimedOut {
		b.instant(pidProgram, tidMain, ScopeProcess, "stop", "timed out", end, why)
	}
	if t.Exit.Interrupted {
		b.instant(pidProgram, tidMain, ScopeGlobal, "stop", "interrupted", end, why)
	}
	if t.Exit.Signal != "" {
		b.instant(pidProgram, tidMain, ScopeProcess, "stop", "killed by "+t.Exit.Signal, end, map[string]any{"signal": t.Exit.Signal})
	}
}
