package comparison

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// Fleet is merge's answer: the results of many nodes, grouped so that only comparable runs meet, each job's
// median and spread, and the nodes that differ from their group.
type Fleet struct {
	Tolerance float64 `json:"tolerance"`
	Results   int     `json:"results"`
	Outliers  int     `json:"outliers"`
	// Groups are runs on the same device model and driver, with the same touch mode and budget, in order.
	Groups []FleetGroup `json:"groups"`
}

// FleetGroup is the runs of one device model and driver version that asked for the same thing.
type FleetGroup struct {
	Platform      string       `json:"platform"`
	DeviceModel   string       `json:"device_model"` // "2x NVIDIA H200"
	DriverVersion string       `json:"driver_version"`
	Touch         result.Touch `json:"touch"`
	MaxAllocs     uint64       `json:"max_allocs"`
	MaxBytes      uint64       `json:"max_bytes,omitempty"`
	Nodes         int          `json:"nodes"` // distinct results in the group
	Jobs          []FleetJob   `json:"jobs"`
}

// FleetJob is one strategy at one size and variant, over every node of a group.
type FleetJob struct {
	Strategy         result.Strategy `json:"strategy"`
	SizeBytes        uint64          `json:"size_bytes"`
	Variant          string          `json:"variant"` // its name: "default" for the runtime's own settings
	Flags            string          `json:"flags"`   // the buffers' flags: "read-write" for the default
	Outcome          result.Outcome  `json:"outcome"` // the most common one
	MedianAllocs     float64         `json:"median_allocations_ok"`
	MinAllocs        uint64          `json:"min_allocations_ok"`
	MaxAllocs        uint64          `json:"max_allocations_ok"`
	Spread           float64         `json:"spread"` // (max - min) / median; 0 where the median is 0
	MedianHostCost   *float64        `json:"median_host_bytes_per_buffer,omitempty"`
	MedianDeviceCost *float64        `json:"median_device_bytes_per_buffer,omitempty"`
	Rows             []FleetRow      `json:"rows"`
}

// FleetRow is one node's run of one job.
type FleetRow struct {
	Node          string         `json:"node"`   // the host name the run recorded
	Source        string         `json:"source"` // the file it came from
	Outcome       result.Outcome `json:"outcome"`
	AllocationsOK uint64         `json:"allocations_ok"`
	// HostCost and DeviceCost are per buffer (device: summed over the devices), where they were fitted.
	HostCost   *float64 `json:"host_bytes_per_buffer,omitempty"`
	DeviceCost *float64 `json:"device_bytes_per_buffer,omitempty"`
	Deviation  float64  `json:"deviation"` // allocations_ok / median - 1
	Outlier    bool     `json:"outlier"`
	Why        string   `json:"why,omitempty"`
}

// FleetInput is one result to merge and where it came from.
type FleetInput struct {
	Source string
	Run    *result.Run
}

// FleetNode is what a merge keeps of one result: the key of its group and a row per job. It holds nothing
// of the run itself (no samples, no environment but the host name), so a merge of many files needs memory
// for its rows, not for its files.
type FleetNode struct {
	group groupKey
	jobs  []nodeJob
}

type nodeJob struct {
	key Key
	row FleetRow
}

// groupKey is what must be equal for runs to be compared at all: what the run sets of its jobs' keys (the
// devices, the touch mode, the flags), and the platform, the driver and the budget.
type groupKey struct {
	run              Key
	platform, driver string
	maxAllocs        uint64
	maxBytes         uint64
}

// NodeOf takes from a checked run what merging it needs; the run may be dropped after.
func NodeOf(source string, r *result.Run) FleetNode {
	n := FleetNode{
		group: groupKey{RunKey(r), r.Platform.Name, result.DriverVersions(r.Devices), r.Config.MaxAllocs, r.Config.MaxBytes},
		jobs:  make([]nodeJob, len(r.Jobs)),
	}
	node := "(unknown)"
	if e := r.Environment; e != nil && e.Hostname != "" {
		node = e.Hostname
	}
	for i, k := range Keys(r) {
		n.jobs[i] = nodeJob{k, fleetRow(node, source, &r.Jobs[i])}
	}
	return n
}

// FleetMerger merges results one at a time (Add), each already cut down to its rows (NodeOf), so that the
// runs themselves need never be in memory together. The zero value is ready to use; it is not safe for
// concurrent use.
type FleetMerger struct {
	results int
	groups  map[groupKey]*FleetGroup
	jobs    map[groupKey]map[Key]*FleetJob
}

// Add merges one node's result.
func (m *FleetMerger) Add(n FleetNode) {
	if m.groups == nil {
		m.groups, m.jobs = map[groupKey]*FleetGroup{}, map[groupKey]map[Key]*FleetJob{}
	}
	m.results++
	gk := n.group
	g := m.groups[gk]
	if g == nil {
		g = &FleetGroup{Platform: gk.platform, DeviceModel: gk.run.Devices, DriverVersion: gk.driver, Touch: gk.run.Touch, MaxAllocs: gk.maxAllocs, MaxBytes: gk.maxBytes}
		m.groups[gk], m.jobs[gk] = g, map[Key]*FleetJob{}
	}
	g.Nodes++
	for _, nj := range n.jobs {
		j := m.jobs[gk][nj.key]
		if j == nil {
			j = &FleetJob{Strategy: nj.key.Strategy, SizeBytes: nj.key.Size, Variant: nj.key.Variant, Flags: nj.key.Flags}
			m.jobs[gk][nj.key] = j
		}
		j.Rows = append(j.Rows, nj.row)
	}
}

// Results is how many results were added.
func (m *FleetMerger) Results() int { return m.results }

