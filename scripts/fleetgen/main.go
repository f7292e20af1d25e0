// Command fleetgen writes N run.json files that look like one fleet's results, for benchmarking
// `clmemprobe merge` at fleet scale (scripts/merge-bench.sh runs it). Each node is a copy of a real run
// with its own host name, one of three driver versions, thresholds and host costs with a little noise, and
// now and then an outlier: a threshold well short of the others, or a crash. It is a fixture generator:
// what it writes is deterministic for a given seed, and nothing it writes is a measurement.
//
// -shape picks the template and what is done to it:
//
//	example  the four-strategy H200 run of docs/examples as it is (43.5 KB a node)
//	issue    the five-strategy PoCL run beside this file (run --strategies shared,per-device,migrate-first,
//	         device-list,pool --max-allocs 3000 on two pthread devices), its samples made denser and its
//	         workers' output longer until a node is about 94 KiB with its samples 36% of it: the files of
//	         issue 43's merge
//	small    the same PoCL run without its bulk (two samples a job, no findings, system or resource
//	         ledger; compact JSON): about 6 KB a node, for a million nodes on one disk
//
// -fanout K puts the nodes in folders of K (group-NNNN/node-NNNNNNN), as a million in one folder would make
// every listing of it slow.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// drivers are the fleet's driver versions with their share of nodes: most run the current one, a rollout
// is under way, and a few lag behind, so a merge sees three groups.
var drivers = []struct {
	version string
	share   float64
}{{"580.159.04", 0.70}, {"580.126.09", 0.25}, {"575.57.08", 0.05}}

// The outliers: every shortEvery-th node reaches 30% fewer buffers in one strategy, every crashEvery-th
// crashes in one, so that 10,000 nodes hold a few dozen and most nodes are healthy.
const (
	shortEvery = 997
	crashEvery = 2503
)

type options struct {
	nodes, start, fanout int
	out, from, shape     string
	seed                 uint64
}

// templates are the run each -shape starts from.
var templates = map[string]string{
	"example": "docs/examples/nvidia-h200-x2/touch-kernel/run.json",
	"issue":   "scripts/fleetgen/pocl-5-strategies.json",
	"small":   "scripts/fleetgen/pocl-5-strategies.json",
}

func main() {
	var o options
	flag.IntVar(&o.nodes, "n", 10000, "how many run.json files to write")
	flag.IntVar(&o.start, "start", 1, "the first node's number (to add nodes to a fleet in another folder)")
	flag.StringVar(&o.out, "out", "", "the folder to write node-NNNNN/run.json under (required)")
	flag.StringVar(&o.shape, "shape", "example", "example, issue or small (see the package's comment)")
	flag.StringVar(&o.from, "template", "", "the real run.json every node is made from (default: the shape's)")
	flag.IntVar(&o.fanout, "fanout", 0, "put the nodes in folders of this many (0: all in -out)")
	flag.Uint64Var(&o.seed, "seed", 1, "the noise's seed")
	flag.Parse()
	if o.from == "" {
		o.from = templates[o.shape]
	}
	if o.out == "" || o.nodes < 1 || o.start < 1 || o.fanout < 0 || templates[o.shape] == "" {
		fmt.Fprintln(os.Stderr, "usage: fleetgen -n N -out DIR [-shape example|issue|small] [-start K] [-fanout K] [-template RUN.json] [-seed S]")
		os.Exit(2)
	}
	if err := generate(o); err != nil {
		fmt.Fprintln(os.Stderr, "fleetgen:", err)
		os.Exit(1)
	}
}

