package findings

import (
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// largestDevice is a device whose search verified the sizes of verified and ended the others as given.
func largestDevice(tries ...result.LargestTry) result.LargestDevice {
	d := result.LargestDevice{Index: 0, Name: "dev", MaxAllocBytes: 8 << 30, GlobalMemBytes: 16 << 30, BoundBytes: 16 << 30, BoundBy: result.BoundDevice, Tries: tries}
	for _, t := range tries {
		if t.Outcome == result.TryVerified {
			d.LargestVerifiedBytes = max(d.LargestVerifiedBytes, t.SizeBytes)
		}
	}
	d.Patterns = []result.LargestPattern{{PatternBytes: 4, LargestVerifiedBytes: d.LargestVerifiedBytes}}
	return d
}

func try(size uint64, o result.TryOutcome) result.LargestTry {
	return result.LargestTry{SizeBytes: size, PatternBytes: 4, Outcome: o}
}

// TestLargestVerdictSaysWhatEndedTheSearch checks the headline's words for what bounded or cut a search,
// each with the figures of its device.
func TestLargestVerdictSaysWhatEndedTheSearch(t *testing.T) {
	const mib = 1 << 20
	interrupted := largestDevice(try(64*mib, result.TryVerified), try(128*mib, result.TryVerified), try(256*mib, result.TryInterrupted))
	interrupted.Interrupted, interrupted.Patterns, interrupted.LargestVerifiedBytes = true, nil, 0
	killed := largestDevice(try(256*mib, result.TryVerified), try(512*mib, result.TryOOMKilled), try(384*mib, result.TryVerified))
	killed.CgroupLimitBytes = 512 * mib
	byCgroup := largestDevice(try(64*mib, result.TryVerified), try(939*mib, result.TryVerified))
	byCgroup.BoundBytes, byCgroup.BoundBy, byCgroup.CgroupLimitBytes = 939*mib, result.BoundCgroup, 1<<30
	byAddressSpace := largestDevice(try(64*mib, result.TryVerified), try(876*mib, result.TryVerified))
	byAddressSpace.BoundBytes, byAddressSpace.BoundBy = 876*mib, result.BoundAddressSpace
	byAddressSpace.AddressSpaceLimitBytes, byAddressSpace.WorkerMappedBytes = 3072000000, 1990*mib
	// The try at an address-space bound failed (a worker that mapped one arena more): the limit is named.
	failedNearBound := largestDevice(try(64*mib, result.TryVerified), try(600*mib, result.TryVerified), try(639*mib, result.TryCrashed))
	failedNearBound.BoundBytes, failedNearBound.BoundBy, failedNearBound.AddressSpaceLimitBytes, failedNearBound.WorkerMappedBytes = 639*mib, result.BoundAddressSpace, 2816*mib, 2113*mib
	fell := largestDevice(try(64*mib, result.TryVerified), try(698*mib, result.TryVerified))
	fell.BoundBytes, fell.BoundBy, fell.AddressSpaceLimitBytes, fell.WorkerMappedBytes = 639*mib, result.BoundAddressSpace, 2816*mib, 2113*mib
	// Under ulimit -v before the bound: a crash at 896 MiB, and -61 above the maximum at 16 GiB. The
	// refusal far above the largest is not the runtime enforcing its maximum at 888 MiB.
	refusedFarAbove := largestDevice(try(888*mib, result.TryVerified), try(896*mib, result.TryCrashed),
		result.LargestTry{SizeBytes: 16 << 30, PatternBytes: 4, Outcome: result.TryRefused, Code: -61, Call: "clCreateBuffer"})
	// A create that outlasted the hang limit at a size another pattern verified: slow, not a fill bug.
	slowCreate := largestDevice(try(1<<30, result.TryVerified), result.LargestTry{SizeBytes: 1 << 30, PatternBytes: 1, Outcome: result.TryHung, Stage: result.StageCreate})
	slowCreate.Patterns = append(slowCreate.Patterns, result.LargestPattern{PatternBytes: 1})
	// Another process held a quarter of the device before the search; the runtime's own context, a twentieth
	// less a byte, is not named.
	heldQuarter, heldLittle := uint64(4<<30), uint64(16<<30)/20-1
	othersHeld := largestDevice(try(64*mib, result.TryVerified), try(12<<30, result.TryVerified), try(13<<30, result.TryFailed))
	othersHeld.DeviceUsedAtStartBytes = &heldQuarter
	littleHeld := othersHeld
	littleHeld.DeviceUsedAtStartBytes = &heldLittle
	// A quarter held, but the search ended far below what the others left (a refusal at 2 GiB): their
	// memory did not bound it, and nothing is said of it.
	heldNotBounding := largestDevice(try(2<<30, result.TryVerified), try(3<<30, result.TryRefused))
	heldNotBounding.DeviceUsedAtStartBytes = &heldQuarter
	noRoom := result.LargestDevice{Name: "dev", MaxAllocBytes: 8 << 30, BoundBytes: 0, BoundBy: result.BoundCgroup, CgroupLimitBytes: 1 << 30}
	// Each case's verdict, by its name, is held by the golden file.
	var verdicts []string
	for _, c := range []struct {
		name string
		d    result.LargestDevice
	}{
		{"interrupted", interrupted},
		{"OOM-killed above, in a cgroup", killed},
		{"bounded by the cgroup", byCgroup},
		{"bounded by the address space", byAddressSpace},
		{"an address-space bound that fell below the largest", fell},
		{"a failure at an address-space bound", failedNearBound},
		{"refused far above the largest", refusedFarAbove},
		{"a slow create is no fill bug", slowCreate},
		{"others held a quarter", othersHeld},
		{"the runtime's own context", littleHeld},
		{"others held, but did not bound it", heldNotBounding},
		{"no room at all", noRoom},
	} {
		verdicts = append(verdicts, c.name+": "+LargestVerdict(&c.d))
	}
	goldenLines(t, "largest-verdicts", verdicts)
	// firstKilledAbove: only the smallest try above the largest counts; a kill above another ending is not it.
	refusedFirst := largestDevice(try(256*mib, result.TryVerified), try(300*mib, result.TryRefused), try(512*mib, result.TryOOMKilled))
	if k := firstKilledAbove(&refusedFirst, 256*mib); k != nil {
		t.Errorf("firstKilledAbove named %d bytes, but the smallest try above was refused", k.SizeBytes)
	}
}
