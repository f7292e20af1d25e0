package wire

import "github.com/clmemprobe/clmemprobe/probe/result"

// LargestSpec is one try of `largest`: a buffer of Size bytes on one device, filled with a pattern of
// PatternBytes bytes, its first and last page read back.
type LargestSpec struct {
	Platform     int    `json:"platform"`
	Device       int    `json:"device"`
	Size         uint64 `json:"size"`
	PatternBytes int    `json:"pattern_bytes"`
	Flags        uint64 `json:"flags"`
}

// LargestAnswer is how the try ended: its outcome, the code and the call where it failed, the time the fill
// took, and for a wrong read-back where it differed.
type LargestAnswer struct {
	Outcome     result.TryOutcome `json:"outcome"`
	Code        int32             `json:"code,omitempty"`
	Call        string            `json:"call,omitempty"`
	FillSeconds float64           `json:"fill_seconds,omitempty"`
	// DeviceUsedBefore is the device's memory in use just before the buffer was created, as the run's device
	// sampler reads it (HasDeviceUsed: one applied): other processes', and what the runtime keeps.
	DeviceUsedBefore uint64 `json:"device_used_before,omitempty"`
	HasDeviceUsed    bool   `json:"has_device_used,omitempty"`
	// CreateSeconds is how long clCreateBuffer took, where it returned.
	CreateSeconds float64 `json:"create_seconds,omitempty"`
	// WrongAt is the offset of the first byte the read-back did not hold the fill's at.
	WrongAt uint64 `json:"wrong_at,omitempty"`
	Error   string `json:"error,omitempty"` // a set-up that failed: the device or its context
	// MappedBesides is, for a verified try, the most address space the worker had mapped (VmPeak) less
	// the buffer's size: its runtime, context, queue and what the fill and read-back mapped, which an
	// address-space limit must hold besides the buffer (0: not read).
	MappedBesides uint64 `json:"mapped_besides,omitempty"`
}
