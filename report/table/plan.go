package table

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// WritePlanText renders a plan for a terminal.
func WritePlanText(w io.Writer, p *result.DryRun, opts render.Options) error {
	st := render.Terminal(opts)
	lead := "clmemprobe run --dry-run: nothing is allocated."
	if p.Live {
		lead = "clmemprobe run: the plan, then the run."
	}
	if _, err := fmt.Fprintln(w, wrapWords("", fmt.Sprintf("%s Platform %s, touch %s, devices:", lead, st.Text(p.Platform.Name), p.Touch), st.Width)); err != nil {
		return err
	}
	for _, d := range p.Devices {
		fmt.Fprintln(w, wrapWords("  ", fmt.Sprintf("[%d] %s, %s global memory, %s at most per buffer", d.Index, st.Text(d.Name), units.Bytes(d.GlobalMemBytes), units.Bytes(d.MaxAllocBytes)), st.Width))
	}
	headers := []string{"#", "Strategy", "Variant", "Flags", "Size", "Buffers", "Bytes", "Worst case, host", "Worst case, each device"}
	var rows [][]string
	var worstHost, worstDev uint64
	variants, flags := false, false
	for i, j := range p.Jobs {
		rows = append(rows, []string{fmt.Sprint(i + 1), st.Text(string(j.Strategy)), st.Text(result.VariantName(j.Variant)), st.Text(result.FlagsName(j.Flags)), units.Size(j.SizeBytes),
			fmt.Sprint(j.Buffers), units.Bytes(j.Bytes), units.Bytes(j.WorstHostBytes), units.Bytes(j.WorstDeviceBytes)})
		worstHost, worstDev = max(worstHost, j.WorstHostBytes), max(worstDev, j.WorstDeviceBytes)
		variants, flags = variants || j.Variant != "", flags || j.Flags != ""
	}
	// A plan without variants has no Variant column (every job would read "default"), one without flags no
	// Flags column (every job would read "read-write"), and a narrow terminal
	// leaves out the bytes (buffers times size) first: a column that says nothing, or only a product, would
	// cost the worst cases the room to stay whole.
	var all []int
	for i := range headers {
		if (i == 2 && !variants) || (i == 3 && !flags) {
			continue
		}
		all = append(all, i)
	}
	headers = pickColumns(headers, all)
	for i := range rows {
		rows[i] = pickColumns(rows[i], all)
	}
	// Still too wide (a plan with flags and variants), the worst case on the host goes next: the sentence
	// under the table says the worst of them all.
	if err := fittedTable(w, st, headers, rows, []int{slices.Index(headers, "Bytes"), 0, slices.Index(headers, "Worst case, host")}, "--wide"); err != nil {
		return err
	}
	guard := fmt.Sprintf("The host guard stops a job before system available memory (%s now) falls below the reserve of %s.",
		units.Bytes(p.HostAvailable), units.Bytes(p.HostReserve))
	if p.CgroupLimit > 0 {
		guard = fmt.Sprintf("The host guard stops a job before system available memory (%s now) falls below the reserve of %s, and before the free memory of the memory cgroup the tool runs in (%s of its %s limit now) falls below %s.",
			units.Bytes(p.HostAvailable), units.Bytes(p.HostReserve), units.Bytes(p.CgroupFree), units.Bytes(p.CgroupLimit), units.Bytes(p.CgroupReserve))
	}
	if p.HostReserve == 0 {
		guard = fmt.Sprintf("The host guard is off (--host-reserve 0): nothing stops a job before the kernel's OOM killer does (%s of system memory available now).",
			units.Bytes(p.HostAvailable))
		if p.CgroupLimit > 0 {
			guard = fmt.Sprintf("The host guard is off (--host-reserve 0): nothing stops a job before the OOM killer of the memory cgroup the tool runs in does (%s of its %s limit free now).",
				units.Bytes(p.CgroupFree), units.Bytes(p.CgroupLimit))
		}
	}
	each := "Each job runs"
	if p.Repeat > 1 {
		each = fmt.Sprintf("Each job runs %d times (--repeat), each time", p.Repeat)
	}
	// The worst cases are the buffers' bytes: the worker, the runtime loaded into it and what the runtime
	// keeps per buffer come on top (rusticl: 180 MiB before the first buffer, 1.02 MiB a 1 MiB buffer), and
	// are not known before the run.
	_, err := fmt.Fprintln(w, wrapWords("", fmt.Sprintf("%s in its own worker, one after the other, and frees its memory when it ends: at worst one job's buffers hold %s of host memory and %s on each device, and the worker, its runtime and what the runtime keeps per buffer take host memory beside them. "+
		"%s Time limits: set-up %s, no progress %s, each job %s.", each, units.Bytes(worstHost), units.Bytes(worstDev), guard, seconds(p.SetupSeconds),
		seconds(p.HangSeconds), seconds(p.TimeoutSeconds)), st.Width))
	return err
}

func seconds(s float64) string { return time.Duration(s * float64(time.Second)).String() }
