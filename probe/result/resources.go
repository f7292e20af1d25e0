package result

// Resources is a job's resource ledger beside its memory figures: every resource the worker could see
// besides memory, its value when the loop began and at its end, its cost per buffer where the samples allow a
// fit, and its limit where one exists. A resource the worker could not see is absent, never zero.
type Resources struct {
	// FDs are the worker's open file descriptors against RLIMIT_NOFILE.
	FDs *Resource `json:"file_descriptors,omitempty"`
	// LockedMemory is the worker's locked memory (VmLck) against RLIMIT_MEMLOCK.
	LockedMemory *Resource `json:"locked_memory,omitempty"`
	// Cgroup is the memory cgroup the worker ran in (a container's or a batch job's limit).
	Cgroup *Cgroup `json:"cgroup,omitempty"`
	// Devices are the devices' memory in use when the loop began and the processes using them, where a
	// sampler can see them.
	Devices []DeviceLedger `json:"devices,omitempty"`
}

// CgroupOf is the ledger's memory cgroup; nil for a nil ledger or none.
func (r *Resources) CgroupOf() *Cgroup {
	if r == nil {
		return nil
	}
	return r.Cgroup
}

// Resource is one counted resource of the worker: its value when the loop began and at the end, its cost
// per buffer (least-squares slope over the samples, where the fit rule allows one) and its limit (0: none
// or not known), with where the limit comes from.
type Resource struct {
	AtStart     uint64   `json:"at_start"`
	AtEnd       uint64   `json:"at_end"`
	PerBuffer   *float64 `json:"per_buffer,omitempty"`
	Limit       uint64   `json:"limit,omitempty"`
	LimitSource string   `json:"limit_source,omitempty"` // "ulimit -n", "ulimit -l", "memory.max", ...
}

// Cgroup is the memory cgroup the worker ran in. Usage is the cgroup's working set: its charged memory
// less inactive file pages, which the kernel reclaims before its OOM killer acts (the figure the kubelet
// evicts by).
type Cgroup struct {
	Version int    `json:"version"` // 1 or 2
	Path    string `json:"path"`    // within the hierarchy, as /proc/self/cgroup names it
	// Memory is the working set against the memory limit (memory.max, memory.limit_in_bytes); Limit 0: none.
	Memory Resource `json:"memory"`
	// OOMKillsAtStart and OOMKillsAtEnd are the cgroup's count of processes its OOM killer ended
	// (memory.events oom_kill, memory.oom_control oom_kill) when the job began and when its worker ended.
	OOMKillsAtStart uint64 `json:"oom_kills_at_start"`
	OOMKillsAtEnd   uint64 `json:"oom_kills_at_end"`
}

// DeviceLedger is one device's memory before the loop and who held it, as far as a sampler tells.
type DeviceLedger struct {
	Device int `json:"device"`
	// UsedAtStartBytes is the device's used memory when the loop began: other processes' memory, and this
	// worker's context.
	UsedAtStartBytes uint64 `json:"used_at_start_bytes"`
	// Processes are the processes holding memory on the device when the loop began and when it ended
	// (NVML's running compute and graphics processes), this worker's own marked.
	ProcessesAtStart []DeviceProcess `json:"processes_at_start,omitempty"`
	ProcessesAtEnd   []DeviceProcess `json:"processes_at_end,omitempty"`
}

// DeviceProcess is one process with memory on a device.
type DeviceProcess struct {
	PID       uint32 `json:"pid"`
	Name      string `json:"name,omitempty"` // from /proc/PID/comm where this machine sees the process
	UsedBytes uint64 `json:"used_bytes"`
	Own       bool   `json:"own,omitempty"` // this job's worker
}

// OthersBytes is what the processes other than the worker held on the device at the end (at the start
// where the end was not read), and whether any process list was read at all.
func (d *DeviceLedger) OthersBytes() (uint64, bool) {
	procs := d.ProcessesAtEnd
	if procs == nil {
		procs = d.ProcessesAtStart
	}
	if procs == nil {
		return 0, false
	}
	var sum uint64
	for _, p := range procs {
		if !p.Own {
			sum += p.UsedBytes
		}
	}
	return sum, true
}

// DeviceSize is one device's memory as the job's worker saw it: a variant's settings (POCL_MEMORY_LIMIT, a
// driver key) can change what a device reports, so each job records its own.
type DeviceSize struct {
	Device         int    `json:"device"`
	GlobalMemBytes uint64 `json:"global_mem_bytes"`
	MaxAllocBytes  uint64 `json:"max_alloc_bytes"`
}

// GlobalOf is a device's global memory as the job saw it, else as the run listed it; 0 when neither tells.
func GlobalOf(r *Run, s *JobResult, dev int) uint64 {
	for _, d := range s.DeviceSizes {
		if d.Device == dev {
			return d.GlobalMemBytes
		}
	}
	for _, d := range r.Devices {
		if d.Index == dev {
			return d.GlobalMemBytes
		}
	}
	return 0
}

// MaxAllocOf is a device's maximum allocation as the job saw it, else as the run listed it; 0 when
// neither tells.
func MaxAllocOf(r *Run, s *JobResult, dev int) uint64 {
	for _, d := range s.DeviceSizes {
		if d.Device == dev {
			return d.MaxAllocBytes
		}
	}
	for _, d := range r.Devices {
		if d.Index == dev {
			return d.MaxAllocBytes
		}
	}
	return 0
}

// Guard is what the host guard stopped a job before: the system's available memory, the cgroup's, or the
// worker's address space under the address-space limit (ulimit -v) it inherited.
type Guard string

// The guards.
const (
	GuardSystem       Guard = "system-memory"
	GuardCgroup       Guard = "cgroup-memory"
	GuardAddressSpace Guard = "address-space"
)
