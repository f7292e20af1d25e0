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
)

// Strategies lists every strategy in the order they run.
var Strategies = []Strategy{Shared, PerDevice, MigrateFirst, DeviceList}

// DefaultStrategies are run when none is asked for.
var DefaultStrategies = []Strategy{Shared, PerDevice, MigrateFirst}

// SharesContext reports whether the strategy puts every device in one context.
func (s Strategy) SharesContext() bool { return s != PerDevice }

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
)

// Outcomes lists the outcomes.
var Outcomes = []Outcome{OutcomeCompleted, OutcomeFailed, OutcomeCrashed, OutcomeHung, OutcomeStopped, OutcomeUnsupported}

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
