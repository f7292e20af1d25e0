package trace

import (
	"bytes"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/supervise"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/result/clcode"
)

// maxSamples bounds the samples a trace keeps: when full, every other one goes and the period doubles, so a
// program that runs for days leaves as many samples as one that runs for minutes, spread over its run.
const maxSamples = 2000

// collector turns the channel's records into the trace while the program runs.
type collector struct {
	ch      *Channel
	host    *sample.Host
	dev     *deviceSampler
	every   time.Duration
	next    time.Time
	started time.Time

	// Per context slot (1-based; 0: not tracked), from the records; arrays, not maps: the drain reads millions
	// of records a second and must keep up with the fastest create loop.
	live      [maxContexts + 1]uint64 // bytes, for the peak
	peak      [maxContexts + 1]uint64
	created   [maxContexts + 1][2]uint64 // buffers and bytes
	seq       []result.TraceStep
	truncated bool
	samples   []result.TraceSample
	calls     *callLog // nil: no call log (trace without --calls)
	allocs    uint64   // allocation calls read so far, for the call log's indexes
	readAt    float64  // when the drain in progress began, seconds from the start
}

func newCollector(ch *Channel, spec Spec, started time.Time) *collector {
	every := spec.SampleEvery
	if every <= 0 {
		every = DefaultSampleEvery
	}
	c := &collector{ch: ch, every: every, started: started, next: started}
	if spec.Calls {
		c.calls = &callLog{}
	}
	return c
}

// attach starts sampling the program's process: its host memory and descriptors, and its devices' memory.
func (c *collector) attach(root sample.Root, pid int, gpus GPUSource) {
	c.host = sample.NewHostOf(root, pid)
	c.dev = newDeviceSampler(gpus, root, pid)
}

// tick drains the ring, and samples when a period has passed.
func (c *collector) tick() {
	c.readAt = time.Since(c.started).Seconds()
	c.ch.drain(false, c.record)
	if now := time.Now(); c.host != nil && !now.Before(c.next) {
		c.sample(now)
		c.next = now.Add(c.every)
	}
}

// finish reads what the program left in the ring and closes the sampler.
func (c *collector) finish() {
	c.readAt = time.Since(c.started).Seconds()
	c.ch.drain(true, c.record)
	if c.host != nil {
		_ = c.host.Close()
	}
}

func (c *collector) sample(now time.Time) {
	s := result.TraceSample{}
	if c.host.Read(&s.Sample, false) != nil {
		return // the process is gone
	}
	s.Index = c.ch.counters().seq
	s.Seconds = now.Sub(c.started).Seconds()
	s.Live = c.ch.liveNow()
	c.dev.read(c.devices(), &s)
	c.samples = append(c.samples, s)
	// Full at maxSamples-1, an odd count: thinned to half of maxSamples that keeps exactly every other sample
	// (the first and the last among them), so the doubled period goes on from the last one kept.
	if len(c.samples) >= maxSamples-1 {
		c.samples, c.every = result.Thin(c.samples, maxSamples/2), 2*c.every
	}
}

// record follows the live bytes per context (for the peak) and appends the record to the sequence.
func (c *collector) record(r *record) {
	if r.Context > maxContexts {
		r.Context = 0 // not a slot the layer hands out: the channel was written over
	}
	switch r.Kind {
	case kindBuffer, kindBufferProps:
		if r.Code == 0 {
			n := c.created[r.Context]
			c.created[r.Context] = [2]uint64{n[0] + r.Count, n[1] + r.Count*r.Size}
			c.live[r.Context] += r.Count * r.Size
			c.peak[r.Context] = max(c.peak[r.Context], c.live[r.Context])
		}
	case kindReleaseMem:
		if r.Aux != 0 && r.Flags == 0 {
			c.live[r.Context] -= min(r.Count*r.Size, c.live[r.Context])
		}
	}
	if c.calls != nil {
		c.logCall(r)
	}
	if r.Kind != kindIssue { // a command made, in the call log alone: the sequence is of allocations and failures
		c.step(r)
	}
}

// logCall adds a record to the call log, with the allocation calls before it.
func (c *collector) logCall(r *record) {
	call := result.TraceCall{T: c.readAt, Index: c.allocs, Call: callName(r), Context: int(r.Context) - 1, Code: r.Code, Count: r.Count}
	switch r.Kind {
	case kindContext:
		call.Devices = int(r.Aux)
	case kindBuffer, kindBufferProps, kindSubBuffer:
		call.Size, call.Flags = r.Size, result.MemFlags(r.Flags).String()
		c.allocs += r.Count
	case kindReleaseMem:
		call.Size = r.Size
	case kindIssue:
		call.Size, call.Issued = r.Size, true
	}
	if r.Code != 0 {
		call.CodeName = clcode.Name(r.Code)
	}
	c.calls.add(call, r.Code != 0 && r.Kind != kindReleaseMem && r.Kind != kindReleaseContext)
}

