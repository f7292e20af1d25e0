package main

// End-to-end tests of the pool strategy: sub-buffers of pool buffers, on PoCL and on the fault-injection
// runtime through the real ICD loader.

import (
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// lastDeviceUse is what device d held at a job's last sample, and whether a sample said.
func lastDeviceUse(s *result.JobResult, d int) (uint64, bool) {
	for i := len(s.Samples) - 1; i >= 0; i-- {
		for _, ds := range s.Samples[i].DeviceSamples {
			if ds.Device == d {
				return ds.UsedBytes, true
			}
		}
	}
	return 0, false
}

// On faultcl, 200 buffers of 1 MiB over two devices in pools of 64 MiB are 100 per device: two pools each,
// 128 MiB of device memory held per device, whatever the sub-buffers; a multi-device context limited to
// 50 buffers (FAULTCL_SHARED_LIMIT) fails shared there, not pool.
func TestPoolCarvesSubBuffersFromPools(t *testing.T) {
	env := FaultEnv(t, "FAULTCL_SHARED_LIMIT=50")
	r, res, _ := runOut(t, env, "--strategies", "shared,pool", "--pool-size", "64MiB", "--max-allocs", "200", "--touch", "fill", "-q")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	var shared, pool *result.JobResult
	for i := range r.Jobs {
		switch r.Jobs[i].Strategy {
		case result.Shared:
			shared = &r.Jobs[i]
		case result.Pool:
			pool = &r.Jobs[i]
		}
	}
	if shared.Outcome != result.OutcomeFailed || shared.FirstFailure.Index != 50 || shared.FirstFailure.Code != -6 {
		t.Errorf("shared: %s at %+v, want -6 at #50", shared.Outcome, shared.FirstFailure)
	}
	if pool.Outcome != result.OutcomeCompleted || pool.AllocationsOK != 200 {
		t.Fatalf("pool: %s after %d, want all 200", pool.Outcome, pool.AllocationsOK)
	}
	for d := range 2 {
		if used, ok := lastDeviceUse(pool, d); !ok || used != 2*64*mib {
			t.Errorf("device %d held %d bytes (sampled: %v), want two pools of 64 MiB", d, used, ok)
		}
	}
	if r.Config.PoolSize != 64*mib {
		t.Errorf("config pool size %d", r.Config.PoolSize)
	}
	oneLineError(t, runTool(t, env, "run", "--strategies", "shared", "--pool-size", "64MiB"), exitUsage, "add pool to --strategies")
	oneLineError(t, runTool(t, env, "run", "--strategies", "pool", "--pool-size", "512KiB"), exitUsage, "smaller than one buffer")
}

// On PoCL the pool strategy fills its sub-buffers (each proven by the first one's read-back) to the budget,
// and host-pointer flags, which a sub-buffer cannot take, make it unsupported with the reason.
func TestPoolOnPoCL(t *testing.T) {
	env := PoCLEnv(t)
	r, res, _ := runOut(t, env, "--strategies", "pool", "--pool-size", "32MiB", "--max-allocs", "100", "--touch", "fill", "-q")
	if s := r.Jobs[0]; res.code != 0 || s.Outcome != result.OutcomeCompleted || s.AllocationsOK != 100 {
		t.Fatalf("exit %d, %s after %d: %s", res.code, s.Outcome, s.AllocationsOK, s.Reason)
	}
	r, _, _ = runOut(t, env, "--strategies", "pool", "--max-allocs", "10", "--flags", "use-host-ptr", "-q")
	if s := r.Jobs[0]; s.Outcome != result.OutcomeUnsupported || s.Reason == "" {
		t.Errorf("use-host-ptr: %s (%q), want unsupported with the reason", s.Outcome, s.Reason)
	}
}
