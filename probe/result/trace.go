package result

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// TraceSchemaVersion is the version of the trace document (trace.json); it changes when a field changes
// meaning, as SchemaVersion does for a run.
const TraceSchemaVersion = 1

// TraceKind is the kind field of a trace document, which tells it from a run's.
const TraceKind = "trace"

// Interception mechanisms: how the layer came into the program.
const (
	InterceptLayer   = "layer"   // the ICD loader's layer mechanism (OPENCL_LAYERS)
	InterceptPreload = "preload" // LD_PRELOAD, where the loader has no layers
	InterceptNone    = "none"    // the program made no OpenCL call the layer saw
)

// Trace is what `clmemprobe trace` found in the user's own program: its contexts, its allocations per
// context, its first allocation failure and how the program ended, with host samples of its process.
type Trace struct {
	SchemaVersion int          `json:"schema_version"`
	Kind          string       `json:"kind"`
	Tool          Tool         `json:"tool"`
	Started       string       `json:"started"` // RFC 3339
	Ended         string       `json:"ended,omitempty"`
	Environment   *Environment `json:"environment,omitempty"`
	// Program and Args are the traced command line, with secret-looking values redacted (RedactArgs).
	Program string   `json:"program"`
	Args    []string `json:"args"`
	// Via is what was asked for (auto, layer, preload); WayIn the one way the layer went in (layer or
	// preload) and WayInReason why: what the ICD loader answered when the tool asked it whether it loads
	// layers, or the user's --via; WayInKept says that answer was kept from an earlier trace, the loader's
	// file and what chooses it unchanged, instead of asked again. Interception is what recorded the calls.
	Via          string `json:"via"`
	WayIn        string `json:"way_in,omitempty"`
	WayInReason  string `json:"way_in_reason,omitempty"`
	WayInKept    bool   `json:"way_in_kept,omitempty"`
	Interception string `json:"interception"`
	// Libraries are the OpenCL libraries (loaders and runtimes) the program's processes mapped, as the layer
	// read them from the link map; LibrariesMore those beyond the layer's table of 8. A program that made
	// calls the layer did not see is told by them from one that used no OpenCL.
	Libraries     []TraceLibrary `json:"opencl_libraries,omitempty"`
	LibrariesMore uint32         `json:"opencl_libraries_more,omitempty"`
	// LoadersUntraced are loaders that asked for the layer after the first (a second copy of the loader in
	// the process): given their own table back, their calls went on untraced. EntriesFromLinkMap are
	// preloaded entry points whose next definition was not in the global scope and was found in the link map
	// (an OpenCL library in a local scope: an extension module, a plugin). CallsUnresolved are calls that
	// found no OpenCL definition anywhere in the process or on the library path.
	LoadersUntraced    uint32    `json:"loaders_untraced,omitempty"`
	EntriesFromLinkMap uint32    `json:"entries_from_link_map,omitempty"`
	CallsUnresolved    uint32    `json:"calls_unresolved,omitempty"`
	Exit               TraceExit `json:"exit"`
	Seconds            float64   `json:"seconds"`
	// Allocations counts the program's buffer and sub-buffer creates, failed ones included: a failure's
	// index is its place in this sequence.
	Allocations    uint64 `json:"allocations"`
	CreatesOK      uint64 `json:"creates_ok"`
	CreatesFailed  uint64 `json:"creates_failed"`
	EnqueuesFailed uint64 `json:"enqueues_failed"`
	// RecordsDropped are records the ring had no room for (the counters and the first failure stay exact);
	// RecordsLost were being written when the program died. OtherProcesses are processes the program
	// started that used OpenCL too, not traced.
	RecordsDropped uint64 `json:"records_dropped"`
	RecordsLost    uint64 `json:"records_lost,omitempty"`
	OtherProcesses uint32 `json:"other_processes,omitempty"`
	// ContextsUntracked and DevicesUntracked are beyond the layer's fixed tables (128 contexts, 64 devices).
	ContextsUntracked uint64         `json:"contexts_untracked,omitempty"`
	DevicesUntracked  uint64         `json:"devices_untracked,omitempty"`
	Devices           []TraceDevice  `json:"devices"`
	Contexts          []TraceContext `json:"contexts"`
	FirstFailure      *TraceFailure  `json:"first_failure"`
	Sequence          []TraceStep    `json:"sequence"`
	SequenceTruncated bool           `json:"sequence_truncated,omitempty"`
	Samples           []TraceSample  `json:"samples"`
	// DeviceSampler says which sampler gave the samples' device figures, or, as a run's strategy does, "not
	// available: " and why none did.
	DeviceSampler DeviceSource `json:"device_sampler,omitempty"`
	// FoundLimit is what limited the program, as the findings classify it.
	FoundLimit
	// Judgement is the verdict: what failed first, then what ran out (sentences only, no findings).
	Judgement
	// ProgramPID is the traced program's process id: the kernel's log names it by it.
	ProgramPID int `json:"program_pid,omitempty"`
	// KernelLog is the kernel's log from the program's start to its end.
	KernelLog *KernelLog `json:"kernel_log,omitempty"`
	// Calls are the program's calls as the layer recorded them (trace --calls): the first ones, the last
	// before the first failure, the first after it, bounded.
	Calls []TraceCall `json:"calls,omitempty"`
	// Ledger is where the program made its buffers, per call site (nil: trace --ledger off, or a trace made
	// before the ledger).
	Ledger *TraceLedger `json:"ledger,omitempty"`
}