// Merge groups the results and finds the outliers: a node whose threshold differs from its job's median by
// more than the tolerance (Below, Above), whose host or device cost per buffer does (CostMoved: also by
// more than the noise), or whose outcome is not the job's most common one.
func Merge(inputs []FleetInput, tolerance float64) *Fleet {
	var m FleetMerger
	for _, in := range inputs {
		m.Add(NodeOf(in.Source, in.Run))
	}
	return m.Fleet(tolerance)
}

// Fleet is the merge of what was added, judged at the tolerance. The rows move into the answer: the merger
// is spent after.
func (m *FleetMerger) Fleet(tolerance float64) *Fleet {
	f := &Fleet{Tolerance: tolerance, Results: m.results, Groups: []FleetGroup{}}
	groups := slices.Collect(maps.Keys(m.groups))
	slices.SortFunc(groups, func(a, b groupKey) int {
		return cmp.Or(cmp.Compare(a.run.Devices, b.run.Devices), cmp.Compare(a.driver, b.driver), cmp.Compare(a.platform, b.platform),
			cmp.Compare(a.run.Touch, b.run.Touch), cmp.Compare(a.maxAllocs, b.maxAllocs), cmp.Compare(a.maxBytes, b.maxBytes), cmp.Compare(a.run.Flags, b.run.Flags))
	})
	for _, gk := range groups {
		g := m.groups[gk]
		for _, k := range slices.SortedFunc(maps.Keys(m.jobs[gk]), order) {
			j := m.jobs[gk][k]
			f.Outliers += j.judge(tolerance)
			g.Jobs = append(g.Jobs, *j)
		}
		f.Groups = append(f.Groups, *g)
	}
	*m = FleetMerger{}
	return f
}

func fleetRow(node, source string, s *result.JobResult) FleetRow {
	row := FleetRow{Node: node, Source: source, Outcome: intern(result.Outcomes, s.Outcome), AllocationsOK: s.AllocationsOK}
	if s.Outcome != result.OutcomeUnsupported && s.JudgedFit().OK {
		h := s.HostBytesPerBuffer
		row.HostCost = &h
		if len(s.DeviceBytesPerBuffer) > 0 {
			d := 0.0
			for _, v := range s.DeviceBytesPerBuffer {
				d += v
			}
			row.DeviceCost = &d
		}
	}
	return row
}

// judge sets the job's median, spread and most common outcome, marks its outliers and returns how many.
func (j *FleetJob) judge(tol float64) int {
	slices.SortFunc(j.Rows, func(a, b FleetRow) int { return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.Source, b.Source)) })
	j.summarize()
	n := 0
	for i := range j.Rows {
		r := &j.Rows[i]
		if why := j.outlier(r, tol); len(why) > 0 {
			r.Outlier, r.Why = true, strings.Join(why, "; ")
			n++
		}
	}
	return n
}

// summarize sets the job's median threshold and costs, its range and spread, and its most common outcome.
func (j *FleetJob) summarize() {
	var allocs, hosts, devices []float64
	counts := map[result.Outcome]int{}
	j.MinAllocs = math.MaxUint64
	for _, r := range j.Rows {
		allocs = append(allocs, float64(r.AllocationsOK))
		j.MinAllocs, j.MaxAllocs = min(j.MinAllocs, r.AllocationsOK), max(j.MaxAllocs, r.AllocationsOK)
		if r.HostCost != nil {
			hosts = append(hosts, *r.HostCost)
		}
		if r.DeviceCost != nil {
			devices = append(devices, *r.DeviceCost)
		}
		counts[r.Outcome]++
	}
	j.MedianAllocs = Median(allocs)
	if j.MedianAllocs > 0 {
		j.Spread = float64(j.MaxAllocs-j.MinAllocs) / j.MedianAllocs
	}
	j.MedianHostCost, j.MedianDeviceCost = medianOrNil(hosts), medianOrNil(devices)
	for _, o := range result.Outcomes { // ties go to the healthier outcome, in the enum's order
		if counts[o] > counts[j.Outcome] {
			j.Outcome = o
		}
	}
}

// medianOrNil is the median of costs, nil where none was fitted.
func medianOrNil(costs []float64) *float64 {
	if len(costs) == 0 {
		return nil
	}
	m := Median(costs)
	return &m
}

// outlier sets the row's deviation from the job's median and says how the row differs from its job, if it
// does.
func (j *FleetJob) outlier(r *FleetRow, tol float64) []string {
	var why []string
	got := float64(r.AllocationsOK)
	if j.MedianAllocs > 0 {
		r.Deviation = Change(got, j.MedianAllocs)
	}
	if Below(got, j.MedianAllocs, tol) || Above(got, j.MedianAllocs, tol) {
		why = append(why, fmt.Sprintf("%d buffers against a median of %s (%+.1f%%)", r.AllocationsOK, units.Count(j.MedianAllocs), 100*r.Deviation))
	}
	if r.Outcome != j.Outcome {
		why = append(why, fmt.Sprintf("%s where the group %s", r.Outcome, j.Outcome))
	}
	if d, ok := costDiffers(r.HostCost, j.MedianHostCost, tol, j.SizeBytes); ok {
		why = append(why, "host cost per buffer "+d)
	}
	if d, ok := costDiffers(r.DeviceCost, j.MedianDeviceCost, tol, j.SizeBytes); ok {
		why = append(why, "device cost per buffer "+d)
	}
	return why
}

// costDiffers says how a cost differs from the median, where it does (CostMoved).
func costDiffers(v, med *float64, tol float64, size uint64) (string, bool) {
	if v == nil || med == nil || !CostMoved(*v, *med, tol, size) {
		return "", false
	}
	return fmt.Sprintf("%s against a median of %s", units.SignedBytes(*v), units.SignedBytes(*med)), true
}
