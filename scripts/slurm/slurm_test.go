// Package slurm tests the Slurm recipes of this folder on a real single-node Slurm (local-cluster.sh):
// clmemprobe.sbatch as a 4-task array on PoCL, merge.sbatch after it, and a deviant fifth node. It needs
// root and Debian's Slurm packages; scripts/slurm/test.sh installs them and runs it (CLMEMPROBE_SLURM_TEST=1).
package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/comparison"
)

func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// cluster is a running local Slurm and what the jobs need.
type cluster struct {
	t    *testing.T
	work string
	bin  string // the clmemprobe the jobs run
	env  []string
}

func (c *cluster) cmd(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env, cmd.Dir = c.env, c.work
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, errb.String())
	}
	return strings.TrimSpace(out.String()), err
}

// sbatch submits a script of this folder and returns the job id; prefix runs before sbatch in a shell
// (a ulimit, which Slurm passes on to the job).
func (c *cluster) sbatch(prefix string, args ...string) string {
	c.t.Helper()
	line := prefix + " exec sbatch --parsable"
	for _, a := range args {
		line += " '" + a + "'"
	}
	id, err := c.cmd("bash", "-c", line)
	if err != nil {
		c.t.Fatal(err)
	}
	return id
}

// state is a job's state as scontrol says it (every task of an array: one state per task).
func (c *cluster) states(id string) []string {
	out, err := c.cmd("scontrol", "-o", "show", "job", id)
	if err != nil {
		c.t.Fatal(err)
	}
	var states []string
	for _, line := range strings.Split(out, "\n") {
		for _, f := range strings.Fields(line) {
			if s, ok := strings.CutPrefix(f, "JobState="); ok {
				states = append(states, s)
			}
		}
	}
	return states
}

// wait waits until every task of the job has ended and returns their states.
func (c *cluster) wait(id string, within time.Duration) []string {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for {
		st := c.states(id)
		done := len(st) > 0
		for _, s := range st {
			done = done && !slices.Contains([]string{"PENDING", "RUNNING", "CONFIGURING", "COMPLETING"}, s)
		}
		if done {
			return st
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("job %s still %v after %s", id, st, within)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func TestSlurmRecipes(t *testing.T) {
	if os.Getenv("CLMEMPROBE_SLURM_TEST") != "1" {
		t.Skip("starts a real Slurm as root: run scripts/slurm/test.sh")
	}
	c, start := startCluster(t)
	results := filepath.Join(c.work, "results")
	const budget = 300
	runFlags := []string{"--touch", "fill", "--max-allocs", fmt.Sprint(budget), "--strategies", "shared,per-device", "--hang-timeout", "30s"}

	// The recipe as the README gives it: the array, then the merge after it.
	array := c.sbatch("", append([]string{"--array=0-3", filepath.Join(here(), "clmemprobe.sbatch"), results}, runFlags...)...)
	merge := c.sbatch("", "--dependency=afterany:"+array, filepath.Join(here(), "merge.sbatch"), filepath.Join(results, array))
	states := c.wait(array, 3*time.Minute)
	if len(states) != 4 || slices.ContainsFunc(states, func(s string) bool { return s != "COMPLETED" }) {
		t.Fatalf("the array's tasks ended %v, want 4 COMPLETED", states)
	}
	if st := c.wait(merge, time.Minute); len(st) != 1 || st[0] != "COMPLETED" {
		t.Errorf("the merge job ended %v, want COMPLETED (exit 0: no outlier)", st)
	}
	t.Logf("array and merge done %s after start", time.Since(start).Round(time.Millisecond))
	checkMergeJob(t, filepath.Join(results, array), budget)

	// A fifth node with a lower address-space limit (Slurm passes the submitting shell's limits on): its
	// runtime cannot place the buffers the others do. The merge must single it out and exit 1.
	deviant := c.sbatch("ulimit -v 2000000;", append([]string{"--array=4", filepath.Join(here(), "clmemprobe.sbatch"), results}, runFlags...)...)
	c.wait(deviant, 2*time.Minute)
	c.checkDeviantMerge(filepath.Join(results, array), filepath.Join(results, deviant))
	c.checkHealthCheck(filepath.Join(results, array, "0", "run.json"))
	t.Logf("done %s after start", time.Since(start).Round(time.Millisecond))
}

// startCluster builds clmemprobe and starts a single-node Slurm with local-cluster.sh, which the test's
// cleanup stops again (and then checks that no job's process is left).
func startCluster(t *testing.T) (*cluster, time.Time) {
	work := t.TempDir()
	bin := filepath.Join(work, "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "clmemprobe"), "./cmd/clmemprobe")
	build.Dir, build.Env = filepath.Join(here(), "..", ".."), append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building clmemprobe: %v: %s", err, out)
	}
	dir := filepath.Join(work, "cluster")
	script := filepath.Join(here(), "local-cluster.sh")
	start := time.Now()
	if out, err := exec.Command("bash", script, "up", dir).CombinedOutput(); err != nil {
		t.Fatalf("local-cluster.sh up: %v: %s", err, out)
	}
	t.Logf("Slurm up in %s", time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		if out, err := exec.Command("bash", script, "down", dir).CombinedOutput(); err != nil {
			t.Errorf("local-cluster.sh down: %v: %s", err, out)
		}
		if out, _ := exec.Command("pgrep", "-a", "-f", "slurmstepd|clmemprobe run").Output(); len(out) > 0 {
			t.Errorf("processes left behind: %s", out)
		}
	})
	return &cluster{t: t, work: work, bin: filepath.Join(bin, "clmemprobe"), env: append(os.Environ(), "SLURM_CONF="+filepath.Join(dir, "slurm.conf"),
		"PATH="+bin+":"+os.Getenv("PATH"), "POCL_DEVICES=pthread pthread", "OCL_ICD_VENDORS=/etc/OpenCL/vendors")}, start
}

// checkMergeJob holds what the merge job wrote to the four run.json files it read, field by field.
func checkMergeJob(t *testing.T, dir string, budget uint64) {
	var fleet comparison.Fleet
	readJSON(t, filepath.Join(dir, "fleet.json"), &fleet)
	runs := map[string]*result.Run{}
	for i := 0; i < 4; i++ {
		p := filepath.Join(dir, fmt.Sprint(i), "run.json")
		r, err := result.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		runs[p] = r
	}
	checkFleet(t, &fleet, runs, budget)
	b, err := os.ReadFile(filepath.Join(dir, "fleet.png"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(b)); err != nil {
		t.Errorf("fleet.png: %v", err)
	}
	if md, err := os.ReadFile(filepath.Join(dir, "fleet.md")); err != nil || !strings.Contains(string(md), "no outliers") {
		t.Errorf("fleet.md: %v, want it to say there are no outliers", err)
	}
	for p := range runs {
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), "clmemprobe.prom")); err != nil {
			t.Errorf("each task writes its metrics: %v", err)
		}
	}
}

