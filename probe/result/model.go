// Package result is clmemprobe's result model: plain structs with JSON tags (schema version 1), their
// enums, and loading and checking saved files. It has no rendering dependencies: the engine imports it and
// nothing of the renderers, and a saved run.json is all a renderer needs.
package result

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// SchemaVersion is the version of the JSON result contract. Scripts rely on its field names; a change that
// renames or removes one bumps it. Additive changes keep it.
const SchemaVersion = 1

// Run is one probe run: what was asked, where, and what each strategy did.
type Run struct {
	SchemaVersion int          `json:"schema_version"`
	Tool          Tool         `json:"tool"`
	Started       string       `json:"started"`         // RFC 3339
	Ended         string       `json:"ended,omitempty"` // RFC 3339; absent while the run is being written
	Command       []string     `json:"command"`         // the command line that reproduces the run
	Environment   *Environment `json:"environment,omitempty"`
	Platform      Platform     `json:"platform"`
	Devices       []Device     `json:"devices"`
	Config        Config       `json:"config"`
	Jobs          []JobResult  `json:"strategies"`
	// Judgement is the verdict and the findings it is the sentences of (the judge's, never the engine's).
	Judgement
	// StartupSeconds is the time from the command's start to the first job's loop: loading the runtime to
	// list the devices, collecting the environment, starting the first worker and its set-up.
	StartupSeconds float64 `json:"startup_seconds,omitempty"`
	// Partial is true when the run was interrupted or is still being written.
	Partial bool `json:"partial,omitempty"`
	// ParentPeakRSSBytes is the supervising process's own peak RSS (the workers' are per strategy): with
	// a strategy's peak_rss_bytes it is the tool's footprint beside the runtime's.
	ParentPeakRSSBytes uint64 `json:"parent_peak_rss_bytes,omitempty"`
	// KernelLog is the kernel's log from the run's start to its end.
	KernelLog *KernelLog `json:"kernel_log,omitempty"`
}

// Tool identifies the build that wrote the result.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Platform is the OpenCL platform the devices belong to.
type Platform struct {
	Index   int    `json:"index"`
	Name    string `json:"name"`
	Vendor  string `json:"vendor"`
	Version string `json:"version"`
}

// Device is one OpenCL device as reported by the runtime.
type Device struct {
	Index          int      `json:"index"`
	Platform       int      `json:"platform"`
	Name           string   `json:"name"`
	Vendor         string   `json:"vendor"`
	Type           string   `json:"type"`
	Version        string   `json:"version"`
	DriverVersion  string   `json:"driver_version"`
	GlobalMemBytes uint64   `json:"global_mem_bytes"`
	MaxAllocBytes  uint64   `json:"max_alloc_bytes"`
	HostUnified    bool     `json:"host_unified_memory"`
	ComputeUnits   uint32   `json:"compute_units"`
	PCIBusID       string   `json:"pci_bus_id,omitempty"`
	Extensions     []string `json:"extensions,omitempty"`
}

// Config is what the user asked for, after defaults were applied.
type Config struct {
	Platform        int        `json:"platform"`
	Devices         []int      `json:"devices"`
	Strategies      []Strategy `json:"strategies"`
	SizeBytes       uint64     `json:"size_bytes"`
	Sizes           []uint64   `json:"sizes_bytes,omitempty"` // a sweep
	MaxAllocs       uint64     `json:"max_allocs"`
	MaxBytes        uint64     `json:"max_bytes,omitempty"`
	Touch           Touch      `json:"touch"`
	TimeoutSeconds  float64    `json:"timeout_seconds"`
	HangSeconds     float64    `json:"hang_timeout_seconds"`
	HostReserveByte uint64     `json:"host_reserve_bytes"`
	SampleMillis    float64    `json:"sample_interval_ms"`
	OpenCLLibrary   string     `json:"opencl_library"`
	// Variants are the runtime settings every strategy ran under, in order (run --variant); absent when
	// only the runtime's defaults ran.
	Variants []Variant `json:"variants,omitempty"`
	// Like is the traced program the run took its sizes and flags from (run --like TRACE.json).
	Like *Like `json:"like,omitempty"`
	// FlagSets are the cl_mem_flags sets every strategy ran with, in order (run --flags); absent when only
	// the default (read-write) ran.
	FlagSets []string `json:"flag_sets,omitempty"`
	// Attribution is what run --attribution asked for: batched (the default) or per-buffer.
	Attribution string `json:"attribution,omitempty"`
	// RuntimeLog names the logging variables --runtime-log set for the workers.
	RuntimeLog map[string]string `json:"runtime_log,omitempty"`
	// Repeat is how many times each job ran, each time in its own worker (run --repeat); absent: once.
	Repeat int `json:"repeat,omitempty"`
	// PoolSize is the pool strategy's pool buffer size (run --pool-size); absent: each device's maximum
	// allocation.
	PoolSize uint64 `json:"pool_size_bytes,omitempty"`
}

