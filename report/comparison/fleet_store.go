package comparison

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"iter"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// groupRows is what a merge keeps of one group's nodes until the end: each node's name once, in one arena,
// its file as an index into the merger's Sources (the list of inputs holds every path already: a second copy
// here was ~50 bytes a node), and a column store per job whose row k is the group's node k. At a million
// nodes the rows are most of merge's memory; kept as FleetRows (two strings, two pointers, a verdict) they
// took ~700 bytes a node, kept here about a sixth of that. Everything a row shows besides what is stored (its
// deviation, whether it is an outlier and why) follows from the job's medians and is worked out when the row
// is asked for.
type groupRows struct {
	names   []byte   // each node's name after its length as a uvarint
	at      counts   // where each node's name starts in names, in the order the nodes came
	source  counts   // each node's file: its index in sources
	sources *Sources // the merger's
	jobs    map[Key]*jobRows
	cols    []*jobRows // the same jobs, in the order they came: what a swap of two nodes goes through
}

// Sources are the files a merge's nodes came from, in the order added, in one arena: a million paths as
// strings cost ~16 bytes of header and ~8 of rounding each beside their text; here they cost their text and a
// 4-byte end. A merge's caller may fill them before it loads (FleetMerger.Sources, NodeIn), so that the list
// of inputs and the merged rows share one copy of every path. The zero value is an empty list.
type Sources struct {
	text []byte
	ends counts // path i is text[ends[i-1]:ends[i]]
}

// Add appends a path and returns its index.
func (s *Sources) Add(path string) int {
	i := s.Len()
	s.text = append(s.text, path...)
	s.ends.set(i, uint64(len(s.text)))
	return i
}

// Len is how many paths were added.
func (s *Sources) Len() int { return s.ends.len() }

// Path is path i.
func (s *Sources) Path(i int) string { return string(s.bytes(i)) }

// bytes is path i as a view of the arena: compare it, copy it to keep it.
func (s *Sources) bytes(i int) []byte {
	start := uint64(0)
	if i > 0 {
		start = s.ends.at(i - 1)
	}
	return s.text[start:s.ends.at(i)]
}

// jobRows are one job's rows as columns, row k being the group's node k: where a node has no run of the job
// its row is marked absent. The costs stay nil until a node has one (most runtimes fit no device cost).
type jobRows struct {
	cells        []cell
	allocs       counts
	host, device []float64
	present      int

	// Set when the merge is judged: what a row's deviation and verdict are worked out from.
	sum       *FleetJob // the job's medians, without its rows
	tolerance float64
	outcomes  []result.Outcome
	outliers  int
}

// cell is a row's outcome (an index into the merger's outcomes) and what it has, in one word.
type cell uint16

const (
	cellPresent cell = 1 << iota
	cellHost
	cellDevice
	cellOutlier
	cellFlags = 4 // the outcome's index is above the flags
)

func (c cell) has(f cell) bool { return c&f != 0 }
func (c cell) outcome() int    { return int(c >> cellFlags) }

// counts are buffer counts, offsets and indices: four bytes each while every one fits (a budget is rarely
// past four billion buffers, an arena of names or paths past 4 GiB), eight from the first that does not.
type counts struct {
	narrow []uint32
	wide   []uint64
}

func (c *counts) at(i int) uint64 {
	if c.wide != nil {
		return c.wide[i]
	}
	return uint64(c.narrow[i])
}

func (c *counts) len() int {
	if c.wide != nil {
		return len(c.wide)
	}
	return len(c.narrow)
}

// grow makes the column n long, zeros where nothing was set.
func (c *counts) grow(n int) {
	if c.wide != nil {
		c.wide = grown(c.wide, n-1)
	} else {
		c.narrow = grown(c.narrow, n-1)
	}
}

func (c *counts) set(i int, v uint64) {
	if c.wide == nil && v > math.MaxUint32 {
		c.wide = make([]uint64, len(c.narrow), cap(c.narrow))
		for k, n := range c.narrow {
			c.wide[k] = uint64(n)
		}
		c.narrow = nil
	}
	if c.wide != nil {
		c.wide = grown(c.wide, i)
		c.wide[i] = v
		return
	}
	c.narrow = grown(c.narrow, i)
	c.narrow[i] = uint32(v)
}

func (c *counts) swap(i, j int) {
	if c.wide != nil {
		c.wide[i], c.wide[j] = c.wide[j], c.wide[i]
		return
	}
	c.narrow[i], c.narrow[j] = c.narrow[j], c.narrow[i]
}

// grown is s long enough to hold index i, zeros where nothing was set.
func grown[T any](s []T, i int) []T {
	if i < len(s) {
		return s
	}
	return append(s, make([]T, i+1-len(s))...)
}

// addNode keeps a node's name and the index of its file in sources, and returns its row.
func (g *groupRows) addNode(name string, source int) int {
	k := g.at.len()
	g.at.set(k, uint64(len(g.names)))
	g.names = binary.AppendUvarint(g.names, uint64(len(name)))
	g.names = append(g.names, name...)
	g.source.set(k, uint64(source))
	return k
}

// len is how many nodes the group has.
func (g *groupRows) len() int { return g.at.len() }

// node is the name and file of the group's node k, as views of the arenas: compare them, copy to keep.
func (g *groupRows) node(k int) (name, source []byte) {
	b := g.names[g.at.at(k):]
	n, w := binary.Uvarint(b)
	return b[w : w+int(n)], g.sources.bytes(int(g.source.at(k)))
}

