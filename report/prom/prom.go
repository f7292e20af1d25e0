// Package prom writes a judged run as Prometheus text exposition, for node_exporter's textfile collector.
package prom

import (
	"io"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// The Prometheus text exposition of a run, for node_exporter's textfile collector: gauges only, base units
// in the names, no timestamps (the collector refuses them), and labels that can take only a few values per
// node: strategy, size, flags, variant, device, and the enums. A pedantic registry checks on every render that no
// series is duplicated and every family is consistent, so a mistake here fails loudly, not in a scrape.

// jobLabels are the labels that tell one job of a run from another.
var jobLabels = []string{"strategy", "size_bytes", "flags", "variant"}

// promMetrics is every metric the exposition can hold; a family with no series is left out.
type promMetrics struct {
	info, deviceInfo, deviceGlobal, started, ended, partial          *prometheus.GaugeVec
	allocationsOK, allocatedBytes, budget, outcome, limit, firstFail *prometheus.GaugeVec
	hostCost, systemCost, committedCost, deviceCost, replication     *prometheus.GaugeVec
	loopSeconds, peakRSS                                             *prometheus.GaugeVec
	fdLimit, fdsPerBuffer, cgroupLimit, cgroupOOMKills               *prometheus.GaugeVec
	deviceUsedAtStart, deviceOthers                                  *prometheus.GaugeVec
}

func gaugeVec(reg *prometheus.Registry, name, help string, labels ...string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "clmemprobe", Name: name, Help: help}, labels)
	reg.MustRegister(g)
	return g
}

func jobLabelsAnd(extra ...string) []string {
	return append(append([]string{}, jobLabels...), extra...)
}

func newPromMetrics(reg *prometheus.Registry) *promMetrics {
	return &promMetrics{
		info:         gaugeVec(reg, "info", "The clmemprobe build, OpenCL platform and touch mode of the run (always 1).", "version", "platform", "platform_version", "touch"),
		deviceInfo:   gaugeVec(reg, "device_info", "One OpenCL device the run used (always 1).", "device", "name", "vendor", "driver_version", "pci_bus_id"),
		deviceGlobal: gaugeVec(reg, "device_global_memory_bytes", "The device's global memory as the runtime reports it.", "device"),
		started:      gaugeVec(reg, "run_start_timestamp_seconds", "When the run started, in seconds since the Unix epoch."),
		ended:        gaugeVec(reg, "run_end_timestamp_seconds", "When the run ended, in seconds since the Unix epoch."),
		partial:      gaugeVec(reg, "run_partial", "1 when the run was interrupted before every job ran, else 0."),
		allocationsOK: gaugeVec(reg, "allocations_ok", "Buffers allocated before the first failure (the threshold), or the whole budget.",
			jobLabels...),
		allocatedBytes: gaugeVec(reg, "allocated_bytes", "Bytes of the buffers allocated before the first failure.", jobLabels...),
		budget:         gaugeVec(reg, "budget_allocations", "Buffers the job was allowed to allocate.", jobLabels...),
		outcome: gaugeVec(reg, "outcome", "How the job ended: 1 for its outcome, 0 for the others.",
			jobLabelsAnd("outcome")...),
		limit: gaugeVec(reg, "limit", "What ended a job that did not complete, as the diagnosis classifies it: 1 for its limit, 0 for the others.",
			jobLabelsAnd("limit")...),
		firstFail: gaugeVec(reg, "first_failure_code", "The OpenCL status code of the first failed call, with the stage it surfaced at and the device the buffer was meant for.",
			jobLabelsAnd("stage", "code_name", "device")...),
		hostCost: gaugeVec(reg, "host_bytes_per_buffer", "Host RSS per buffer (least-squares slope over the samples).", jobLabels...),
		systemCost: gaugeVec(reg, "system_bytes_per_buffer", "System available memory taken per buffer, also outside the process (slope of MemAvailable).",
			jobLabels...),
		committedCost: gaugeVec(reg, "committed_bytes_per_buffer", "System committed memory per buffer (slope of Committed_AS).", jobLabels...),
		deviceCost:    gaugeVec(reg, "device_bytes_per_buffer", "Device memory used per buffer on one device (slope of the device sampler).", jobLabelsAnd("device")...),
		replication: gaugeVec(reg, "replication_factor", "Device memory per buffer summed over the devices, divided by the buffer size.",
			jobLabels...),
		loopSeconds:  gaugeVec(reg, "loop_duration_seconds", "Wall time of the job's allocation loop.", jobLabels...),
		peakRSS:      gaugeVec(reg, "worker_peak_rss_bytes", "Peak RSS of the job's worker process.", jobLabels...),
		fdLimit:      gaugeVec(reg, "worker_fd_limit", "The soft limit on the worker's open file descriptors (RLIMIT_NOFILE, ulimit -n).", jobLabels...),
		fdsPerBuffer: gaugeVec(reg, "fds_per_buffer", "Open file descriptors per buffer (slope over the samples).", jobLabels...),
		cgroupLimit: gaugeVec(reg, "cgroup_memory_limit_bytes", "The memory limit of the memory cgroup the worker ran in (a container's or a batch job's); absent without a limit.",
			jobLabels...),
		cgroupOOMKills: gaugeVec(reg, "cgroup_oom_kills", "Processes the memory cgroup's OOM killer ended while the job ran.", jobLabels...),
		deviceUsedAtStart: gaugeVec(reg, "device_used_at_start_bytes", "A device's used memory when the job's loop began: other processes' and the worker's context.",
			jobLabelsAnd("device")...),
		deviceOthers: gaugeVec(reg, "device_others_bytes", "Memory other processes held on a device when the job ended, where NVML names them.",
			jobLabelsAnd("device")...),
	}
}