// Variant is a named set of environment variables that change what a runtime does, applied to the workers
// of its jobs only. The default variant (Name "default") has no settings: the runtime as it is.
type Variant struct {
	Name     string            `json:"name"`
	Settings map[string]string `json:"settings,omitempty"`
}

// Assignments lists environment settings as KEY=VALUE, in key order.
func Assignments(settings map[string]string) []string {
	out := make([]string, 0, len(settings))
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		out = append(out, k+"="+settings[k])
	}
	return out
}

// HasFlags says whether any job's buffers had other flags than the default read-write.
func (r *Run) HasFlags() bool {
	for i := range r.Jobs {
		if r.Jobs[i].Flags != "" {
			return true
		}
	}
	return len(r.Config.FlagSets) > 0
}

// FlagNames are the recorded flags of the run's jobs, each once, in the order they ran ("" for the
// default).
func (r *Run) FlagNames() []string {
	return distinct(r.Jobs, func(s *JobResult) string { return s.Flags })
}

// DefaultVariant is the name of the runtime's own settings.
//
// The default variant has one representation, its name, in everything that keys or compares variants
// (VariantName): configurations, the command line, tables, merge's and check's answers, and the keys of
// report/comparison. Jobs write it "" on the wire (a JobResult's and an ExpectedJob's variant is
// empty, and omitted), as results always have; JobVariant turns a name into that form, and only the
// writers of jobs and of compare's rows use it.
const DefaultVariant = "default"

// JobVariant is the variant a job records for a configured variant's name: "" for the default.
func JobVariant(name string) string {
	if name == DefaultVariant {
		return ""
	}
	return name
}

// VariantName is how a job's variant is named, the default variant too: the one form variants are keyed
// and compared in.
func VariantName(v string) string {
	if v == "" {
		return DefaultVariant
	}
	return v
}

