// Package markdown writes every document as a Markdown report for a bug ticket, with the tables and
// sentences of package table drawn in the Markdown style.
package markdown

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/render"
	"github.com/clmemprobe/clmemprobe/report/repro"
	"github.com/clmemprobe/clmemprobe/report/table"
)

// WriteMarkdown renders a self-contained report for a bug ticket: the answer in one sentence, the threshold
// table, the verdict, per-strategy figures, what the runtime said, the environment and the command that
// reproduces the run. Every string that came from elsewhere is escaped (report/render/escape.go).
func WriteMarkdown(w io.Writer, j findings.Judged, opts render.Options) error {
	r, verdict := j.Run(), j.Verdict()
	st := render.Markdown
	b := &strings.Builder{}
	// The title names each device model once, with its count: "2x NVIDIA H200".
	fmt.Fprintf(b, "# clmemprobe report: %s\n\n", st.Text(result.DeviceModel(r.Devices)))
	if len(verdict) > 0 {
		fmt.Fprintf(b, "**%s**\n\n", st.Text(verdict[0]))
	}
	if r.Partial {
		b.WriteString("> This run was interrupted: the result holds only the strategies that ran.\n\n")
	}
	writeRunSummary(b, r, st)
	fmt.Fprintf(b, "## %s\n\n", ThresholdHeading(r))
	if err := table.ThresholdTable(b, j, st); err != nil {
		return err
	}
	if opts.Chart != "" {
		// Only where the caller says the chart file is there: a link to nothing helps no one.
		fmt.Fprintf(b, "\n![Host and device memory against buffers allocated](%s)\n", opts.Chart)
	}
	// The headline, in bold above, is the verdict's first sentence: the list holds the rest, so it is read once.
	if len(verdict) > 1 {
		b.WriteString("\n## Verdict\n\n")
		for _, v := range verdict[1:] {
			fmt.Fprintf(b, "- %s\n", st.Text(v))
		}
	}
	b.WriteString("\n## Per strategy\n\n")
	common := commonSampler(r)
	if common != "" {
		fmt.Fprintf(b, "Device memory source of every strategy: %s.\n\n", st.Text(samplerText(j, "", common)))
	}
	for i := range r.Jobs {
		source := ""
		if common == "" {
			source = samplerText(j, r.Jobs[i].Strategy, r.Jobs[i].DeviceSampler)
		}
		writeStrategyMarkdown(b, &r.Jobs[i], j.Limit(&r.Jobs[i]), st, source)
	}
	writeDevicesMarkdown(b, r, st)
	if e := r.Environment; e != nil {
		b.WriteString("\n## Environment\n\n")
		table.WriteEnvironment(b, e, st)
	}
	fmt.Fprintf(b, "\n## Reproduce\n\n")
	if step := render.CgroupPrecondition(r.Environment); step != "" {
		// Without the cgroup's limit the command fills the whole machine instead of reproducing the run.
		fmt.Fprintf(b, "%s\n\n", st.Text(step))
	}
	fmt.Fprintf(b, "With clmemprobe:\n\n%s\n", render.MdBlock(render.ReproduceCommand(r), "bash"))
	if what, err := repro.ReproSubject(j); err != nil {
		fmt.Fprintf(b, "There is no C reproducer: %s.\n", st.Text(err.Error()))
	} else {
		fmt.Fprintf(b, "With a C program of a few dozen lines that repeats %s, for the runtime's developers "+
			"(it needs only the OpenCL headers and loader):\n\n%s", st.Text(what),
			render.MdBlock("clmemprobe report --format repro run.json > repro.c\ncc repro.c -lOpenCL -o repro && ./repro", "sh"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeFlagsMarkdown lists the flag sets the buffers were created with, as C, and the documented vendor
// flags among them with their sources: a ticket reader sees exactly what clCreateBuffer was given.
func writeFlagsMarkdown(b *strings.Builder, r *result.Run, st render.Style) {
	b.WriteString("Every strategy ran with each of these buffer flags (cl_mem_flags), each in its own worker process:\n\n")
	for _, name := range r.FlagNames() {
		f, err := result.JobFlags(name)
		if err != nil {
			fmt.Fprintf(b, "- %s\n", st.Text(result.FlagsName(name)))
			continue
		}
		fmt.Fprintf(b, "- %s: %s", st.Text(result.FlagsName(name)), st.Code(f.C()))
		for _, v := range f.Vendor() {
			fmt.Fprintf(b, "; %s is %s's %s (%s; %s)", st.Code(fmt.Sprintf("%#x", uint64(v.Value))), st.Text(v.Vendor), st.Code(v.C), st.Text(v.What), st.Text(v.Source))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// writeRunSummary is the paragraph under the headline: platform, sizes, touch, budget, the variants and the
// runtime's logging.
func writeRunSummary(b *strings.Builder, r *result.Run, st render.Style) {
	fmt.Fprintf(b, "Platform %s (%s), %s buffers, touch %s, budget %d buffers per strategy", st.Text(r.Platform.Name),
		st.Text(r.Platform.Version), render.SizeSummary(r), st.Code(string(r.Config.Touch)), r.Config.MaxAllocs)
	if r.Config.MaxBytes > 0 {
		fmt.Fprintf(b, " or %s", units.Bytes(r.Config.MaxBytes))
	}
	fmt.Fprintf(b, ". Started %s with clmemprobe %s.\n\n", st.Text(r.Started), st.Text(r.Tool.Version))
	if len(r.Config.Variants) > 0 {
		b.WriteString("Every strategy ran under each of these runtime settings, each in its own worker process:\n\n")
		for _, v := range r.Config.Variants {
			if len(v.Settings) == 0 {
				fmt.Fprintf(b, "- %s: the runtime's own settings\n", st.Text(v.Name))
			} else {
				fmt.Fprintf(b, "- %s: %s\n", st.Text(v.Name), st.Code(settingsText(v.Settings)))
			}
		}
		b.WriteString("\n")
	}
	if r.HasFlags() {
		writeFlagsMarkdown(b, r, st)
	}
	if len(r.Config.RuntimeLog) > 0 {
		fmt.Fprintf(b, "The runtime's logging was on (%s); what it printed is under each strategy.\n\n", st.Code(settingsText(r.Config.RuntimeLog)))
	}
}

// samplerText is a job's device memory source as the report writes it (of strategy s; "" for the source
// every job shares): where a finding already says that device memory was not measured and why, only that
// no sampler applied, so the reasons are read once.
func samplerText(j findings.Judged, s result.Strategy, sampler result.DeviceSource) string {
	if sampler.WhyNot() == "" {
		return string(sampler)
	}
	for _, f := range j.Findings() {
		if f.Kind == result.FindingUnmeasured && (s == "" || slices.Contains(f.Strategies, s)) {
			return "not available (the verdict says why)"
		}
	}
	return string(sampler)
}

// ThresholdHeading names the threshold table by what it holds: where the strategies failed, or, where none
// did, where they ended.
func ThresholdHeading(r *result.Run) string {
	for _, s := range r.Jobs {
		if s.Outcome == result.OutcomeFailed {
			return "Where each strategy failed"
		}
	}
	return "Where each strategy ended"
}

// commonSampler is the device memory source every strategy that names one had, when it is the same for
// two or more: said once then, not under each strategy (a job that never set up names none). Empty when
// they differ.
func commonSampler(r *result.Run) result.DeviceSource {
	var common result.DeviceSource
	n := 0
	for _, s := range r.Jobs {
		switch {
		case s.DeviceSampler == "":
		case common == "" || s.DeviceSampler == common:
			common, n = s.DeviceSampler, n+1
		default:
			return ""
		}
	}
	if n < 2 {
		return ""
	}
	return common
}

// writeDevicesMarkdown lists the devices as the runtime described them, and says which settings that was
// under: a variant's settings (POCL_MEMORY_LIMIT, a driver key) can change what a device reports, and the
// result records the devices only as they were listed before the jobs, under the runtime's own settings.
func writeDevicesMarkdown(b *strings.Builder, r *result.Run, st render.Style) {
	b.WriteString("## Devices\n\n")
	for _, d := range r.Devices {
		fmt.Fprintf(b, "- [%d] %s (%s, %s): %s, driver %s, global memory %s, max allocation %s, host-unified %s", d.Index, st.Text(d.Name),
			st.Text(d.Vendor), st.Text(d.Type), st.Text(d.Version), st.Text(d.DriverVersion), units.Bytes(d.GlobalMemBytes),
			units.Bytes(d.MaxAllocBytes), render.YesNo(d.HostUnified))
		if d.PCIBusID != "" {
			fmt.Fprintf(b, ", PCI %s", st.Text(d.PCIBusID))
		}
		b.WriteString("\n")
	}
	writeVariantDevicesMarkdown(b, r, st)
}

// writeVariantDevicesMarkdown says, per variant, where its workers saw the devices report other sizes than
// the listing above (a variant's settings can change them); for results written before jobs recorded their
// devices' sizes, that the listing is the runtime's own settings'.
func writeVariantDevicesMarkdown(b *strings.Builder, r *result.Run, st render.Style) {
	listed := map[int]result.Device{}
	for _, d := range r.Devices {
		listed[d.Index] = d
	}
	var lines, unrecorded []string
	variants := r.VariantNames()
	for _, v := range r.Config.Variants {
		if name := result.JobVariant(v.Name); len(v.Settings) > 0 && !slices.Contains(variants, name) {
			variants = append(variants, name)
		}
	}
	for _, v := range variants {
		var sizes []result.DeviceSize
		for i := range r.Jobs {
			if s := &r.Jobs[i]; s.Variant == v && len(s.DeviceSizes) > 0 {
				sizes = s.DeviceSizes
				break
			}
		}
		if sizes == nil {
			if v != "" {
				unrecorded = append(unrecorded, st.Text(v))
			}
			continue
		}
		for _, d := range sizes {
			if l, ok := listed[d.Device]; ok && l.GlobalMemBytes == d.GlobalMemBytes && l.MaxAllocBytes == d.MaxAllocBytes {
				continue
			}
			lines = append(lines, fmt.Sprintf("- under variant %s, device %d reports global memory %s, max allocation %s", st.Text(result.VariantName(v)),
				d.Device, units.Bytes(d.GlobalMemBytes), units.Bytes(d.MaxAllocBytes)))
		}
	}
	if len(lines) > 0 {
		b.WriteString("\nAs the jobs' workers saw them, where that differs from the listing above:\n\n" + strings.Join(lines, "\n") + "\n")
	}
	if len(unrecorded) > 0 {
		fmt.Fprintf(b, "\nThese are the devices as listed under the runtime's own settings. Under variant %s the runtime may report other sizes; "+
			"this result does not record the devices as those workers saw them.\n", strings.Join(unrecorded, ", "))
	}
}

// writeStrategyMarkdown is one strategy's section of the Markdown report.
// source is the job's device memory source as written, empty where the report said it for all.
func writeStrategyMarkdown(b *strings.Builder, s *result.JobResult, limit result.JobLimit, st render.Style, source string) {
	variant := ""
	if s.Flags != "" {
		variant = ", flags " + st.Text(s.Flags)
	}
	if s.Variant != "" {
		variant += ", variant " + st.Text(s.Variant)
	}
	fmt.Fprintf(b, "### %s%s, %s buffers, devices %s\n\n", st.Text(string(s.Strategy)), variant, units.Size(s.SizeBytes), table.JoinInts(s.Devices))
	if len(s.VariantSettings) > 0 {
		fmt.Fprintf(b, "- variant settings (this worker's environment): %s\n", st.Code(settingsText(s.VariantSettings)))
	}
	fmt.Fprintf(b, "- outcome: **%s**", st.Text(string(s.Outcome)))
	if s.Reason != "" {
		fmt.Fprintf(b, " (%s)", st.Text(s.Reason))
	}
	if from, to := s.MadeRange(); from < to {
		// A batch was in flight when its worker died: only the first were confirmed by the device, and the
		// rest were made, not known to have succeeded.
		fmt.Fprintf(b, "\n- buffers made: %s (up to %s; %d confirmed by the device, the rest of a batch in flight, not known to have held) in %.2f s",
			render.Made(s), units.Bytes(s.BytesOK), from, s.Seconds)
	} else {
		fmt.Fprintf(b, "\n- buffers that succeeded: %d (%s) in %.2f s", s.AllocationsOK, units.Bytes(s.BytesOK), s.Seconds)
	}
	if s.NanosPerAlloc > 0 {
		fmt.Fprintf(b, ", %s per buffer in the loop", units.Nanos(s.NanosPerAlloc))
	}
	b.WriteString("\n")
	if f := s.FirstFailure; f != nil {
		fmt.Fprintf(b, "- first failure: buffer #%d for device %d, %s returned %s (%d) at stage %s, after %s; host RSS %s, host available %s\n",
			f.Index, f.Device, st.Code(f.Call), st.Text(f.Name), f.Code, st.Text(string(f.Stage)), units.Bytes(f.BytesBefore),
			units.Bytes(f.HostRSSBytes), units.Bytes(f.HostAvail))
	}
	if s.LastStage != "" && s.FirstFailure == nil {
		fmt.Fprintf(b, "- last stage entered: %s\n", st.Text(string(s.LastStage)))
	}
	if limit.Limit != "" {
		fmt.Fprintf(b, "- limit: **%s**%s\n", st.Text(string(limit.Limit)), evidenceList(limit.Evidence))
	}
	fit := s.JudgedFit()
	if fit.OK {
		fmt.Fprintf(b, "- cost per buffer, least-squares slopes over %d samples spanning %d buffers: host RSS %s", fit.Samples, fit.Spanned,
			units.SignedBytes(s.HostBytesPerBuffer))
		if s.SystemBytesPerBuffer != nil {
			fmt.Fprintf(b, ", system memory (MemAvailable) %s", units.SignedBytes(*s.SystemBytesPerBuffer))
		}
		if s.CommittedBytesPerBuffer != nil {
			fmt.Fprintf(b, ", Committed_AS %s", units.SignedBytes(*s.CommittedBytesPerBuffer))
		}
		fmt.Fprintf(b, "; device %s\n", table.DeviceCostCell(s))
	} else {
		fmt.Fprintf(b, "- cost per buffer: %s to fit (%d samples spanning %d buffers; the rule is %d samples spanning at least half of the buffers)\n",
			st.Text(fit.Why), fit.Samples, fit.Spanned, result.FitMinSamples)
	}
	fmt.Fprintf(b, "- peak RSS %s\n", units.Bytes(s.PeakRSSBytes))
	if source != "" {
		fmt.Fprintf(b, "- device memory source: %s\n", st.Text(source))
	}
	if s.MaxMapCount > 0 {
		fmt.Fprintf(b, "- memory mappings: at most %d of vm.max_map_count %d\n", s.MaxMappings, s.MaxMapCount)
	}
	writeLedgerMarkdown(b, s.Resources, st)
	fmt.Fprintf(b, "- samples: %d taken, %d kept in the result\n", s.SamplesTotal, len(s.Samples))
	if s.RuntimeDiagnostics != "" {
		fmt.Fprintf(b, "- the runtime's diagnostics: %s\n", st.Text(s.RuntimeDiagnostics))
	}
	if len(s.Notices) > 0 {
		total := max(s.NoticesTotal, len(s.Notices))
		fmt.Fprintf(b, "\n%s\n\n", detailsOpen(fmt.Sprintf("The runtime's context notify messages (%d of %d)", len(s.Notices), total)))
		for _, n := range s.Notices {
			fmt.Fprintf(b, "- %s\n", st.Code(n))
		}
		b.WriteString("\n</details>\n")
	}
	if s.WorkerOutput != "" {
		fmt.Fprintf(b, "\n%s\n\n%s\n</details>\n", detailsOpen(fmt.Sprintf("What the worker and its runtime printed (%d bytes kept)", len(s.WorkerOutput))),
			render.MdBlock(s.WorkerOutput, "text"))
	}
	b.WriteString("\n")
}

// perBufferCount writes a count per buffer as a reader takes it in: two decimals (1.00, 0.50), and 0 for a
// slope that rounds to nothing (a fit of -6.6e-06 is a count that did not grow).
func perBufferCount(v float64) string {
	if math.Abs(v) < 0.005 {
		return "0"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// writeLedgerMarkdown writes the job's resource ledger: each resource at the start and the end, per buffer,
// against its limit; the devices' memory before the loop and who held it.
func writeLedgerMarkdown(b *strings.Builder, rs *result.Resources, st render.Style) {
	if rs == nil {
		return
	}
	count := func(n float64) string { return fmt.Sprintf("%.0f", n) }
	bytes := func(n float64) string { return units.Bytes(uint64(n)) }
	line := func(what string, r *result.Resource, format func(float64) string) {
		if r == nil {
			return
		}
		fmt.Fprintf(b, "- %s: %s at the start, %s at the end", what, format(float64(r.AtStart)), format(float64(r.AtEnd)))
		if r.PerBuffer != nil {
			per := perBufferCount(*r.PerBuffer)
			if format(1) != "1" { // bytes
				per = units.SignedBytes(*r.PerBuffer)
			}
			fmt.Fprintf(b, ", %s per buffer", per)
		}
		if r.Limit > 0 {
			fmt.Fprintf(b, "; limit %s (%s)", format(float64(r.Limit)), st.Text(r.LimitSource))
		} else {
			b.WriteString("; no limit")
		}
		b.WriteString("\n")
	}
	line("open file descriptors", rs.FDs, count)
	line("locked memory", rs.LockedMemory, bytes)
	if cg := rs.Cgroup; cg != nil {
		line(fmt.Sprintf("memory cgroup %s (v%d, working set)", st.Code(cg.Path), cg.Version), &cg.Memory, bytes)
		if cg.OOMKillsAtEnd > cg.OOMKillsAtStart {
			fmt.Fprintf(b, "- the cgroup's OOM killer ended %d process(es) while this job ran (oom_kill %d to %d)\n",
				cg.OOMKillsAtEnd-cg.OOMKillsAtStart, cg.OOMKillsAtStart, cg.OOMKillsAtEnd)
		}
	}
	for _, d := range rs.Devices {
		fmt.Fprintf(b, "- device %d: %s in use when the loop began", d.Device, units.Bytes(d.UsedAtStartBytes))
		procs := d.ProcessesAtEnd
		if procs == nil {
			procs = d.ProcessesAtStart
		}
		var names []string
		for _, p := range procs {
			who := st.Text(p.Name)
			if p.Own {
				who = "this worker"
			} else if p.Name == "" {
				who = "a process not visible here"
			}
			names = append(names, fmt.Sprintf("pid %d (%s) %s", p.PID, who, units.Bytes(p.UsedBytes)))
		}
		if len(names) > 0 {
			fmt.Fprintf(b, "; processes holding its memory: %s", strings.Join(names, ", "))
		}
		b.WriteString("\n")
	}
}

// detailsOpen opens a collapsed section; the summary is the report's own words, never a foreign string.
func detailsOpen(summary string) string { return "<details><summary>" + summary + "</summary>" }

// settingsText writes environment settings as KEY=VALUE, in key order.
func settingsText(m map[string]string) string { return strings.Join(result.Assignments(m), " ") }

// WriteEnvironmentMarkdown renders the environment block as a Markdown list.
func WriteEnvironmentMarkdown(w io.Writer, e *result.Environment, _ render.Options) error {
	b := &strings.Builder{}
	table.WriteEnvironment(b, e, render.Markdown)
	_, err := io.WriteString(w, b.String())
	return err
}

// evidenceList writes a limit's evidence in words and units, in a stable order: "1031 buffers that
// succeeded, cgroup limit 1 GiB". A key the report does not know is written plainly, its number in full.
func evidenceList(ev map[string]float64) string {
	if len(ev) == 0 {
		return ""
	}
	keys := make([]string, 0, len(ev))
	for k := range ev {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		if c, ok := ev["confirmed_ok"]; ok && c < ev["allocations_ok"] {
			// A batch was in flight when the worker died: the count is a range, said once.
			switch k {
			case "confirmed_ok":
				continue
			case "allocations_ok":
				parts = append(parts, fmt.Sprintf("%s buffers made, %s confirmed by the device", render.Span(uint64(c), uint64(ev[k]), "-"), plainNumber(c)))
				continue
			}
		}
		parts = append(parts, evidenceItem(k, ev[k]))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// evidenceLabels are the evidence keys the findings write, in words.
var evidenceLabels = map[string]string{
	"allocations_ok": "buffers that succeeded", "per_device_allocations_ok": "buffers per-device reached",
	"base_allocations_ok": "buffers under the base", "variant_allocations_ok": "buffers under the variant",
	"index": "failed buffer #", "code": "code", "device": "device", "device_fill": "device filled",
	"device_global_bytes": "device global memory", "global_mem_bytes": "device global memory", "device_used_bytes": "device memory used",
	"device_used_at_start_bytes": "device memory in use before the loop", "device_own_bytes": "this run's device memory",
	"device_others_bytes": "other processes' device memory", "bytes_given_to_device": "bytes given to the device", "given_bytes": "bytes given to the device",
	"host_available_bytes": "system available memory", "host_ram_bytes": "RAM", "host_reserve_bytes": "host reserve",
	"cgroup_limit_bytes": "cgroup limit", "cgroup_used_bytes": "cgroup memory at the last reading", "cgroup_oom_kills": "cgroup OOM kills",
	"fd_limit": "descriptor limit", "fds_at_start": "descriptors at the start", "fds_at_end": "descriptors at the end",
	"fds_per_buffer": "descriptors per buffer", "mappings": "memory mappings", "max_map_count": "vm.max_map_count",
	"vms_bytes": "address space used", "address_space_bytes": "address-space limit", "ratio": "ratio",
	"per_device_completed": "per-device completed", "replication_factor": "replication factor",
	"outside_rss_bytes_per_buffer": "host memory outside RSS per buffer", "host_bytes_per_buffer": "host RSS per buffer",
	"system_bytes_per_buffer": "system memory per buffer", "committed_bytes_per_buffer": "Committed_AS per buffer",
	"device_bytes_per_buffer": "device memory per buffer", "guard_stopped": "strategies the guard stopped",
	"size_bytes": "buffer size", "confirmed_ok": "buffers the device confirmed", "outside_threshold_bytes": "outside-RSS threshold",
	"growth_per_buffer_fraction": "memory growth per buffer, of a buffer", "killed_sigkill": "killed by SIGKILL",
	"pool_rss_bytes": "RSS the pool buffers took", "pool_vms_bytes": "virtual memory the pool buffers took",
	"pool_device_bytes": "device memory the pool buffers took", "cgroup_bytes_per_buffer": "cgroup memory per buffer",
	"outside_within_bytes": "RSS noise and threshold",
}

// evidenceItem writes one evidence figure with its label, in the unit its key names.
func evidenceItem(k string, v float64) string {
	label, known := evidenceLabels[k]
	if who, ok := strings.CutSuffix(k, "_placed"); ok {
		// A comparison's qualifier (findings' placement evidence): which job placed its buffers.
		who = strings.ReplaceAll(who, "_", "-")
		if who == "job" {
			who = "this job"
		}
		return "buffers placed by " + render.MdText(who) + " " + render.YesNo(v == 1)
	}
	if !known {
		if key, size, ok := strings.Cut(k, "@"); ok && key == "allocations_ok" {
			if n, err := strconv.ParseUint(size, 10, 64); err == nil {
				return fmt.Sprintf("%s buffers at %s", plainNumber(v), units.Size(n))
			}
		}
		return render.MdText(strings.ReplaceAll(k, "_", " ")) + " " + plainNumber(v)
	}
	switch {
	case k == "allocations_ok" || strings.HasSuffix(k, "_allocations_ok"):
		return plainNumber(v) + " " + label
	case k == "index":
		return label + plainNumber(v)
	case k == "per_device_completed" || k == "killed_sigkill":
		return label + " " + render.YesNo(v == 1)
	case strings.HasSuffix(k, "_bytes_per_buffer"):
		return label + " " + units.SignedBytes(v)
	case strings.HasSuffix(k, "_bytes"):
		return label + " " + units.Bytes(uint64(max(v, 0)))
	case k == "device_fill" || k == "growth_per_buffer_fraction":
		return fmt.Sprintf("%s %.1f%%", label, 100*v)
	case k == "ratio" || k == "replication_factor":
		return fmt.Sprintf("%s %.2fx", label, v)
	}
	return label + " " + plainNumber(v)
}

// plainNumber writes a figure as a reader does: whole numbers whole, others with two decimals, never in
// exponent form.
func plainNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e18 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