// WriteProm renders the run in the Prometheus text exposition format.
func WriteProm(w io.Writer, j findings.Judged, _ render.Options) error {
	r := j.Run()
	reg := prometheus.NewPedanticRegistry()
	m := newPromMetrics(reg)
	m.info.WithLabelValues(render.Plain(r.Tool.Version), render.Plain(r.Platform.Name), render.Plain(r.Platform.Version), string(r.Config.Touch)).Set(1)
	for _, d := range r.Devices {
		idx := strconv.Itoa(d.Index)
		m.deviceInfo.WithLabelValues(idx, render.Plain(d.Name), render.Plain(d.Vendor), render.Plain(d.DriverVersion), render.Plain(d.PCIBusID)).Set(1)
		m.deviceGlobal.WithLabelValues(idx).Set(float64(d.GlobalMemBytes))
	}
	setTimestamp(m.started, r.Started)
	setTimestamp(m.ended, r.Ended)
	m.partial.WithLabelValues().Set(boolGauge(r.Partial))
	for i := range r.Jobs {
		m.addJob(r, &r.Jobs[i], j.Limit(&r.Jobs[i]).Limit)
	}
	families, err := reg.Gather()
	if err != nil {
		return err
	}
	for _, f := range families {
		if _, err := expfmt.MetricFamilyToText(w, f); err != nil {
			return err
		}
	}
	return nil
}

// addJob sets the series of one strategy at one size.
func (m *promMetrics) addJob(r *result.Run, s *result.JobResult, limit result.Limit) {
	job := prometheus.Labels{"strategy": string(s.Strategy), "size_bytes": strconv.FormatUint(s.SizeBytes, 10), "flags": result.FlagsName(s.Flags),
		"variant": result.VariantName(s.Variant)}
	with := func(k, v string) prometheus.Labels {
		l := prometheus.Labels{k: v}
		for jk, jv := range job {
			l[jk] = jv
		}
		return l
	}
	m.allocationsOK.With(job).Set(float64(s.AllocationsOK))
	m.allocatedBytes.With(job).Set(float64(s.BytesOK))
	if b := r.Config.Budget(s.SizeBytes); b > 0 {
		m.budget.With(job).Set(float64(b))
	}
	for _, o := range result.Outcomes {
		m.outcome.With(with("outcome", string(o))).Set(boolGauge(s.Outcome == o))
	}
	if limit != "" {
		for _, l := range result.Limits {
			m.limit.With(with("limit", string(l))).Set(boolGauge(limit == l))
		}
	}
	if ff := s.FirstFailure; ff != nil && s.Outcome == result.OutcomeFailed {
		l := with("stage", string(ff.Stage))
		l["code_name"], l["device"] = ff.Name, strconv.Itoa(ff.Device)
		m.firstFail.With(l).Set(float64(ff.Code))
	}
	// Costs only where the samples allowed a fit.
	if s.JudgedFit().OK {
		m.hostCost.With(job).Set(s.HostBytesPerBuffer)
		setIf(m.systemCost, job, s.SystemBytesPerBuffer)
		setIf(m.committedCost, job, s.CommittedBytesPerBuffer)
		for dev, v := range s.DeviceBytesPerBuffer {
			m.deviceCost.With(with("device", dev)).Set(v)
		}
		setIf(m.replication, job, s.ReplicationFactor)
	}
	m.addLedger(s.Resources, job, with)
	m.loopSeconds.With(job).Set(s.Seconds)
	if s.PeakRSSBytes > 0 {
		m.peakRSS.With(job).Set(float64(s.PeakRSSBytes))
	}
}

// addLedger sets the series of a job's resource ledger that were measured.
func (m *promMetrics) addLedger(rs *result.Resources, job prometheus.Labels, with func(k, v string) prometheus.Labels) {
	if rs == nil {
		return
	}
	if fd := rs.FDs; fd != nil {
		if fd.Limit > 0 {
			m.fdLimit.With(job).Set(float64(fd.Limit))
		}
		setIf(m.fdsPerBuffer, job, fd.PerBuffer)
	}
	if cg := rs.Cgroup; cg != nil {
		if cg.Memory.Limit > 0 {
			m.cgroupLimit.With(job).Set(float64(cg.Memory.Limit))
		}
		m.cgroupOOMKills.With(job).Set(float64(cg.OOMKillsAtEnd - min(cg.OOMKillsAtEnd, cg.OOMKillsAtStart)))
	}
	for i := range rs.Devices {
		d := &rs.Devices[i]
		dev := strconv.Itoa(d.Device)
		m.deviceUsedAtStart.With(with("device", dev)).Set(float64(d.UsedAtStartBytes))
		if others, ok := d.OthersBytes(); ok {
			m.deviceOthers.With(with("device", dev)).Set(float64(others))
		}
	}
}

// setIf sets the series only where the value was measured: an absent series is not a zero.
func setIf(g *prometheus.GaugeVec, l prometheus.Labels, v *float64) {
	if v != nil {
		g.With(l).Set(*v)
	}
}

// setTimestamp sets g to an RFC 3339 time in Unix seconds; a missing or unreadable time leaves g out.
func setTimestamp(g *prometheus.GaugeVec, rfc3339 string) {
	if t, err := time.Parse(time.RFC3339Nano, rfc3339); err == nil {
		g.WithLabelValues().Set(float64(t.UnixNano()) / 1e9)
	}
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