// JobResult is the result of one strategy at one buffer size, run in its own worker process.
type JobResult struct {
	Strategy Strategy `json:"strategy"`
	// Variant names the runtime settings the job ran under (run --variant); empty is the runtime's defaults.
	Variant string `json:"variant,omitempty"`
	// Flags are the job's cl_mem_flags as result.MemFlags writes them ("use-host-ptr"); empty is the user's
	// loop's CL_MEM_READ_WRITE (result.FlagsName reads it so).
	Flags string `json:"flags,omitempty"`
	// VariantSettings are the variant's environment variables, set for this job's worker only.
	VariantSettings map[string]string `json:"variant_settings,omitempty"`
	Devices         []int             `json:"devices"`
	SizeBytes       uint64            `json:"size_bytes"`
	Outcome         Outcome           `json:"outcome"`
	Reason          string            `json:"reason,omitempty"` // why it stopped, crashed, hung or was unsupported
	// StopCause is what stopped a job that was stopped or hung; results written before it was recorded get
	// it on loading, from their reason's first words (legacyStopCause).
	StopCause     StopCause     `json:"stop_cause,omitempty"`
	Signal        string        `json:"signal,omitempty"`
	ExitCode      *int          `json:"exit_code,omitempty"`
	AllocationsOK uint64        `json:"allocations_ok"`
	BytesOK       uint64        `json:"bytes_ok"`
	FirstFailure  *FirstFailure `json:"first_failure"`
	// LastStage is the stage the worker was in when it crashed, hung or was stopped.
	LastStage Stage `json:"last_stage,omitempty"`
	// ConfirmedOK is, for a worker that ended without an answer while a batch of buffers was in flight
	// (made, their commands not yet waited for), how many buffers the device had confirmed: the end lies
	// between it and AllocationsOK. Absent where the two are one (per-buffer attribution, no batch).
	ConfirmedOK *uint64 `json:"confirmed_ok,omitempty"`
	// HostBytesPerBuffer is the least-squares slope of process RSS against buffers allocated.
	HostBytesPerBuffer float64 `json:"host_bytes_per_buffer"`
	// DeviceBytesPerBuffer is, per device index (as a string key), the slope of used device memory.
	DeviceBytesPerBuffer map[string]float64 `json:"device_bytes_per_buffer,omitempty"`
	// ReplicationFactor is the sum of DeviceBytesPerBuffer over devices divided by the buffer size; absent when
	// device memory was not measured or no device memory was placed.
	ReplicationFactor *float64 `json:"replication_factor,omitempty"`
	// SystemBytesPerBuffer is the system's available memory lost per buffer (least-squares slope of
	// MemAvailable, negated): host memory the buffers took, also what the process's RSS does not show
	// (driver-held staging, shared memory). Null when it cannot be fitted.
	SystemBytesPerBuffer *float64 `json:"system_bytes_per_buffer"`
	// CommittedBytesPerBuffer is the slope of the system's Committed_AS per buffer.
	CommittedBytesPerBuffer *float64 `json:"committed_bytes_per_buffer,omitempty"`
	// SlopeNoise is how far each of those slopes could move within the scatter of its readings; absent in
	// results written before it was measured.
	SlopeNoise *SlopeNoise `json:"slope_noise,omitempty"`
	// Fit says whether the samples allow a cost per buffer at all.
	Fit *Fit `json:"fit,omitempty"`
	// FoundLimit is what ended a strategy that did not complete, as the findings classify it, with the
	// numbers the classification rests on.
	FoundLimit
	// Resources is the job's resource ledger: descriptors, locked memory, the memory cgroup, the devices'
	// memory before the loop and the processes holding it.
	Resources *Resources `json:"resources,omitempty"`
	// DeviceSizes are the devices' global memory and largest allocation as this job's worker saw them.
	DeviceSizes []DeviceSize `json:"device_sizes,omitempty"`
	// Guard says which memory the host guard stopped the job before, when it did.
	Guard Guard `json:"guard,omitempty"`
	// AddressSpaceBytes is the worker's address-space limit (RLIMIT_AS, or the architecture's user space).
	AddressSpaceBytes uint64       `json:"address_space_bytes,omitempty"`
	DeviceSampler     DeviceSource `json:"device_sampler,omitempty"` // which sampler gave device figures, or why none
	Seconds           float64      `json:"seconds"`
	// SetupSeconds is the time from starting the worker to its loop: loading the runtime, contexts, queues,
	// kernels, samplers.
	SetupSeconds float64 `json:"setup_seconds,omitempty"`
	// LoopSeconds is the allocation loop's own time, without starting the worker and setting up.
	LoopSeconds float64 `json:"loop_seconds,omitempty"`
	// Attribution is how a failure reported after its call was pinned to its buffer: "batched" (one wait per
	// batch, the failed command found by its event's status) or "per-buffer" (a wait after every buffer);
	// AttributionNote says why a batched run fell back.
	Attribution     string   `json:"attribution,omitempty"`
	AttributionNote string   `json:"attribution_note,omitempty"`
	LoopStarted     string   `json:"loop_started,omitempty"` // RFC 3339 wall clock; sample "t" counts from it
	NanosPerAlloc   float64  `json:"ns_per_alloc,omitempty"`
	PeakRSSBytes    uint64   `json:"peak_rss_bytes"`
	MaxMappings     uint64   `json:"max_mappings,omitempty"`
	MaxMapCount     uint64   `json:"max_map_count,omitempty"`
	Notices         []string `json:"notices,omitempty"`       // context notify callback messages, the first 100
	NoticesTotal    int      `json:"notices_total,omitempty"` // how many the runtime sent
	// RuntimeDiagnostics names the runtime's own diagnostics that were turned on (cl_intel_driver_diagnostics).
	RuntimeDiagnostics string   `json:"runtime_diagnostics,omitempty"`
	WorkerOutput       string   `json:"worker_output,omitempty"` // what the worker printed (its runtime's messages), the first 2 KiB and the last 62 KiB
	Samples            []Sample `json:"samples"`
	SamplesTotal       int      `json:"samples_total"` // before downsampling for this file
	// WorkerPID is the worker's process id: the kernel's log names a process by it.
	WorkerPID int `json:"worker_pid,omitempty"`
	// Repeats are the job's further runs (run --repeat), each in its own worker, after this one.
	Repeats []Attempt `json:"repeats,omitempty"`
}