// TraceLibrary is an OpenCL library a process of the program mapped.
type TraceLibrary struct {
	Path string `json:"path"`
	Kind string `json:"kind"` // LibraryLoader or LibraryRuntime
}

// What a mapped OpenCL library is (TraceLibrary.Kind).
const (
	LibraryLoader  = "loader"  // an ICD loader: libOpenCL, or a copy of one under another name
	LibraryRuntime = "runtime" // a vendor runtime (an ICD), or a library that exports the ICD entry
)

// Ways the layer goes into a program (Trace.WayIn).
const (
	WayLayer   = "layer"   // OPENCL_LAYERS: the ICD loader loads it as a layer
	WayPreload = "preload" // LD_PRELOAD: its exported entry points come before the loader's
)

// TraceExit is how the program ended.
type TraceExit struct {
	Code     *int   `json:"code,omitempty"`   // its exit status, when it exited
	Signal   string `json:"signal,omitempty"` // the signal that ended it
	TimedOut bool   `json:"timed_out,omitempty"`
	// Interrupted says the user stopped the trace; its process group was ended.
	Interrupted bool   `json:"interrupted,omitempty"`
	Description string `json:"description"`
}

// TraceDevice is a device of one of the program's contexts, as the runtime named it.
type TraceDevice struct {
	Index          int    `json:"index"`
	Name           string `json:"name"`
	Type           string `json:"type,omitempty"`
	GlobalMemBytes uint64 `json:"global_mem_bytes"`
	MaxAllocBytes  uint64 `json:"max_alloc_bytes"`
	// PCIBusID is "dddd:bb:dd.f" where the runtime tells it (cl_khr_pci_bus_info, NVIDIA's or AMD's vendor
	// query): device memory figures are keyed to the device by it.
	PCIBusID string `json:"pci_bus_id,omitempty"`
}

// TraceContext is one context the program created, with its buffers: live ones at the end, and the peak.
type TraceContext struct {
	Index   int   `json:"index"`
	Devices []int `json:"devices"` // indices into Trace.Devices
	// DeviceCount is the context's own count, which may exceed the devices listed (16 per context).
	DeviceCount     int      `json:"device_count"`
	CreatedAtIndex  uint64   `json:"created_at_index"` // allocations before it
	CreatedSeconds  float64  `json:"created_t"`
	ReleasedSeconds *float64 `json:"released_t,omitempty"`
	LiveBuffers     uint64   `json:"live_buffers"`
	LiveBytes       uint64   `json:"live_bytes"`
	SubBuffers      uint64   `json:"live_sub_buffers,omitempty"`
	// BuffersCreated and BytesCreated are counted from the records: short of them by records_dropped at most.
	BuffersCreated uint64 `json:"buffers_created"`
	BytesCreated   uint64 `json:"bytes_created"`
	PeakBytes      uint64 `json:"peak_bytes"`
	Failures       uint64 `json:"failures"`
}

