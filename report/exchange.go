package report

import (
	"fmt"
	"io"
	"strings"
)

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

// Conclusion is the one-sentence answer of an exchange run.
func (e *ExchangeRun) Conclusion() string {
	cells := e.Cells * uint64(len(e.Devices))
	switch {
	case !e.Verified:
		return "The result was not verified."
	case e.Correct:
		return fmt.Sprintf("Verified: all %d cells match the host reference after %d steps with --sync %s (%d check(s)).", cells, e.Steps, e.Sync, len(e.Checks))
	case e.Sync == "none":
		return fmt.Sprintf("Corruption observed: %d wrong cells (largest error %d) without event wait lists (--sync none): a migration ran before the producer's kernel finished.", e.WrongCells, e.MaxError)
	}
	return fmt.Sprintf("FAILED: %d wrong cells (largest error %d) with --sync events.", e.WrongCells, e.MaxError)
}

// WriteExchangeTable renders an exchange run for a terminal (markdown=false) or a ticket (markdown=true).
func WriteExchangeTable(w io.Writer, e *ExchangeRun, markdown bool) error {
	b := &strings.Builder{}
	var devs []string
	for _, d := range e.DeviceInfo {
		devs = append(devs, fmt.Sprintf("[%d] %s", d.Index, d.Name))
	}
	if markdown {
		fmt.Fprintf(b, "# clmemprobe exchange: %s\n\n**%s**\n\n", strings.Join(devs, ", "), e.Conclusion())
	} else {
		fmt.Fprintf(b, "clmemprobe %s exchange: %s, platform %q\n%s\n", e.Tool.Version, strings.Join(devs, ", "), e.Platform.Name, e.Conclusion())
	}
	migration := fmt.Sprintf("migration %.1f µs for %s (%.3f GB/s)", e.MigrateMicros, FormatBytes(e.BytesMigratedPerStep), e.MigrateGBps)
	if e.MigrateMicros == 0 {
		migration = fmt.Sprintf("migration of %s not timed: the runtime's event profiling gives it no duration", FormatBytes(e.BytesMigratedPerStep))
	}
	fmt.Fprintf(b, "%d cells per device, halo %d cells, %d steps, sync %s, buffers %s; per step (median of steps and devices): kernel %.1f µs, %s\n",
		e.Cells, e.Halo, e.Steps, e.Sync, OrDash(e.BufferFlags), e.KernelMicros, migration)
	if markdown {
		b.WriteString("\n## Moving bytes from device 0 to device 1\n\n")
	}
	t := NewTable(b, markdown)
	t.Header("Path", "Bytes", "Median µs", "GB/s")
	for _, p := range e.Paths {
		if err := t.Append([]string{p.Path, FormatBytes(p.Bytes), fmt.Sprintf("%.1f", p.MedianMicros), fmt.Sprintf("%.3f", p.GBps)}); err != nil {
			return err
		}
	}
	if len(e.Paths) > 0 {
		if err := t.Render(); err != nil {
			return err
		}
	}
	if markdown {
		if e.Environment != nil {
			b.WriteString("\n## Environment\n\n")
			writeEnvironment(b, e.Environment)
		}
		fmt.Fprintf(b, "\n## Reproduce\n\n```sh\n%s\n```\n", ShellQuote(e.Command))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