// checkDeviantMerge merges the four nodes with the deviant fifth: exit 1, and only its rows are outliers.
func (c *cluster) checkDeviantMerge(healthy, deviant string) {
	t := c.t
	out, err := c.cmd(c.bin, "merge", "--format", "json", healthy, deviant)
	if err == nil || !strings.Contains(err.Error(), "exit status 1:") {
		t.Errorf("merge with the deviant node: %v, want exit status 1", err)
	}
	var fleet comparison.Fleet
	if err := json.Unmarshal([]byte(out), &fleet); err != nil {
		t.Fatalf("merge output: %v: %s", err, out)
	}
	if fleet.Results != 5 || len(fleet.Groups) != 1 {
		t.Fatalf("want 5 results in one group, got %d in %d", fleet.Results, len(fleet.Groups))
	}
	for _, j := range fleet.Groups[0].Jobs {
		for _, r := range j.Rows {
			isDeviant := strings.Contains(r.Source, deviant)
			if r.Outlier != isDeviant {
				t.Errorf("%s on %s: outlier %v (%s); only the fifth node's rows may be", j.Strategy, r.Source, r.Outlier, r.Why)
			}
		}
	}
	if fleet.Outliers != len(fleet.Groups[0].Jobs) {
		// Every row, so that a failure on a machine no one can look into says what each node reached.
		var rows []string
		for _, j := range fleet.Groups[0].Jobs {
			for _, r := range j.Rows {
				rows = append(rows, fmt.Sprintf("%s %s: %s %d outlier=%v %s", j.Strategy, r.Source, r.Outcome, r.AllocationsOK, r.Outlier, r.Why))
			}
		}
		t.Errorf("%d outliers, want one per job of the deviant node (%d):\n%s", fleet.Outliers, len(fleet.Groups[0].Jobs), strings.Join(rows, "\n"))
	}
}

