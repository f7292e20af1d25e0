package worker

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// The worker sets every limit a variant may name, and no other.
func TestWorkerLimitsAreTheVariantsLimits(t *testing.T) {
	if got, want := slices.Sorted(maps.Keys(workerLimits)), slices.Sorted(maps.Keys(result.LimitSettings)); !slices.Equal(got, want) {
		t.Errorf("the worker sets %v; variants may name %v", got, want)
	}
}

// A soft limit above the hard one is refused with what to do, and changes nothing.
func TestSetLimitsAboveTheHardLimit(t *testing.T) {
	var before syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &before); err != nil {
		t.Fatal(err)
	}
	err := setLimits(map[string]uint64{"RLIMIT_NOFILE": before.Max + 1})
	want := "RLIMIT_NOFILE " + nofileText(before.Max+1) + " is above the hard limit " + nofileText(before.Max) +
		": raise the hard limit (ulimit -Hn, as root) or ask for less"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	var after syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &after); after != before {
		t.Errorf("the limit moved: %+v, was %+v", after, before)
	}
	if err := setLimits(map[string]uint64{"RLIMIT_STACK": 1}); err == nil {
		t.Errorf("a limit the worker does not know must be refused")
	}
	// A size is written as one: the locked-memory limit, set where its hard limit allows.
	var ml syscall.Rlimit
	if err := syscall.Getrlimit(unix.RLIMIT_MEMLOCK, &ml); err != nil {
		t.Fatal(err)
	}
	if ml.Max != result.Unlimited {
		err := setLimits(map[string]uint64{"RLIMIT_MEMLOCK": ml.Max + 1<<20})
		want := fmt.Sprintf("RLIMIT_MEMLOCK %s is above the hard limit %s: raise the hard limit (ulimit -Hl, as root) or ask for less", units.Bytes(ml.Max+1<<20), units.Bytes(ml.Max))
		if err == nil || err.Error() != want {
			t.Errorf("locked memory above its hard limit: %v", err)
		}
	}
	if err := setLimits(map[string]uint64{"RLIMIT_MEMLOCK": ml.Cur}); err != nil {
		t.Errorf("setting the locked-memory limit to its own value: %v", err)
	}
	if fail := limitFailure(err); fail.Outcome != result.OutcomeFailed || fail.FirstFailure.Stage != result.StageSetup || fail.Reason != err.Error() {
		t.Errorf("a limit that cannot be set fails the job at set-up: %+v", fail)
	}
}

func nofileText(n uint64) string { return limitText(workerLimits["RLIMIT_NOFILE"], n) }

// The ledger's descriptors and locked memory come from the first sample, against this process's soft
// limits; what could not be read is left out, never 0.
func TestStartLedger(t *testing.T) {
	fixtures := sample.Under(filepath.Join("..", "sample", "testdata"))
	s := result.Sample{OpenFDs: 40, LockedBytes: 512 << 10}
	rs := startLedger(fixtures, s, map[string]uint64{"RLIMIT_NOFILE": 1024})
	var nofile, memlock syscall.Rlimit
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile)
	_ = syscall.Getrlimit(unix.RLIMIT_MEMLOCK, &memlock)
	wantLock := memlock.Cur
	if wantLock == result.Unlimited {
		wantLock = 0 // none
	}
	if f := rs.FDs; f == nil || f.AtStart != 40 || f.AtEnd != 40 || f.Limit != nofile.Cur || f.LimitSource != "ulimit -n" || f.PerBuffer != nil {
		t.Errorf("descriptors %+v; want 40 against %d (ulimit -n)", f, nofile.Cur)
	}
	if l := rs.LockedMemory; l == nil || l.AtStart != 512<<10 || l.Limit != wantLock || l.LimitSource != "ulimit -l" {
		t.Errorf("locked memory %+v; want 512 KiB against %d (ulimit -l)", l, wantLock)
	}
	if rs.Cgroup != nil || rs.Devices != nil {
		t.Errorf("the cgroup and the devices are not this function's: %+v", rs)
	}
	// No limit from the shell: the source says the limit is the Go runtime's.
	if rs := startLedger(fixtures, s, nil); rs.FDs == nil || rs.FDs.LimitSource != nofileUnknown {
		t.Errorf("without the shell's limit: %+v", rs.FDs)
	}
	// No count, no VmLck line: neither resource.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "proc", "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "proc", "self", "status"), []byte("VmRSS: 1 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rs := startLedger(sample.Under(dir), result.Sample{}, nil); rs.FDs != nil || rs.LockedMemory != nil {
		t.Errorf("nothing read: %+v %+v", rs.FDs, rs.LockedMemory)
	}
}