// TraceFailure is the program's first failed allocation call.
type TraceFailure struct {
	Index    uint64 `json:"index"` // allocation calls before it
	Call     string `json:"call"`
	Code     int32  `json:"code"`
	CodeName string `json:"code_name"`
	Context  int    `json:"context"` // -1 when not tracked
	Devices  []int  `json:"devices"`
	// SizeBytes and Flags are the failed buffer's (a create); Command the failed command (an enqueue).
	SizeBytes uint64 `json:"size_bytes,omitempty"`
	Flags     string `json:"flags,omitempty"` // as MemFlags.String writes them: read-write, read-only+alloc-host-ptr
	// Buffer is a failed command's buffer (its destination), where it has one: BufferNewest when it was the
	// newest memory object the enqueuing thread had made (a loop that uses each buffer as it makes it),
	// BufferOlder when it was made before that one (which one, the layer cannot tell); BufferBytes its size.
	Buffer      string  `json:"buffer,omitempty"`
	BufferBytes uint64  `json:"buffer_bytes,omitempty"`
	Seconds     float64 `json:"t"`
	// Live is every context's live buffers and bytes at that moment.
	Live []TraceLive `json:"live"`
}

// BufferNumber is the failure's buffer as the program and run number it, 0-based, where the layer can
// tell it: a failed create is the buffer the program was making (as many allocation calls came before
// it); a failed command on the newest buffer is on the one the last allocation call made. A command on an
// older buffer, or on none, has no number (false): only its place after Index allocation calls.
func (f *TraceFailure) BufferNumber() (uint64, bool) {
	switch {
	case strings.HasPrefix(f.Call, "clCreate"):
		return f.Index, true
	case f.Buffer == BufferNewest && f.Index > 0:
		return f.Index - 1, true
	}
	return 0, false
}

// What a failed command's buffer was (TraceFailure.Buffer).
const (
	BufferNewest = "newest"
	BufferOlder  = "older"
)

// TraceLive is one context's live buffers and bytes.
type TraceLive struct {
	Context int    `json:"context"`
	Buffers uint64 `json:"buffers"`
	Bytes   uint64 `json:"bytes"`
}

// TraceStep is a run of identical calls of the program's allocation sequence: Count creates (or releases)
// of the same size and flags in the same context. Contexts are created by steps of Call "clCreateContext".
type TraceStep struct {
	Call    string `json:"call"`
	Context int    `json:"context"`
	Size    uint64 `json:"size,omitempty"`
	Flags   uint64 `json:"flags,omitempty"`
	Count   uint64 `json:"count"`
	Code    int32  `json:"code,omitempty"`
	Devices int    `json:"devices,omitempty"` // of a context create
}

// TraceSample is a sample of the program's process (host memory, descriptors, and its devices' memory in
// Sample.DeviceSamples where a sampler applies), with every context's live bytes at that time.
type TraceSample struct {
	Sample
	Live []TraceLive `json:"live,omitempty"`
	// ProgramDevices is the program's own memory on each device, where the sampler tells it (NVML's
	// per-process figure, the program's DRM fdinfo counters): the rest of a device's use is other processes'.
	ProgramDevices []TraceDeviceUse `json:"program_devices,omitempty"`
}

// TraceDeviceUse is the program's own memory on one device.
type TraceDeviceUse struct {
	Device int    `json:"device"`
	Bytes  uint64 `json:"bytes"`
}

// DeviceMeasured says whether the trace's samples carry device figures.
func (t *Trace) DeviceMeasured() bool { return t.DeviceSampler.Measured() }

// DeviceWhyNot is why the trace's device memory was not measured; a trace that names no sampler was made
// before traces sampled devices. "" where it was measured.
func (t *Trace) DeviceWhyNot() string {
	if t.DeviceSampler == "" {
		return "trace samples the host only"
	}
	return t.DeviceSampler.WhyNot()
}