// checkHealthCheck runs the health check as slurmd would: healthy leaves the node alone; a node below its
// expectations (the same lower address-space limit) is drained with the check's line as the reason.
func (c *cluster) checkHealthCheck(recorded string) {
	t := c.t
	expect := filepath.Join(c.work, "expect.json")
	if _, err := c.cmd(c.bin, "check", "--record", "--output", expect, recorded); err != nil {
		t.Fatal(err)
	}
	hc := filepath.Join(here(), "healthcheck.sh")
	c.env = append(c.env, "CLMEMPROBE_EXPECT="+expect, "SLURMD_NODENAME=clmemprobe-node")
	if out, err := c.cmd("sh", hc); err != nil {
		t.Errorf("healthcheck.sh on a healthy node: %v %s", err, out)
	}
	if st := c.nodeState(); st != "idle" {
		t.Errorf("after a healthy check the node is %q, want idle", st)
	}
	if _, err := c.cmd("sh", "-c", "ulimit -v 2000000; exec sh "+hc); err == nil {
		t.Errorf("healthcheck.sh below expectation exited 0, want 1")
	}
	if st, reason := c.nodeState(), c.nodeReason(); !strings.HasPrefix(st, "drain") || !strings.Contains(reason, "clmemprobe (exit 1): BELOW EXPECTATION") {
		t.Errorf("after a failed check the node is %q with reason %q; want drained with the check's line", st, reason)
	}
	if _, err := c.cmd("scontrol", "update", "NodeName=clmemprobe-node", "State=RESUME"); err != nil {
		t.Error(err)
	}
}

func (c *cluster) nodeState() string {
	out, _ := c.cmd("sinfo", "-h", "-N", "-o", "%T")
	return out
}

func (c *cluster) nodeReason() string {
	out, _ := c.cmd("sinfo", "-h", "-N", "-o", "%E")
	return out
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// checkFleet checks every field of the merge against what the runs recorded.
func checkFleet(t *testing.T, f *comparison.Fleet, runs map[string]*result.Run, budget uint64) {
	t.Helper()
	if f.Results != len(runs) || len(f.Groups) != 1 || f.Outliers != 0 || f.Tolerance != 0.1 {
		t.Fatalf("want %d results in one group, no outlier, tolerance 0.1: %d results, %d groups, %d outliers, %v", len(runs), f.Results, len(f.Groups), f.Outliers, f.Tolerance)
	}
	g := f.Groups[0]
	var any *result.Run
	for _, r := range runs {
		any = r
	}
	if g.Platform != any.Platform.Name || g.DeviceModel != result.DeviceModel(any.Devices) || g.DriverVersion != result.DriverVersions(any.Devices) ||
		g.Touch != result.TouchFill || g.MaxAllocs != budget || g.MaxBytes != 0 || g.Nodes != len(runs) {
		t.Errorf("group %+v does not match the runs (platform %q, devices %q)", g, any.Platform.Name, result.DeviceModel(any.Devices))
	}
	if len(g.Jobs) != len(any.Jobs) {
		t.Fatalf("%d jobs, want %d", len(g.Jobs), len(any.Jobs))
	}
	for _, j := range g.Jobs {
		var allocs []float64
		var lo, hi uint64 = math.MaxUint64, 0
		if len(j.Rows) != len(runs) {
			t.Errorf("%s: %d rows, want %d", j.Strategy, len(j.Rows), len(runs))
		}
		for _, row := range j.Rows {
			r := runs[row.Source]
			if r == nil {
				t.Errorf("%s: a row from %s, which is not one of the runs", j.Strategy, row.Source)
				continue
			}
			var s *result.JobResult
			for i := range r.Jobs {
				if r.Jobs[i].Strategy == j.Strategy && r.Jobs[i].SizeBytes == j.SizeBytes {
					s = &r.Jobs[i]
				}
			}
			if s == nil {
				t.Fatalf("%s: not in %s", j.Strategy, row.Source)
			}
			if row.Node != r.Environment.Hostname || row.Outcome != s.Outcome || row.AllocationsOK != s.AllocationsOK || row.Outlier || row.Why != "" {
				t.Errorf("%s %s: row %+v, run says node %q %s %d", j.Strategy, row.Source, row, r.Environment.Hostname, s.Outcome, s.AllocationsOK)
			}
			if row.HostCost == nil || *row.HostCost != s.HostBytesPerBuffer {
				t.Errorf("%s %s: host cost %v, run says %v", j.Strategy, row.Source, row.HostCost, s.HostBytesPerBuffer)
			}
			allocs = append(allocs, float64(s.AllocationsOK))
			lo, hi = min(lo, s.AllocationsOK), max(hi, s.AllocationsOK)
		}
		slices.Sort(allocs)
		med := (allocs[1] + allocs[2]) / 2
		if j.MedianAllocs != med || j.MinAllocs != lo || j.MaxAllocs != hi || j.Outcome != result.OutcomeCompleted || j.Variant != result.DefaultVariant {
			t.Errorf("%s: median %v range %d-%d outcome %s variant %s; want %v, %d-%d, completed, default", j.Strategy, j.MedianAllocs, j.MinAllocs, j.MaxAllocs, j.Outcome, j.Variant, med, lo, hi)
		}
	}
}
