package table

import (
	"fmt"
	"io"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// WriteExchangeText renders an exchange run for a terminal.
func WriteExchangeText(w io.Writer, e findings.JudgedExchange, opts render.Options) error {
	return WriteExchange(w, e, render.Terminal(opts))
}

func WriteExchange(w io.Writer, j findings.JudgedExchange, st render.Style) error {
	e := j.Exchange()
	b := &strings.Builder{}
	var devs []string
	for _, d := range e.DeviceInfo {
		devs = append(devs, st.Text(fmt.Sprintf("[%d] %s", d.Index, d.Name)))
	}
	if st.Markdown {
		fmt.Fprintf(b, "# clmemprobe exchange: %s\n\n**%s**\n\n", strings.Join(devs, ", "), st.Text(j.Conclusion()))
	} else {
		fmt.Fprintf(b, "clmemprobe %s exchange: %s, platform %s\n%s\n", st.Text(e.Tool.Version), strings.Join(devs, ", "),
			st.Text(e.Platform.Name), st.Text(j.Conclusion()))
	}
	migration := fmt.Sprintf("migration %.1f µs for %s (%.3f GB/s)", e.MigrateMicros, units.Bytes(e.BytesMigratedPerStep), e.MigrateGBps)
	if e.MigrateMicros == 0 {
		migration = fmt.Sprintf("migration of %s not timed: the runtime's event profiling gives it no duration", units.Bytes(e.BytesMigratedPerStep))
	}
	plan := fmt.Sprintf("%d cells per device, halo %d cells, %d steps, sync %s, buffers %s", e.Cells, e.Halo, e.Steps, st.Text(e.Sync), st.Text(render.OrDash(e.BufferFlags)))
	if e.Interrupted { // nothing was timed
		fmt.Fprintln(b, plan)
	} else {
		fmt.Fprintf(b, "%s; per step (median of steps and devices): kernel %.1f µs, %s\n", plan, e.KernelMicros, migration)
	}
	if st.Markdown {
		b.WriteString("\n## Moving bytes from device 0 to device 1\n\n")
	}
	t := st.Table(b)
	t.Header("Path", "Bytes", "Median µs", "GB/s")
	for _, p := range e.Paths {
		if err := t.Append([]string{st.Text(p.Path), units.Bytes(p.Bytes), fmt.Sprintf("%.1f", p.MedianMicros), fmt.Sprintf("%.3f", p.GBps)}); err != nil {
			return err
		}
	}
	if len(e.Paths) > 0 {
		if err := t.Render(); err != nil {
			return err
		}
	}
	if st.Markdown {
		if e.Environment != nil {
			b.WriteString("\n## Environment\n\n")
			WriteEnvironment(b, e.Environment, st)
		}
		fmt.Fprintf(b, "\n## Reproduce\n\n%s", render.MdBlock(render.ShellQuote(e.Command), "sh"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
