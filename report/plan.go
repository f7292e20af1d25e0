package report

import (
	"fmt"
	"io"
	"time"

	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/clmemprobe/clmemprobe/report/units"
)

// writePlanText renders a plan for a terminal.
func writePlanText(w io.Writer, p *result.DryRun, opts Options) error {
	st := terminal(opts)
	if _, err := fmt.Fprintf(w, "clmemprobe run --dry-run: nothing is allocated. Platform %s, touch %s, devices:\n", st.text(p.Platform.Name), p.Touch); err != nil {
		return err
	}
	for _, d := range p.Devices {
		fmt.Fprintf(w, "  [%d] %s, %s global memory, %s at most per buffer\n", d.Index, st.text(d.Name), units.Bytes(d.GlobalMemBytes), units.Bytes(d.MaxAllocBytes))
	}
	t := st.table(w)
	t.Header("#", "Strategy", "Variant", "Size", "Buffers", "Bytes", "Worst case, host", "Worst case, each device")
	var worstHost, worstDev uint64
	for i, j := range p.Jobs {
		if err := t.Append([]string{fmt.Sprint(i + 1), st.text(string(j.Strategy)), st.text(OrDash(j.Variant)), units.Size(j.SizeBytes),
			fmt.Sprint(j.Buffers), units.Bytes(j.Bytes), units.Bytes(j.WorstHostBytes), units.Bytes(j.WorstDeviceBytes)}); err != nil {
			return err
		}
		worstHost, worstDev = max(worstHost, j.WorstHostBytes), max(worstDev, j.WorstDeviceBytes)
	}
	if err := t.Render(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "Each job runs in its own worker, one after the other, and frees its memory when it ends: at worst one holds %s of host memory and %s on each device. "+
		"The host guard stops a job before system available memory (%s now) falls below the reserve of %s. Time limits: set-up %s, no progress %s, each job %s.\n",
		units.Bytes(worstHost), units.Bytes(worstDev), units.Bytes(p.HostAvailable), units.Bytes(p.HostReserve), seconds(p.SetupSeconds),
		seconds(p.HangSeconds), seconds(p.TimeoutSeconds))
	return err
}

func seconds(s float64) string { return time.Duration(s * float64(time.Second)).String() }
