package report

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/clmemprobe/clmemprobe/report/units"
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
	Variant          string          `json:"variant"`
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
	key jobKey
	row FleetRow
}

// groupKey is what must be equal for runs to be compared at all.
type groupKey struct {
	platform, model, driver string
	touch                   result.Touch
	maxAllocs, maxBytes     uint64
}

type jobKey struct {
	strategy result.Strategy
	size     uint64
	variant  string
}

// NodeOf takes from a checked run what merging it needs; the run may be dropped after.
func NodeOf(source string, r *result.Run) FleetNode {
	n := FleetNode{
		group: groupKey{r.Platform.Name, result.DeviceModel(r.Devices), result.DriverVersions(r.Devices), intern(result.Touches, r.Config.Touch),
			r.Config.MaxAllocs, r.Config.MaxBytes},
		jobs: make([]nodeJob, len(r.Strategies)),
	}
	node := "(unknown)"
	if e := r.Environment; e != nil && e.Hostname != "" {
		node = e.Hostname
	}
	for i := range r.Strategies {
		s := &r.Strategies[i]
		n.jobs[i] = nodeJob{jobKey{intern(result.Strategies, s.Strategy), s.SizeBytes, result.VariantName(s.Variant)}, fleetRow(node, source, s)}
	}
	return n
}

// intern is the enum's own copy of v: a row then shares one string with every other row instead of
// keeping the one the decoder made.
func intern[T ~string](enum []T, v T) T {
	if i := slices.Index(enum, v); i >= 0 {
		return enum[i]
	}
	return v
}

// FleetMerger merges results one at a time (Add), each already cut down to its rows (NodeOf), so that the
// runs themselves need never be in memory together. The zero value is ready to use; it is not safe for
// concurrent use.
type FleetMerger struct {
	results int
	groups  map[groupKey]*FleetGroup
	jobs    map[groupKey]map[jobKey]*FleetJob
}

// Add merges one node's result.
func (m *FleetMerger) Add(n FleetNode) {
	if m.groups == nil {
		m.groups, m.jobs = map[groupKey]*FleetGroup{}, map[groupKey]map[jobKey]*FleetJob{}
	}
	m.results++
	gk := n.group
	g := m.groups[gk]
	if g == nil {
		g = &FleetGroup{Platform: gk.platform, DeviceModel: gk.model, DriverVersion: gk.driver, Touch: gk.touch, MaxAllocs: gk.maxAllocs, MaxBytes: gk.maxBytes}
		m.groups[gk], m.jobs[gk] = g, map[jobKey]*FleetJob{}
	}
	g.Nodes++
	for _, nj := range n.jobs {
		j := m.jobs[gk][nj.key]
		if j == nil {
			j = &FleetJob{Strategy: nj.key.strategy, SizeBytes: nj.key.size, Variant: nj.key.variant}
			m.jobs[gk][nj.key] = j
		}
		j.Rows = append(j.Rows, nj.row)
	}
}

// Results is how many results were added.
func (m *FleetMerger) Results() int { return m.results }

// Merge groups the results and finds the outliers: a node whose threshold, host cost per buffer or device
// cost per buffer differs from its job's median by more than the tolerance (costs also by more than 1% of
// the buffer size, below which they are sampling noise), or whose outcome is not the job's most common one.
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
	order := slices.Collect(maps.Keys(m.groups))
	slices.SortFunc(order, func(a, b groupKey) int {
		return cmp.Or(cmp.Compare(a.model, b.model), cmp.Compare(a.driver, b.driver), cmp.Compare(a.platform, b.platform),
			cmp.Compare(a.touch, b.touch), cmp.Compare(a.maxAllocs, b.maxAllocs), cmp.Compare(a.maxBytes, b.maxBytes))
	})
	for _, gk := range order {
		g := m.groups[gk]
		for _, j := range m.jobs[gk] {
			f.Outliers += j.judge(tolerance)
			g.Jobs = append(g.Jobs, *j)
		}
		slices.SortFunc(g.Jobs, func(a, b FleetJob) int {
			return cmp.Or(cmp.Compare(slices.Index(result.Strategies, a.Strategy), slices.Index(result.Strategies, b.Strategy)), cmp.Compare(a.Strategy, b.Strategy),
				cmp.Compare(a.SizeBytes, b.SizeBytes), cmp.Compare(variantOrder(a.Variant), variantOrder(b.Variant)), cmp.Compare(a.Variant, b.Variant))
		})
		f.Groups = append(f.Groups, *g)
	}
	*m = FleetMerger{}
	return f
}

func variantOrder(v string) int {
	if v == result.DefaultVariant {
		return 0
	}
	return 1
}

func fleetRow(node, source string, s *result.StrategyResult) FleetRow {
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
	j.MedianAllocs = median(allocs)
	if j.MedianAllocs > 0 {
		j.Spread = float64(j.MaxAllocs-j.MinAllocs) / j.MedianAllocs
	}
	if len(hosts) > 0 {
		m := median(hosts)
		j.MedianHostCost = &m
	}
	if len(devices) > 0 {
		m := median(devices)
		j.MedianDeviceCost = &m
	}
	for _, o := range result.Outcomes { // ties go to the healthier outcome, in the enum's order
		if counts[o] > counts[j.Outcome] {
			j.Outcome = o
		}
	}
	n := 0
	for i := range j.Rows {
		r := &j.Rows[i]
		var why []string
		if j.MedianAllocs > 0 {
			r.Deviation = float64(r.AllocationsOK)/j.MedianAllocs - 1
		}
		if math.Abs(float64(r.AllocationsOK)-j.MedianAllocs) > tol*j.MedianAllocs {
			why = append(why, fmt.Sprintf("%d buffers against a median of %s (%+.1f%%)", r.AllocationsOK, trimFloat(j.MedianAllocs), 100*r.Deviation))
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
		if len(why) > 0 {
			r.Outlier, r.Why = true, strings.Join(why, "; ")
			n++
		}
	}
	return n
}

// costDiffers says how a cost differs from the median, where it does by more than the tolerance and by
// more than 1% of the buffer size.
func costDiffers(v, med *float64, tol float64, size uint64) (string, bool) {
	if v == nil || med == nil {
		return "", false
	}
	d := math.Abs(*v - *med)
	if d <= tol*math.Abs(*med) || d <= 0.01*float64(size) {
		return "", false
	}
	return fmt.Sprintf("%s against a median of %s", units.SignedBytes(*v), units.SignedBytes(*med)), true
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func trimFloat(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
