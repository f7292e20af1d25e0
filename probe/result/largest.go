package result

// TryOutcome is how one try of `largest` ended.
type TryOutcome string

// The outcomes of a try.
const (
	TryVerified TryOutcome = "verified" // created, filled, and its first and last page read back as filled
	TryRefused  TryOutcome = "refused"  // clCreateBuffer returned an error
	TryFailed   TryOutcome = "failed"   // the fill, the wait or the read returned an error
	TryWrong    TryOutcome = "wrong"    // every call said success, and the read-back does not hold the fill
	TryHung     TryOutcome = "hung"     // the fill never completed within the try's hang limit
	TryCrashed  TryOutcome = "crashed"  // the runtime took the worker down
	TrySetup    TryOutcome = "setup"    // the device's context or queue could not be made
	// TryOOMKilled: the kernel's OOM killer ended the worker (the machine's, or its memory cgroup's).
	TryOOMKilled TryOutcome = "oom-killed"
	// TryInterrupted: Ctrl-C stopped the try in flight; it says nothing of the size.
	TryInterrupted TryOutcome = "interrupted"
)

// Settled reports whether a try's outcome says something of its size: every outcome but an interrupt.
func (o TryOutcome) Settled() bool { return o != TryInterrupted }

// LargestBound says what set the most a search tried.
type LargestBound string

// The bounds of a search.
const (
	BoundDevice   LargestBound = "device-memory" // the device's global memory
	BoundMaxBytes LargestBound = "max-bytes"     // --max-bytes
	BoundHost     LargestBound = "host-memory"   // the host's available memory above --host-reserve
	BoundCgroup   LargestBound = "cgroup-memory" // the memory cgroup's free memory above its reserve
	// BoundAddressSpace: the address-space limit (ulimit -v) less what a worker maps besides its buffer.
	BoundAddressSpace LargestBound = "address-space"
)

// Largest is what `clmemprobe largest` found: per device, the largest single buffer that is created,
// placed and proven, with every try of the search.
type Largest struct {
	SchemaVersion int             `json:"schema_version"`
	Kind          string          `json:"kind"` // LargestKind
	Tool          Tool            `json:"tool"`
	Started       string          `json:"started"`
	Command       []string        `json:"command"`
	Platform      Platform        `json:"platform"`
	Devices       []LargestDevice `json:"devices"`
	// Interrupted says Ctrl-C ended the search: the device searched then is marked, devices not reached are
	// absent.
	Interrupted bool `json:"interrupted,omitempty"`
	// Judgement is the verdict: one headline per device.
	Judgement
}

// LargestKind marks a largest result.
const LargestKind = "clmemprobe-largest"

// LargestDevice is one device's search.
type LargestDevice struct {
	Index          int    `json:"index"`
	Name           string `json:"name"`
	MaxAllocBytes  uint64 `json:"max_alloc_bytes"`
	GlobalMemBytes uint64 `json:"global_mem_bytes"`
	FreeBytes      uint64 `json:"free_bytes,omitempty"`
	// BoundBytes is the most the search tried: the device's memory, less for a device whose memory is the
	// host's (what the host can spare), or --max-bytes.
	BoundBytes uint64 `json:"bound_bytes"`
	// BoundBy says what set BoundBytes; CgroupLimitBytes is the limit of the memory cgroup the tool ran in.
	BoundBy          LargestBound `json:"bound_by,omitempty"`
	CgroupLimitBytes uint64       `json:"cgroup_limit_bytes,omitempty"`
	// AddressSpaceLimitBytes is the address-space limit (RLIMIT_AS, ulimit -v) the workers ran under, where
	// one bounded the search (a device whose memory is the host's maps each buffer in the worker), and
	// WorkerMappedBytes the most a verified try's worker mapped besides its buffer (VmPeak less the buffer).
	AddressSpaceLimitBytes uint64 `json:"address_space_limit_bytes,omitempty"`
	WorkerMappedBytes      uint64 `json:"worker_mapped_bytes,omitempty"`
	// DeviceUsedAtStartBytes is the device's memory in use before the first try's buffer, where a device
	// sampler read it: other processes' and what the runtime keeps, which the search could not use.
	DeviceUsedAtStartBytes *uint64 `json:"device_used_at_start_bytes,omitempty"`
	// Interrupted says Ctrl-C stopped this device's search: its largest is only the largest verified
	// before, and the tries not made are absent.
	Interrupted          bool             `json:"interrupted,omitempty"`
	LargestVerifiedBytes uint64           `json:"largest_verified_bytes"`
	Patterns             []LargestPattern `json:"patterns"`
	Tries                []LargestTry     `json:"tries"`
}

// LargestPattern is the search with one fill pattern size.
type LargestPattern struct {
	PatternBytes         int    `json:"pattern_bytes"`
	LargestVerifiedBytes uint64 `json:"largest_verified_bytes"`
}

// LargestTry is one try.
type LargestTry struct {
	SizeBytes    uint64     `json:"size_bytes"`
	PatternBytes int        `json:"pattern_bytes"`
	Outcome      TryOutcome `json:"outcome"`
	Code         int32      `json:"code,omitempty"`
	Call         string     `json:"call,omitempty"`
	Seconds      float64    `json:"seconds"`
	FillSeconds  float64    `json:"fill_seconds,omitempty"`
	// CreateSeconds is how long clCreateBuffer took; Stage is the call a try that hung was in.
	CreateSeconds float64 `json:"create_seconds,omitempty"`
	Stage         Stage   `json:"stage,omitempty"`
	WrongAt       uint64  `json:"wrong_at,omitempty"`
	Detail        string  `json:"detail,omitempty"`
	// MappedBesidesBytes is, for a verified try, the most address space its worker mapped (VmPeak) less
	// the buffer: the runtime's libraries, threads and malloc arenas (which glibc makes as threads contend,
	// so it differs from worker to worker by 64 MiB steps).
	MappedBesidesBytes uint64 `json:"mapped_besides_bytes,omitempty"`
}
