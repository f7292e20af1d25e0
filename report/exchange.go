package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/clmemprobe/clmemprobe/report/units"
)

// writeExchangeText renders an exchange run for a terminal.
func writeExchangeText(w io.Writer, e *result.ExchangeRun) error { return writeExchange(w, e, false) }

// writeExchangeMarkdown renders an exchange run for a ticket.
func writeExchangeMarkdown(w io.Writer, e *result.ExchangeRun) error {
	return writeExchange(w, e, true)
}

func writeExchange(w io.Writer, e *result.ExchangeRun, markdown bool) error {
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
	migration := fmt.Sprintf("migration %.1f µs for %s (%.3f GB/s)", e.MigrateMicros, units.Bytes(e.BytesMigratedPerStep), e.MigrateGBps)
	if e.MigrateMicros == 0 {
		migration = fmt.Sprintf("migration of %s not timed: the runtime's event profiling gives it no duration", units.Bytes(e.BytesMigratedPerStep))
	}
	fmt.Fprintf(b, "%d cells per device, halo %d cells, %d steps, sync %s, buffers %s; per step (median of steps and devices): kernel %.1f µs, %s\n",
		e.Cells, e.Halo, e.Steps, e.Sync, OrDash(e.BufferFlags), e.KernelMicros, migration)
	if markdown {
		b.WriteString("\n## Moving bytes from device 0 to device 1\n\n")
	}
	t := NewTable(b, markdown)
	t.Header("Path", "Bytes", "Median µs", "GB/s")
	for _, p := range e.Paths {
		if err := t.Append([]string{p.Path, units.Bytes(p.Bytes), fmt.Sprintf("%.1f", p.MedianMicros), fmt.Sprintf("%.3f", p.GBps)}); err != nil {
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
