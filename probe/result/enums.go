package result

// Strategy is how the buffers of the loop are laid out over contexts. Buffer i is always meant for device
// i mod n of the selected devices.
type Strategy string

// The strategies.
const (
	Shared       Strategy = "shared"        // one context over all devices
	PerDevice    Strategy = "per-device"    // one context per device
	MigrateFirst Strategy = "migrate-first" // shared context, each buffer migrated to its device at once
	DeviceList   Strategy = "device-list"   // shared context, buffer placed on its device by CL_MEM_DEVICE_HANDLE_LIST_KHR
	// Pool: one context per device, each buffer a sub-buffer (clCreateSubBuffer) carved from a pool buffer
	// of the device's, a new pool when one is full: the way programs pool to escape per-allocation costs.
	Pool Strategy = "pool"
)

// Strategies lists every strategy in the order they run.
var Strategies = []Strategy{Shared, PerDevice, MigrateFirst, DeviceList, Pool}

// DefaultStrategies are run when none is asked for.
var DefaultStrategies = []Strategy{Shared, PerDevice, MigrateFirst}

// SharesContext reports whether the strategy puts every device in one context.
func (s Strategy) SharesContext() bool { return s != PerDevice && s != Pool }

// Touch is what the loop does to each buffer after creating it.
type Touch string

// The touch modes.
const (
	TouchNone   Touch = "none"   // create only: exactly the user's loop
	TouchFill   Touch = "fill"   // clEnqueueFillBuffer on the buffer's device
	TouchKernel Touch = "kernel" // a kernel writes every byte on the buffer's device
)

// Touches lists the touch modes.
var Touches = []Touch{TouchNone, TouchFill, TouchKernel}

// Outcome is how a strategy ended.
type Outcome string

// The outcomes.
const (
	OutcomeCompleted   Outcome = "completed"   // budget reached, no failure
	OutcomeFailed      Outcome = "failed"      // an OpenCL call failed
	OutcomeCrashed     Outcome = "crashed"     // the worker died: signal or exit code recorded
	OutcomeHung        Outcome = "hung"        // the watchdog saw no progress
	OutcomeStopped     Outcome = "stopped"     // host guard, timeout or interrupt
	OutcomeUnsupported Outcome = "unsupported" // the runtime lacks what the strategy needs
	// OutcomeWrong: the runtime reported a fill done and the read-back does not hold it, so nothing was
	// proven placed (--touch fill reads back its first buffer's last page).
	OutcomeWrong Outcome = "wrong"
)

// Outcomes lists the outcomes.
var Outcomes = []Outcome{OutcomeCompleted, OutcomeFailed, OutcomeCrashed, OutcomeHung, OutcomeStopped, OutcomeUnsupported, OutcomeWrong}

// StopCause is what stopped a job that was stopped or hung, as the engine knew it when it stopped it: the
// reason beside it says the same in words, with the figures, and no reader has to find the cause in them.
type StopCause string

// The stop causes.
const (
	StopInterrupted StopCause = "interrupted" // the run was cancelled (Ctrl-C)
	StopTimedOut    StopCause = "timed-out"   // the job ran past its total time limit (--timeout)
	StopHung        StopCause = "hung"        // set-up took too long, or the loop stopped moving (outcome hung)
	// StopHostGuard: the host guard stopped the loop before one more buffer would take available memory
	// below the reserve, or the parent's backstop killed a worker stuck in a call while memory drained.
	StopHostGuard StopCause = "host-guard"
	// StopHostMapping: the tool could not map the host memory a buffer's flags need (its own allocation,
	// not the runtime's, failed).
	StopHostMapping StopCause = "host-mapping"
)

// StopCauses lists the stop causes.
var StopCauses = []StopCause{StopInterrupted, StopTimedOut, StopHung, StopHostGuard, StopHostMapping}

// stopWords are the causes in the words a table cell or a refusal uses.
var stopWords = map[StopCause]string{StopInterrupted: "interrupted", StopTimedOut: "timed out", StopHung: "hung",
	StopHostGuard: "host guard", StopHostMapping: "host mapping"}

// Words is the cause in a few words ("host guard", "timed out"), "" for none.
func (c StopCause) Words() string { return stopWords[c] }

// Stage is where in the loop a failure surfaced, or where a worker was when it crashed or hung.
type Stage string

// The stages.
const (
	StageSetup   Stage = "setup"   // loading, context, queue or program creation, before the first buffer
	StageCreate  Stage = "create"  // clCreateBuffer / clCreateBufferWithProperties
	StageTouch   Stage = "touch"   // enqueueing the fill or the kernel
	StageMigrate Stage = "migrate" // enqueueing clEnqueueMigrateMemObjects
	StageFinish  Stage = "finish"  // clFinish after the buffer's commands
	StageDone    Stage = "done"    // the loop ended
)