// FirstFailure pinpoints the allocation that failed.
type FirstFailure struct {
	Index        uint64 `json:"index"` // 0-based: buffers that succeeded before it
	Stage        Stage  `json:"stage"`
	Code         int32  `json:"code"`
	Name         string `json:"name"`
	Call         string `json:"call"`
	Device       int    `json:"device"` // index of the device the buffer was meant for
	BytesBefore  uint64 `json:"bytes_before"`
	HostRSSBytes uint64 `json:"host_rss_bytes"`
	HostAvail    uint64 `json:"host_available_bytes"`
}

// Sample is one reading of host (and device) memory while the loop ran.
type Sample struct {
	Index      uint64  `json:"index"` // buffers allocated when read
	Seconds    float64 `json:"t"`
	RSSBytes   uint64  `json:"host_rss_bytes"`
	VMSBytes   uint64  `json:"host_vms_bytes"`
	HWMBytes   uint64  `json:"host_hwm_bytes"`
	AvailBytes uint64  `json:"host_available_bytes"`
	// CommittedBytes is the system's Committed_AS: memory promised to every process, mapped or not.
	CommittedBytes uint64 `json:"host_committed_bytes,omitempty"`
	Mappings       uint64 `json:"mappings,omitempty"`
	// OpenFDs is the worker's open file descriptors; CgroupBytes its memory cgroup's working set; LockedBytes
	// its locked memory (VmLck). Absent where not read.
	OpenFDs       uint64         `json:"open_fds,omitempty"`
	CgroupBytes   uint64         `json:"cgroup_memory_bytes,omitempty"`
	LockedBytes   uint64         `json:"locked_bytes,omitempty"`
	DeviceSamples []DeviceSample `json:"devices,omitempty"`
}

// DeviceSample is one device's memory in a sample.
type DeviceSample struct {
	Device    int    `json:"device"`
	UsedBytes uint64 `json:"used_bytes"`
	FreeBytes uint64 `json:"free_bytes"` // 0 where the source does not tell
	// GTTUsedBytes is host memory mapped for the GPU (amdgpu mem_info_gtt_used), where the driver tells.
	GTTUsedBytes uint64 `json:"gtt_used_bytes,omitempty"`
}

// Environment describes the machine, for bug reports.
type Environment struct {
	OS            string            `json:"os"`
	Kernel        string            `json:"kernel"`
	Hostname      string            `json:"hostname,omitempty"`
	CPU           string            `json:"cpu"`
	CPUs          int               `json:"cpus"`
	HostMemBytes  uint64            `json:"host_mem_bytes"`
	SwapBytes     uint64            `json:"swap_bytes"`
	Overcommit    string            `json:"overcommit_memory,omitempty"`
	OvercommitPct string            `json:"overcommit_ratio,omitempty"`
	MaxMapCount   uint64            `json:"max_map_count,omitempty"`
	OpenCLLibrary string            `json:"opencl_library"`
	ICDVendorsDir string            `json:"icd_vendors_dir"`
	ICDFiles      map[string]string `json:"icd_files,omitempty"` // file -> library it names
	// ICDStatus is what each registered runtime gave when loaded on its own (env and devices ask; a run
	// does not).
	ICDStatus  []ICDStatus       `json:"icd_status,omitempty"`
	DRIDevices []string          `json:"dri_devices,omitempty"`
	EnvVars    map[string]string `json:"env_vars,omitempty"`
	Platforms  []Platform        `json:"platforms,omitempty"`
	// FDLimit is the soft limit on open file descriptors (ulimit -n) the command was started with, which the
	// workers run under; 0 where it could not be read.
	FDLimit uint64 `json:"fd_limit,omitempty"`
	// MemoryCgroup is the memory cgroup the command ran in, where it is in one.
	MemoryCgroup *CgroupInfo `json:"memory_cgroup,omitempty"`
	// System is what a driver team's bug template asks of the machine (PCI, modules, packages).
	System *System `json:"system,omitempty"`
}