// generate writes the nodes on one goroutine per CPU: marshalling 46 KB a node is most of the work.
func generate(o options) error {
	// Loaded once to check the template is a result this build reads and to give it its shape; every node
	// is decoded from the shaped bytes again so that nodes share nothing.
	r, err := result.Load(o.from)
	if err != nil {
		return err
	}
	switch o.shape {
	case "issue":
		reshapeIssue(r)
	case "small":
		reshapeSmall(r)
	}
	tmpl, err := json.Marshal(r)
	if err != nil {
		return err
	}
	// Node folders are numbered at one width for any -start, so that a fleet made in parts sorts as one
	// (the width of the last node of each part made node-64000 beside node-0063999).
	width := max(7, len(strconv.Itoa(o.start+o.nodes-1)))
	next := make(chan int)
	errs := make(chan error, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				if err := writeNode(o, tmpl, i, width); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	var first error
	for i := o.start; i < o.start+o.nodes && first == nil; i++ {
		select {
		case next <- i:
		case first = <-errs:
		}
	}
	close(next)
	wg.Wait()
	if first == nil && len(errs) > 0 {
		first = <-errs
	}
	return first
}

// writeNode makes node i from the template and writes it.
func writeNode(o options, tmpl []byte, i, width int) error {
	var r result.Run
	if err := json.Unmarshal(tmpl, &r); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(o.seed, uint64(i)))
	shape(&r, i, rng)
	// Indented, as the tool writes results; the small shape compact, as it is about the count of files.
	b, err := json.MarshalIndent(&r, "", "  ")
	if o.shape == "small" {
		b, err = json.Marshal(&r)
	}
	if err != nil {
		return err
	}
	dir := filepath.Join(o.out, fmt.Sprintf("node-%0*d", width, i))
	if o.fanout > 0 {
		dir = filepath.Join(o.out, fmt.Sprintf("group-%04d", (i-1)/o.fanout), filepath.Base(dir))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "run.json"), append(b, '\n'), 0o644)
}

// shape makes the template node i: its name, its driver, and what each strategy reached. The template's
// budget is raised by a third so that every strategy fails at the devices' memory a little below it, at
// a threshold that varies by about 1% from node to node, as real nodes of one model do.
func shape(r *result.Run, i int, rng *rand.Rand) {
	if r.Environment == nil {
		r.Environment = &result.Environment{}
	}
	r.Environment.Hostname = fmt.Sprintf("gpu-%05d.cluster.example", i)
	driver := pickDriver(rng.Float64())
	for d := range r.Devices {
		r.Devices[d].DriverVersion = driver
	}
	r.Config.MaxAllocs += r.Config.MaxAllocs / 3
	odd := -1 // the strategy that is off on this node, if any
	if i%shortEvery == 0 || i%crashEvery == 0 {
		odd = i % len(r.Jobs)
	}
	for k := range r.Jobs {
		s := &r.Jobs[k]
		if s.Outcome == result.OutcomeUnsupported { // a strategy the runtime lacks is unsupported on every node
			continue
		}
		n := uint64(float64(s.AllocationsOK) * (1 + 0.01*rng.NormFloat64()))
		if k == odd && i%shortEvery == 0 {
			n = n * 7 / 10
		}
		s.AllocationsOK, s.BytesOK = n, n*s.SizeBytes
		s.HostBytesPerBuffer *= 1 + 0.005*rng.NormFloat64()
		if k == odd && i%crashEvery == 0 {
			s.Outcome, s.Signal, s.LastStage, s.FirstFailure, s.Limit = result.OutcomeCrashed, "SIGSEGV", result.StageCreate, nil, ""
			s.Reason = "the worker was killed by SIGSEGV"
			continue
		}
		s.Outcome, s.Limit, s.LastStage = result.OutcomeFailed, result.LimitDeviceMemory, ""
		s.FirstFailure = &result.FirstFailure{Index: n, Stage: result.StageCreate, Code: -4, Name: "CL_MEM_OBJECT_ALLOCATION_FAILURE",
			Call: "clCreateBuffer", Device: int(n % uint64(max(1, len(s.Devices)))), BytesBefore: n * s.SizeBytes}
	}
}

// pickDriver turns a uniform draw into a driver version by the drivers' shares.
func pickDriver(u float64) string {
	for _, d := range drivers {
		if u < d.share {
			return d.version
		}
		u -= d.share
	}
	return drivers[len(drivers)-1].version
}