// Stages lists the stages in loop order.
var Stages = []Stage{StageSetup, StageCreate, StageTouch, StageMigrate, StageFinish, StageDone}

// Limit is what a strategy that did not complete ran into, as the findings classify it.
type Limit string

// The limits.
const (
	LimitDeviceMemory    Limit = "device-memory"    // the device's memory ran out
	LimitHostMemory      Limit = "host-memory"      // system memory ran out, also memory outside the process's RSS
	LimitContext         Limit = "context"          // the multi-device context costs more: per-device went well further
	LimitAllocationCount Limit = "allocation-count" // the same count at every size: a cap on the number of allocations
	LimitFileDescriptors Limit = "file-descriptors" // open descriptors reached RLIMIT_NOFILE (ulimit -n)
	LimitCgroupMemory    Limit = "cgroup-memory"    // the memory cgroup's limit: a container's or a batch job's
	LimitMappings        Limit = "mappings"         // near vm.max_map_count
	LimitAddressSpace    Limit = "address-space"    // near the process's address-space limit
	LimitFlags           Limit = "flags"            // the runtime rejected the buffers' flags: no buffer was made
	LimitGPUFault        Limit = "gpu-fault"        // the kernel logged a GPU fault, hang or reset while the job ran
	LimitRuntime         Limit = "runtime"          // a runtime-internal limit the measurements do not explain
	LimitUnknown         Limit = "unknown"          // not enough was measured to tell
)

// Limits lists the limits.
var Limits = []Limit{LimitDeviceMemory, LimitHostMemory, LimitContext, LimitAllocationCount, LimitFileDescriptors, LimitCgroupMemory,
	LimitMappings, LimitAddressSpace, LimitFlags, LimitGPUFault,
	LimitRuntime, LimitUnknown}

// FindingKind says what a finding is about.
type FindingKind string

// The kinds of finding.
const (
	FindingHeadline   FindingKind = "headline" // what happened, and what to try next
	FindingFailure    FindingKind = "first-failure"
	FindingCompleted  FindingKind = "completed"
	FindingComparison FindingKind = "comparison"  // how far strategies got against each other
	FindingOutcome    FindingKind = "outcome"     // crashed, hung, stopped, unsupported
	FindingLimit      FindingKind = "limit"       // what ended a strategy
	FindingCost       FindingKind = "cost"        // host, system and device memory per buffer
	FindingOutsideRSS FindingKind = "outside-rss" // host memory per buffer that RSS does not show
	FindingDeferred   FindingKind = "deferred"    // allocation at first use
	FindingCode       FindingKind = "code"        // what a code means, and does not
	FindingUnmeasured FindingKind = "unmeasured"  // what could not be measured
	FindingVariant    FindingKind = "variant"     // what a variant's settings changed
	FindingFlags      FindingKind = "flags"       // what a flag set costs and changes against read-write
	FindingLike       FindingKind = "like"        // the strategies held against the traced program (run --like)
	FindingRepeated   FindingKind = "repeated"    // how many of a job's runs (run --repeat) ended as its first
)

// ClaimKind is one thing a finding's sentence asserts that is only true where the evidence it carries shows
// it: the judge makes a claim only where the conditions of its kind hold on that evidence, and otherwise
// says what cannot be told. Scripts read them to know what a sentence asserts without parsing it.
type ClaimKind string

// The kinds of claim.
const (
	// ClaimFurther holds one job's count against another's ("reached N buffers, 1.5x as many as"): only
	// between jobs placed alike, on the same devices, with the same budget.
	ClaimFurther ClaimKind = "went-further"
	// ClaimUseLayout tells the user to use another job's layout: both jobs known to have placed alike.
	ClaimUseLayout ClaimKind = "use-layout"
	// ClaimSpare says memory was to spare when a job ended: the run's own reading (its memory cgroup where
	// it has a limit) showed room above a few buffers.
	ClaimSpare ClaimKind = "memory-to-spare"
	// ClaimHostRanOut says host memory ran out: the system's available memory read low, or the kernel's
	// OOM killer named the process.
	ClaimHostRanOut ClaimKind = "host-memory-ran-out"
	// ClaimOutside says memory per buffer was held outside the process: a machine-wide counter fell faster
	// than the RSS grew by more than the threshold, and the run's own cgroup, where it has one, agrees.
	ClaimOutside ClaimKind = "held-outside-process"
	// ClaimNeverPlaced says the buffers were never placed (the runtime defers allocation to first use): the
	// memory they live in, host and device, grew by less than a twentieth of a buffer per buffer.
	ClaimNeverPlaced ClaimKind = "never-placed"
	// ClaimExactCount names how many buffers a job made as one number: the device confirmed every one (no
	// batch was in flight when it ended).
	ClaimExactCount ClaimKind = "exact-count"
)