// step merges a record into the last step when it repeats it (same call, context, size, flags and code).
func (c *collector) step(r *record) {
	st := result.TraceStep{Call: callName(r), Context: int(r.Context) - 1, Count: r.Count, Code: r.Code}
	switch r.Kind {
	case kindContext:
		st.Devices = int(r.Aux)
	case kindBuffer, kindBufferProps, kindSubBuffer:
		st.Size, st.Flags = r.Size, r.Flags
	case kindReleaseMem:
		st.Size = r.Size
	case kindEnqueue, kindReleaseContext:
	}
	if n := len(c.seq); n > 0 {
		last := &c.seq[n-1]
		if last.Call == st.Call && last.Context == st.Context && last.Size == st.Size && last.Flags == st.Flags &&
			last.Code == st.Code && last.Devices == st.Devices && r.Kind != kindContext {
			last.Count += r.Count
			return
		}
	}
	if len(c.seq) >= result.MaxTraceSteps {
		c.truncated = true
		return
	}
	c.seq = append(c.seq, st)
}

// ctxFromType is a context record's flags when clCreateContextFromType made it (the layer's CTX_FROM_TYPE).
const ctxFromType = 1

var commandNames = map[uint32]string{1: "clEnqueueReadBuffer", 2: "clEnqueueWriteBuffer", 3: "clEnqueueCopyBuffer",
	4: "clEnqueueFillBuffer", 5: "clEnqueueMapBuffer", 6: "clEnqueueMigrateMemObjects", 7: "clEnqueueNDRangeKernel",
	8: "clEnqueueTask", 9: "clEnqueueReadBufferRect", 10: "clEnqueueWriteBufferRect", 11: "clEnqueueCopyBufferRect",
	12: "clFinish", 13: "clEnqueueUnmapMemObject"}

// callName is the OpenCL call a record is about.
func callName(r *record) string {
	switch r.Kind {
	case kindContext:
		if r.Flags == ctxFromType {
			return "clCreateContextFromType"
		}
		return "clCreateContext"
	case kindBuffer:
		return "clCreateBuffer"
	case kindBufferProps:
		return "clCreateBufferWithProperties"
	case kindSubBuffer:
		return "clCreateSubBuffer"
	case kindReleaseMem:
		return "clReleaseMemObject"
	case kindReleaseContext:
		return "clReleaseContext"
	case kindEnqueue, kindIssue:
		if n, ok := commandNames[r.Aux]; ok {
			return n
		}
	}
	return "unknown"
}

// liveNow is every tracked context's live buffers and bytes, from the header's exact counters.
func (ch *Channel) liveNow() []result.TraceLive {
	var out []result.TraceLive
	for i := uint32(1); i <= maxContexts; i++ {
		s, ok := ch.contextSlot(i)
		if !ok {
			break
		}
		out = append(out, result.TraceLive{Context: int(i) - 1, Buffers: s.LiveBuffers, Bytes: s.LiveBytes})
	}
	return out
}

// trace is the whole result: the header's exact counters, contexts and devices, the first failure, and what
// the records and samples added.
func (c *collector) trace(spec Spec, e supervise.ProgramEnd, started, ended time.Time) *result.Trace {
	k := c.ch.counters()
	t := &result.Trace{SchemaVersion: result.TraceSchemaVersion, Kind: result.TraceKind,
		Started: started.UTC().Format(time.RFC3339), Ended: ended.UTC().Format(time.RFC3339),
		Program: spec.Program, Args: result.RedactArgs(spec.Args), Via: spec.Via, WayIn: spec.Way, WayInReason: spec.WayReason, WayInKept: spec.WayKept,
		Interception: mechanism(k.mechanism),
		Exit:         describe(e), Seconds: ended.Sub(started).Seconds(),
		Allocations: k.seq, CreatesOK: k.seq - min(k.seq, k.createsFailed), CreatesFailed: k.createsFailed, EnqueuesFailed: k.enqueuesFailed,
		RecordsDropped: k.drops, RecordsLost: c.ch.lost, OtherProcesses: k.otherProcesses,
		ContextsUntracked: k.contextsUntracked, DevicesUntracked: k.devicesUntracked,
		Sequence: c.seq, SequenceTruncated: c.truncated, Samples: c.samples, Calls: c.calls.list()}
	rc := c.ch.reach()
	t.Libraries, t.LibrariesMore = rc.libraries, rc.librariesMore
	t.LoadersUntraced, t.EntriesFromLinkMap, t.CallsUnresolved = rc.loadersUntraced, rc.resolvedByMap, rc.unresolved
	t.Devices = c.devices()
	if c.dev != nil {
		t.DeviceSampler = c.dev.sampler(t.Devices)
	}
	t.Contexts = c.contexts(started)
	t.FirstFailure = c.firstFailure(t, started)
	if t.Samples == nil {
		t.Samples = []result.TraceSample{}
	}
	if t.Sequence == nil {
		t.Sequence = []result.TraceStep{}
	}
	return t
}