// DeviceSource is what a job or a trace records as its device-memory sampler: the name of the source that
// gave the device figures, or DeviceNotAvailable and why none did. "" is a result that does not say (a job
// that never set up; a trace made before device sampling). Its methods are the one place that reads it.
type DeviceSource string

// DeviceNotAvailable starts a DeviceSource that gave nothing, followed by why.
const DeviceNotAvailable = "not available: "

// NoDeviceSource is the DeviceSource of a job or trace that no source gave figures for, with why.
func NoDeviceSource(why string) DeviceSource { return DeviceSource(DeviceNotAvailable + why) }

// Measured reports whether a source gave device figures.
func (d DeviceSource) Measured() bool {
	return d != "" && !strings.HasPrefix(string(d), strings.TrimSuffix(DeviceNotAvailable, ": "))
}

// WhyNot is why no source gave device figures; "" where one did, or where the result does not say.
func (d DeviceSource) WhyNot() string {
	if d.Measured() {
		return ""
	}
	return strings.TrimPrefix(strings.TrimPrefix(string(d), DeviceNotAvailable), strings.TrimSuffix(DeviceNotAvailable, ": "))
}

// FailureSample is the sample that stands for the devices' memory at the first failure: the last one with
// device figures taken before the failing call (its index at most the failure's), else the first one
// after; -1 when there is no failure or no device figure. The samples are the program's, in order.
func (t *Trace) FailureSample() int {
	if t.FirstFailure == nil {
		return -1
	}
	at := -1
	for i, s := range t.Samples {
		if len(s.DeviceSamples) == 0 {
			continue
		}
		if s.Index > t.FirstFailure.Index {
			if at < 0 {
				at = i
			}
			break
		}
		at = i
	}
	return at
}

// ProgramBytes is the program's own memory on device dev in a sample, and whether the sampler told it.
func (s *TraceSample) ProgramBytes(dev int) (uint64, bool) {
	for _, p := range s.ProgramDevices {
		if p.Device == dev {
			return p.Bytes, true
		}
	}
	return 0, false
}

// MaxTraceSteps bounds the sequence a trace keeps (identical calls in a row take one step).
const MaxTraceSteps = 20000

// WithFindings returns a copy of the trace with what the findings derived stored in it (the verdict, the
// limit and its evidence); it leaves the trace as it is. findings.JudgeTrace is its one caller.
func (t *Trace) WithFindings(verdict []string, limit JobLimit) *Trace {
	if verdict == nil {
		verdict = []string{}
	}
	cp := WithJudgement(t, Judgement{Verdict: verdict})
	withLimit(cp, limit)
	return cp
}

// LoadTrace reads a trace document, or returns nil without an error when the file is a JSON document of
// another kind (a run): the caller loads it as one.
func LoadTrace(path string) (*Trace, error) {
	// Only a regular file is looked into: opening a FIFO would wait for its writer, and reading a pipe would
	// take what the run loader must read. Those go to the run loader, which says what they are.
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A file that is no JSON object is no trace: the run loader says what it is, without this reading up
	// to the size limit first (a device file never ends).
	br := bufio.NewReader(f)
	for {
		c, err := br.ReadByte()
		if err != nil {
			return nil, nil
		}
		if c == '{' {
			_ = br.UnreadByte()
			break
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return nil, nil
		}
	}
	b, err := io.ReadAll(io.LimitReader(br, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileBytes {
		return nil, &NotAResultError{path, fmt.Sprintf("larger than %d bytes", MaxFileBytes)}
	}
	var head struct {
		Kind          string `json:"kind"`
		SchemaVersion int    `json:"schema_version"`
	}
	if json.Unmarshal(b, &head) != nil || head.Kind != TraceKind {
		return nil, nil
	}
	if head.SchemaVersion != TraceSchemaVersion {
		return nil, &NotAResultError{path, fmt.Sprintf("trace schema version %d; this build reads version %d", head.SchemaVersion, TraceSchemaVersion)}
	}
	var t Trace
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, &NotAResultError{path, err.Error()}
	}
	return &t, nil
}
