package wire

import (
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// StrategySpec is one strategy job: what the worker child runs.
type StrategySpec struct {
	Platform int             `json:"platform"`
	Devices  []int           `json:"devices"`
	Strategy result.Strategy `json:"strategy"`
	Size     uint64          `json:"size"`
	// Flags are the cl_mem_flags of every buffer; with use-host-ptr or copy-host-ptr the worker maps the
	// host memory they take.
	Flags          result.MemFlags `json:"flags"`
	Count          uint64          `json:"count"`
	Touch          result.Touch    `json:"touch"`
	HostReserve    uint64          `json:"host_reserve"`
	SampleInterval time.Duration   `json:"sample_interval"`
	// PerBuffer asks for a wait after every buffer instead of batches (run --attribution per-buffer).
	PerBuffer bool `json:"per_buffer,omitempty"`
	// Limits are the soft limits the worker sets before anything else, by name (RLIMIT_NOFILE).
	Limits map[string]uint64 `json:"limits,omitempty"`
	// PoolSize is the pool strategy's pool buffer size; 0: each device's maximum allocation.
	PoolSize uint64 `json:"pool_size,omitempty"`
}

// StrategyInfo is sent once the worker has set up its contexts, before the loop.
type StrategyInfo struct {
	DeviceSampler result.DeviceSource `json:"device_sampler"`
	MaxMapCount   uint64              `json:"max_map_count"`
	// LoopStarted is the wall clock when the loop began; sample times count from it.
	LoopStarted time.Time `json:"loop_started"`
	// AddressSpace is the worker's address-space limit in bytes.
	AddressSpace uint64 `json:"address_space"`
	// Diagnostics names the driver diagnostics turned on for the contexts, if any.
	Diagnostics string `json:"diagnostics,omitempty"`
	// Resources is the ledger as the loop begins: limits, values at the start, the memory cgroup, the
	// devices' memory and processes.
	Resources *result.Resources `json:"resources,omitempty"`
	// DeviceSizes are the devices' global memory and largest allocation as this worker's runtime reports
	// them, under the job's settings.
	DeviceSizes []result.DeviceSize `json:"device_sizes,omitempty"`
}

// Attribution modes: how a failure that a runtime reports after the call that caused it is pinned to its
// buffer.
const (
	// AttributionBatched enqueues each buffer's commands with an event and waits for the device once per
	// batch; a failed batch names its first failed command by the events' status.
	AttributionBatched = "batched"
	// AttributionPerBuffer waits for the device after every buffer.
	AttributionPerBuffer = "per-buffer"
)

// StrategyAnswer is the worker's last word: how the loop ended.
type StrategyAnswer struct {
	Outcome result.Outcome `json:"outcome"`
	Reason  string         `json:"reason,omitempty"`
	// StopCause is what stopped a loop that answers OutcomeStopped, as the worker knew it.
	StopCause     result.StopCause     `json:"stop_cause,omitempty"`
	AllocationsOK uint64               `json:"allocations_ok"`
	FirstFailure  *result.FirstFailure `json:"first_failure,omitempty"`
	LoopSeconds   float64              `json:"loop_seconds"`
	// Guard is the reserve the host guard stopped the loop at, when it did.
	Guard result.Guard `json:"guard,omitempty"`
	// Attribution is how failures were pinned to buffers (AttributionBatched or AttributionPerBuffer), and
	// AttributionNote why it fell back.
	Attribution     string `json:"attribution,omitempty"`
	AttributionNote string `json:"attribution_note,omitempty"`
}

// CgroupReserve is the reserve kept below a memory cgroup's limit: the smaller of the host reserve and a
// sixteenth of the limit, at least 32 MiB. A container of 1 GiB keeps 64 MiB; the host's reserve (a
// gigabyte or more) would stop a loop in such a container before its first buffer. The worker's guard stops
// its loop at it, and the parent's backstop kills a worker stuck in a call at half of it: both sides must
// agree on it.
func CgroupReserve(hostReserve, limit uint64) uint64 {
	return min(hostReserve, max(limit/cgroupReserveShare, minCgroupReserve))
}

// The cgroup reserve's share of the limit and its least size.
const (
	cgroupReserveShare = 16
	minCgroupReserve   = 32 << 20
)