func mechanism(bits uint32) string {
	switch {
	case bits&mechLayer != 0:
		return result.InterceptLayer
	case bits&mechPreload != 0:
		return result.InterceptPreload
	}
	return result.InterceptNone
}

func (c *collector) devices() []result.TraceDevice {
	out := []result.TraceDevice{}
	for i := uint32(1); i <= maxDevices; i++ {
		d, ok := c.ch.deviceSlot(i)
		if !ok {
			break
		}
		name, _, _ := bytes.Cut(d.Name[:], []byte{0})
		pci, _, _ := bytes.Cut(d.PCIBusID[:], []byte{0})
		out = append(out, result.TraceDevice{Index: int(i) - 1, Name: string(name), Type: deviceType(d.Type),
			GlobalMemBytes: d.GlobalMem, MaxAllocBytes: d.MaxAlloc, PCIBusID: string(pci)})
	}
	return out
}

func deviceType(t uint64) string {
	switch {
	case t&(1<<2) != 0:
		return "gpu"
	case t&(1<<1) != 0:
		return "cpu"
	case t&(1<<3) != 0:
		return "accelerator"
	case t != 0:
		return "other"
	}
	return ""
}

func (c *collector) contexts(started time.Time) []result.TraceContext {
	out := []result.TraceContext{}
	origin := c.ch.h.StartNS
	for i := uint32(1); i <= maxContexts; i++ {
		s, ok := c.ch.contextSlot(i)
		if !ok {
			break
		}
		tc := result.TraceContext{Index: int(i) - 1, DeviceCount: int(s.NDev), Devices: []int{},
			CreatedAtIndex: s.CreatedIndex, CreatedSeconds: seconds(s.CreatedNS, origin),
			LiveBuffers: s.LiveBuffers, LiveBytes: s.LiveBytes, SubBuffers: s.SubBuffers,
			BuffersCreated: c.created[i][0], BytesCreated: c.created[i][1], PeakBytes: c.peak[i], Failures: s.Failures}
		for d := 0; d < min(int(s.NDev), ctxDevices); d++ {
			if s.Devices[d] > 0 {
				tc.Devices = append(tc.Devices, int(s.Devices[d])-1)
			}
		}
		if s.ReleasedNS != 0 {
			r := seconds(s.ReleasedNS, origin)
			tc.ReleasedSeconds = &r
		}
		out = append(out, tc)
	}
	return out
}

func seconds(ns, origin uint64) float64 {
	if ns < origin {
		return 0
	}
	return float64(ns-origin) / 1e9
}

func (c *collector) firstFailure(t *result.Trace, started time.Time) *result.TraceFailure {
	r, ok := c.ch.firstFailure()
	if !ok {
		return nil
	}
	f := &result.TraceFailure{Index: r.index, Call: callName(&r.record), Code: r.Code, CodeName: clcode.Name(r.Code),
		Context: int(r.Context) - 1, Devices: []int{}, Seconds: seconds(r.timeNS, c.ch.h.StartNS), Live: []result.TraceLive{}}
	if r.Kind != kindEnqueue {
		f.SizeBytes, f.Flags = r.Size, result.MemFlags(r.Flags).String()
	}
	switch r.buffer {
	case bufferNewest:
		f.Buffer, f.BufferBytes = result.BufferNewest, r.bufferBytes
	case bufferOlder:
		f.Buffer, f.BufferBytes = result.BufferOlder, r.bufferBytes
	}
	if f.Context >= 0 && f.Context < len(t.Contexts) {
		f.Devices = t.Contexts[f.Context].Devices
	}
	for i := range r.buffers {
		f.Live = append(f.Live, result.TraceLive{Context: i, Buffers: r.buffers[i], Bytes: r.bytes[i]})
	}
	return f
}