// add sets row k of the job from a node's row; outcome is its index in the merger's outcomes.
func (j *jobRows) add(k int, r *FleetRow, outcome int) {
	c := cellPresent | cell(outcome)<<cellFlags
	j.allocs.set(k, r.AllocationsOK)
	if r.HostCost != nil {
		c |= cellHost
		j.host = grown(j.host, k)
		j.host[k] = *r.HostCost
	}
	if r.DeviceCost != nil {
		c |= cellDevice
		j.device = grown(j.device, k)
		j.device[k] = *r.DeviceCost
	}
	j.cells = grown(j.cells, k)
	j.cells[k] = c
	j.present++
}

// sortNodes puts the group's nodes, and every job's rows with them, in order of name, then file.
func (g *groupRows) sortNodes() {
	for _, j := range g.cols { // every column as long as the group, so that a swap finds every row
		n := g.len()
		j.cells, j.host, j.device = grown(j.cells, n-1), grownIf(j.host, n), grownIf(j.device, n)
		j.allocs.grow(n)
	}
	sort.Sort((*byNode)(g))
}

// grownIf is a column made as long as the group's, where the job has one.
func grownIf(s []float64, n int) []float64 {
	if s == nil {
		return nil
	}
	return grown(s, n-1)
}

// byNode sorts a group's rows by node name, then file.
type byNode groupRows

func (b *byNode) Len() int { return (*groupRows)(b).len() }

func (b *byNode) Less(x, y int) bool {
	g := (*groupRows)(b)
	nx, sx := g.node(x)
	ny, sy := g.node(y)
	return cmp.Or(bytes.Compare(nx, ny), bytes.Compare(sx, sy)) < 0
}

func (b *byNode) Swap(x, y int) {
	b.at.swap(x, y)
	b.source.swap(x, y)
	for _, j := range b.cols {
		j.cells[x], j.cells[y] = j.cells[y], j.cells[x]
		j.allocs.swap(x, y)
		for _, col := range [][]float64{j.host, j.device} {
			if col != nil {
				col[x], col[y] = col[y], col[x]
			}
		}
	}
}

// row is the job's row k without its node's name and file, or false where the node has no run of the job.
func (j *jobRows) row(k int) (FleetRow, bool) {
	c := j.cells[k]
	if !c.has(cellPresent) {
		return FleetRow{}, false
	}
	r := FleetRow{Outcome: j.outcomes[c.outcome()], AllocationsOK: j.allocs.at(k)}
	if c.has(cellHost) {
		r.HostCost = &j.host[k]
	}
	if c.has(cellDevice) {
		r.DeviceCost = &j.device[k]
	}
	return r, true
}

// rows are the job's rows in order, each judged as the merge judged it.
func (j *jobRows) rows(g *groupRows) iter.Seq[FleetRow] {
	return func(yield func(FleetRow) bool) {
		for k := range j.cells {
			r, ok := j.row(k)
			if !ok {
				continue
			}
			name, source := g.node(k)
			r.Node, r.Source = string(name), string(source)
			// Fresh copies: a renderer may keep the row past the next one.
			if r.HostCost != nil {
				h := *r.HostCost
				r.HostCost = &h
			}
			if r.DeviceCost != nil {
				d := *r.DeviceCost
				r.DeviceCost = &d
			}
			if why := j.sum.outlier(&r, j.tolerance); j.cells[k].has(cellOutlier) {
				r.Outlier, r.Why = true, strings.Join(why, "; ")
			}
			if !yield(r) {
				return
			}
		}
	}
}

// judge sets the job's median, spread and most common outcome, marks its outliers and returns how many.
func (j *jobRows) judge(job *FleetJob, tol float64, outcomes []result.Outcome) int {
	j.tolerance, j.outcomes = tol, outcomes
	j.summarize(job)
	sum := *job
	sum.rows, sum.group = nil, nil
	j.sum = &sum
	for k := range j.cells {
		if r, ok := j.row(k); ok && len(sum.outlier(&r, tol)) > 0 {
			j.cells[k] |= cellOutlier
			j.outliers++
		}
	}
	return j.outliers
}

// summarize sets the job's median threshold and costs, its range and spread, and its most common outcome.
func (j *jobRows) summarize(job *FleetJob) {
	allocs := make([]float64, 0, j.present)
	var hosts, devices []float64
	counts := make([]int, len(j.outcomes))
	job.MinAllocs = math.MaxUint64
	for k, c := range j.cells {
		if !c.has(cellPresent) {
			continue
		}
		v := j.allocs.at(k)
		allocs = append(allocs, float64(v))
		job.MinAllocs, job.MaxAllocs = min(job.MinAllocs, v), max(job.MaxAllocs, v)
		if c.has(cellHost) {
			hosts = append(hosts, j.host[k])
		}
		if c.has(cellDevice) {
			devices = append(devices, j.device[k])
		}
		counts[c.outcome()]++
	}
	job.MedianAllocs = Median(allocs)
	if job.MedianAllocs > 0 {
		job.Spread = float64(job.MaxAllocs-job.MinAllocs) / job.MedianAllocs
	}
	job.MedianHostCost, job.MedianDeviceCost = medianOrNil(hosts), medianOrNil(devices)
	count := func(o result.Outcome) int {
		if i := slices.Index(j.outcomes, o); i >= 0 {
			return counts[i]
		}
		return 0
	}
	for _, o := range result.Outcomes { // ties go to the healthier outcome, in the enum's order
		if count(o) > count(job.Outcome) {
			job.Outcome = o
		}
	}
}