// CgroupInfo names a memory cgroup and its limit.
type CgroupInfo struct {
	Version    int    `json:"version"`
	Path       string `json:"path"`
	LimitBytes uint64 `json:"limit_bytes,omitempty"` // 0: none
}

// Sizes returns the buffer sizes of the run's strategies, each once, in the order they ran.
func (r *Run) Sizes() []uint64 {
	return distinct(r.Jobs, func(s *JobResult) uint64 { return s.SizeBytes })
}

// VariantNames returns the variants of the run, each once, in the order they ran ("" is the default).
func (r *Run) VariantNames() []string {
	return distinct(r.Jobs, func(s *JobResult) string { return s.Variant })
}

// StrategyNames returns the strategies of the run, each once, in the order they ran.
func (r *Run) StrategyNames() []Strategy {
	return distinct(r.Jobs, func(s *JobResult) Strategy { return s.Strategy })
}

// distinct returns key(e) of every element, each once, in the order they first appear.
func distinct[E any, K comparable](es []E, key func(*E) K) []K {
	var out []K
	seen := map[K]bool{}
	for i := range es {
		if k := key(&es[i]); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// Inventory is what a runtime reports: every platform with its devices (the JSON of `devices --json`).
type Inventory []PlatformListing

// PlatformListing is one platform of an inventory with its extensions and devices.
type PlatformListing struct {
	Platform
	Extensions []string `json:"extensions"`
	Devices    []Device `json:"devices"`
}

// SlopeNoise is, per signal, twice the standard error of its slope per buffer (about a 95% interval's
// half-width), in bytes: a slope no larger than its noise is not a cost.
type SlopeNoise struct {
	Host      float64 `json:"host_bytes_per_buffer"`
	System    float64 `json:"system_bytes_per_buffer"`
	Committed float64 `json:"committed_bytes_per_buffer"`
}

// Fit says whether a strategy's samples allow a least-squares cost per buffer: enough samples, spread over
// enough of the buffers the strategy reached (FitRule).
type Fit struct {
	Samples int    `json:"samples"`
	Spanned uint64 `json:"buffers_spanned"` // highest sample index less the lowest
	OK      bool   `json:"ok"`
	Why     string `json:"why,omitempty"` // why not, when not
}

// The fit rule: a slope needs at least FitMinSamples samples that span at least FitMinBuffers buffers and
// at least half of the buffers the strategy reached. Fewer, or closer together, and the slope is noise
// (a fit from two samples once read 231 KiB per 1 KiB buffer).
const (
	FitMinSamples = 8
	FitMinBuffers = 16
)

// JudgeFit applies the fit rule to samples taken at indices from lo to hi over a strategy that reached
// reached buffers.
func JudgeFit(samples int, lo, hi, reached uint64) *Fit {
	f := &Fit{Samples: samples}
	if hi > lo {
		f.Spanned = hi - lo
	}
	switch {
	case samples < FitMinSamples:
		f.Why = "too few samples"
	case f.Spanned < FitMinBuffers || 2*f.Spanned < reached:
		f.Why = "the samples span too few of the buffers"
	default:
		f.OK = true
	}
	return f
}

// PoolsMadeBy is the count of buffers by which the pool strategy has made every device's pool buffer: each
// device's first sub-buffer makes its pool, and buffer #d is device d's first (round robin). Samples before
// it hold the pools' lumps, which are no cost per buffer.
func (s *JobResult) PoolsMadeBy() uint64 { return uint64(max(len(s.Devices), 1)) }

// MadeRange is where a job's end lies in buffers: from the last the device confirmed to the last made,
// the same number where nothing was in flight.
func (s *JobResult) MadeRange() (from, to uint64) {
	if c := s.ConfirmedOK; c != nil && *c < s.AllocationsOK {
		return *c, s.AllocationsOK
	}
	return s.AllocationsOK, s.AllocationsOK
}

// Replication is the replication factor where device memory was placed (PlacedFraction); results written
// before that rule may hold a factor near 0, which is no replication at all.
func (s *JobResult) Replication() (float64, bool) {
	if s.ReplicationFactor == nil || *s.ReplicationFactor < PlacedFraction {
		return 0, false
	}
	return *s.ReplicationFactor, true
}

// JudgedFit is the strategy's fit, judged from its kept samples for results written before fits were
// judged (those kept their first and last samples, so the span is right; the count is what was kept).
func (s *JobResult) JudgedFit() *Fit {
	if s.Fit != nil {
		return s.Fit
	}
	var lo, hi uint64
	for i, smp := range s.Samples {
		if i == 0 || smp.Index < lo {
			lo = smp.Index
		}
		hi = max(hi, smp.Index)
	}
	return JudgeFit(len(s.Samples), lo, hi, s.AllocationsOK)
}

// JobLimit is what ended one strategy, as the findings classify it, with the numbers the
// classification rests on: what SetFindings stores in the strategy's Limit and LimitEvidence.
type JobLimit struct {
	Limit    Limit
	Evidence map[string]float64
}

// Snapshot is a copy of the run that later appends to the run's jobs leave as it is: what the engine gives
// its observers while it goes on writing the run.
func (r *Run) Snapshot() *Run {
	cp := *r
	cp.Jobs = slices.Clone(r.Jobs)
	return &cp
}

// Thinned is a copy of the run with at most n samples of each job (Thin), for a document that shows
// fewer; the run is left as it is.
func (r *Run) Thinned(n int) *Run {
	cp := r.Snapshot()
	for i := range cp.Jobs {
		cp.Jobs[i].Samples = Thin(cp.Jobs[i].Samples, n)
	}
	return cp
}

// WithFindings returns a copy of the run with what the findings derived stored in it: each job's limit and
// its evidence (limits holds one per job, in the run's order), the findings, and the verdict (their
// sentences, the headline first). It leaves the run as it is; findings.Judge is its one caller, and what
// it returns is what run.json writes. The copy has jobs of its own; what it never writes (samples, devices,
// the environment) it shares with the run.
func (r *Run) WithFindings(findings []Finding, limits []JobLimit) *Run {
	verdict := make([]string, len(findings))
	for i, f := range findings {
		verdict[i] = f.Sentence
	}
	cp := WithJudgement(r, Judgement{Verdict: verdict, Findings: findings})
	cp.Jobs = slices.Clone(r.Jobs)
	for i := range cp.Jobs {
		var l JobLimit
		if i < len(limits) {
			l = limits[i]
		}
		withLimit(&cp.Jobs[i], l)
	}
	return cp
}

// Finding is one sentence of the verdict with what it rests on.
type Finding struct {
	Kind       FindingKind        `json:"kind"`
	Strategies []Strategy         `json:"strategies,omitempty"`
	Variant    string             `json:"variant,omitempty"` // the variant the finding is about, where not the default
	Flags      string             `json:"flags,omitempty"`   // the flag set the finding is about, where not the default
	Sizes      []uint64           `json:"sizes,omitempty"`
	Sentence   string             `json:"sentence"`
	Evidence   map[string]float64 `json:"evidence,omitempty"`
	// Claims are what the sentence asserts that its evidence must show (see ClaimKind), each checked on
	// Evidence before the sentence was made.
	Claims []ClaimKind `json:"claims,omitempty"`
	// Source is where a statement about a runtime comes from (a source file, the specification, an
	// observation), when the sentence relies on one.
	Source string `json:"source,omitempty"`
	// About is, for a headline, the kind of finding it states (first-failure, completed, deferred): the
	// terminal's short verdict does not say that fact again.
	About FindingKind `json:"about,omitempty"`
	// Claim is the sentence without the label of its variant and flag set ("With flags X: "), and Label
	// that label; both empty where the run has one group. The short verdict merges one claim of several
	// groups under their labels. In memory only: findings are derived again from a loaded run.
	Claim string `json:"-"`
	Label string `json:"-"`
}

// DryRun is what run --dry-run prints: the jobs a run would do and the most memory each could take, with
// nothing allocated.
type DryRun struct {
	Platform       Platform    `json:"platform"`
	Devices        []Device    `json:"devices"`
	Jobs           []DryRunJob `json:"jobs"`
	SetupSeconds   float64     `json:"setup_timeout_seconds"`
	HangSeconds    float64     `json:"hang_timeout_seconds"`
	TimeoutSeconds float64     `json:"timeout_seconds"`
	HostReserve    uint64      `json:"host_reserve_bytes"`
	HostAvailable  uint64      `json:"host_available_bytes"`
	// CgroupLimit, CgroupFree and CgroupReserve are the memory cgroup's limit, its free memory now and the
	// reserve the guard keeps below the limit, where the tool runs in a memory cgroup with a limit.
	CgroupLimit   uint64 `json:"cgroup_limit_bytes,omitempty"`
	CgroupFree    uint64 `json:"cgroup_free_bytes,omitempty"`
	CgroupReserve uint64 `json:"cgroup_reserve_bytes,omitempty"`
	Touch         Touch  `json:"touch"`
	// Repeat is how many times each job runs (run --repeat); absent: once.
	Repeat int `json:"repeat,omitempty"`
	// Live is a plan printed before a run that allocates (run -v), not a dry run's.
	Live bool `json:"-"`
}

// DryRunJob is one strategy at one size, in one worker, and the most memory it could take: on the host, if
// the runtime keeps a copy of every buffer there; on each device, if it places every buffer of a shared
// context on every device (capped at the device's memory).
type DryRunJob struct {
	Strategy         Strategy `json:"strategy"`
	Variant          string   `json:"variant,omitempty"`
	Flags            string   `json:"flags,omitempty"`
	SizeBytes        uint64   `json:"size_bytes"`
	Buffers          uint64   `json:"buffers"`
	Bytes            uint64   `json:"bytes"`
	WorstHostBytes   uint64   `json:"worst_case_host_bytes"`
	WorstDeviceBytes uint64   `json:"worst_case_device_bytes"`
}

// Budget returns how many allocations a strategy makes at a given buffer size: the smaller of MaxAllocs
// and MaxBytes divided by the size.
func (c *Config) Budget(size uint64) uint64 {
	n := c.MaxAllocs
	if c.MaxBytes > 0 && size > 0 {
		n = min(n, c.MaxBytes/size)
	}
	return n
}

// DeviceModel names the devices a run used by model: "2x NVIDIA H200", "NVIDIA H200, NVIDIA A100".
func DeviceModel(devs []Device) string {
	counts := map[string]int{}
	var order []string
	for _, d := range devs {
		if counts[d.Name] == 0 {
			order = append(order, d.Name)
		}
		counts[d.Name]++
	}
	var parts []string
	for _, n := range order {
		if counts[n] > 1 {
			parts = append(parts, fmt.Sprintf("%dx %s", counts[n], n))
		} else {
			parts = append(parts, n)
		}
	}
	if len(parts) == 0 {
		return "no devices"
	}
	return strings.Join(parts, ", ")
}

// DriverVersions lists the devices' driver versions, each once.
func DriverVersions(devs []Device) string {
	var vs []string
	for _, d := range devs {
		if !slices.Contains(vs, d.DriverVersion) {
			vs = append(vs, d.DriverVersion)
		}
	}
	return strings.Join(vs, ", ")
}
