package result

// ExchangeRun is the result of `clmemprobe exchange`, with the same header as a probe run.
type ExchangeRun struct {
	SchemaVersion int          `json:"schema_version"`
	Tool          Tool         `json:"tool"`
	Started       string       `json:"started"`
	Command       []string     `json:"command"`
	Environment   *Environment `json:"environment,omitempty"`
	Platform      Platform     `json:"platform"`
	DeviceInfo    []Device     `json:"device_info"`
	Exchange
}

// Exchange is what the halo exchange did and measured.
type Exchange struct {
	Devices     []int  `json:"devices"`
	Cells       uint64 `json:"cells_per_device"`
	Halo        uint64 `json:"halo_cells"`
	Steps       uint64 `json:"steps"`
	Sync        string `json:"sync"`
	VerifyEvery uint64 `json:"verify_every,omitempty"`
	BufferFlags string `json:"buffer_flags"`
	// Verified is true when the result was read back and compared with the host reference.
	Verified   bool            `json:"verified"`
	Correct    bool            `json:"correct"`
	WrongCells uint64          `json:"wrong_cells"`
	MaxError   uint64          `json:"max_error"`
	Checks     []ExchangeCheck `json:"checks"`
	Seconds    float64         `json:"seconds"`
	// Per step, medians over steps and devices, from event profiling.
	KernelMicros         float64        `json:"kernel_us"`
	MigrateMicros        float64        `json:"migrate_us"`
	BytesMigratedPerStep uint64         `json:"bytes_migrated_per_step"`
	MigrateGBps          float64        `json:"migrate_gbps"`
	Paths                []ExchangePath `json:"paths"`
	// Interrupted says Ctrl-C ended the exchange after StepsDone of Steps steps: nothing was verified or
	// timed, and what the document has is only its plan and how far it got.
	Interrupted bool   `json:"interrupted,omitempty"`
	StepsDone   uint64 `json:"steps_done,omitempty"`
}

// ExchangeCheck is one comparison with the host reference.
type ExchangeCheck struct {
	Step       uint64 `json:"step"`
	WrongCells uint64 `json:"wrong_cells"`
	MaxError   uint64 `json:"max_error"`
}

// ExchangePath is one way of moving bytes from device 0 to device 1, timed from enqueue to completion.
type ExchangePath struct {
	Path         string  `json:"path"`
	Bytes        uint64  `json:"bytes"`
	MedianMicros float64 `json:"median_us"`
	GBps         float64 `json:"gbps"`
}
