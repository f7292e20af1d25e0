package comparison

import (
	"cmp"
	"fmt"
	"iter"
	"maps"
	"slices"

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
	// Rows are the job's rows where they were given whole (a fleet read back from merge's JSON, or made by
	// hand). A merge leaves them empty and keeps its rows compact: Count and All give them either way.
	Rows []FleetRow `json:"rows"`

	rows  *jobRows
	group *groupRows
}

// Count is how many rows the job has: one per node that ran it.
func (j *FleetJob) Count() int {
	if j.rows == nil {
		return len(j.Rows)
	}
	return j.rows.present
}

// All gives the job's rows in order of node name, then file, each made when it is asked for: a merge of a
// million nodes never holds them all as FleetRows.
func (j *FleetJob) All() iter.Seq[FleetRow] {
	if j.rows == nil {
		return slices.Values(j.Rows)
	}
	return j.rows.rows(j.group)
}

// Outliers gives the job's outlying rows, in the order All gives them.
func (j *FleetJob) Outliers() iter.Seq[FleetRow] {
	return func(yield func(FleetRow) bool) {
		if j.rows != nil && j.rows.outliers == 0 {
			return
		}
		for r := range j.All() {
			if r.Outlier && !yield(r) {
				return
			}
		}
	}
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
	group  groupKey
	jobs   []nodeJob
	source int // 1 + the index of its file in the merger's Sources (NodeIn); 0: the file is in its rows (NodeOf)
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
	return nodeOf(source, r)
}

// NodeIn is NodeOf for the run of file i of the merger's Sources, which the merger keeps once, there.
func NodeIn(i int, r *result.Run) FleetNode {
	n := nodeOf("", r)
	n.source = i + 1
	return n
}

func nodeOf(source string, r *result.Run) FleetNode {
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
// runs themselves need never be in memory together; it keeps the rows compact (groupRows). The zero value is
// ready to use; it is not safe for concurrent use.
type FleetMerger struct {
	// Sources are where the nodes' files are kept: NodeIn's index into them; NodeOf's file is added to them.
	// Nil: a list of the merger's own.
	Sources *Sources

	results  int
	groups   map[groupKey]*FleetGroup
	rows     map[groupKey]*groupRows
	outcomes []result.Outcome // every outcome a row has, once: rows keep its index
}

// Add merges one node's result.
func (m *FleetMerger) Add(n FleetNode) {
	if m.groups == nil {
		m.groups, m.rows = map[groupKey]*FleetGroup{}, map[groupKey]*groupRows{}
	}
	if m.Sources == nil {
		m.Sources = &Sources{}
	}
	m.results++
	gk := n.group
	g, rows := m.groups[gk], m.rows[gk]
	if g == nil {
		g = &FleetGroup{Platform: gk.platform, DeviceModel: gk.run.Devices, DriverVersion: gk.driver, Touch: gk.run.Touch, MaxAllocs: gk.maxAllocs, MaxBytes: gk.maxBytes}
		rows = &groupRows{jobs: map[Key]*jobRows{}, sources: m.Sources}
		m.groups[gk], m.rows[gk] = g, rows
	}
	g.Nodes++
	if len(n.jobs) == 0 {
		return
	}
	source := n.source - 1
	if source < 0 {
		source = m.Sources.Add(n.jobs[0].row.Source)
	}
	k := rows.addNode(n.jobs[0].row.Node, source)
	for _, nj := range n.jobs {
		j := rows.jobs[nj.key]
		if j == nil {
			j = &jobRows{}
			rows.jobs[nj.key], rows.cols = j, append(rows.cols, j)
		}
		j.add(k, &nj.row, m.outcome(nj.row.Outcome))
	}
}

// outcome is the index of o in the merger's outcomes, which it joins the first time.
func (m *FleetMerger) outcome(o result.Outcome) int {
	if i := slices.Index(m.outcomes, o); i >= 0 {
		return i
	}
	m.outcomes = append(m.outcomes, o)
	return len(m.outcomes) - 1
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
		g, rows := m.groups[gk], m.rows[gk]
		rows.sortNodes()
		for _, k := range slices.SortedFunc(maps.Keys(rows.jobs), order) {
			j := FleetJob{Strategy: k.Strategy, SizeBytes: k.Size, Variant: k.Variant, Flags: k.Flags, rows: rows.jobs[k], group: rows}
			f.Outliers += j.rows.judge(&j, tolerance, m.outcomes)
			g.Jobs = append(g.Jobs, j)
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
