package exchange

import "testing"

// The reference must not depend on how the domain is split: 3 slabs of 40 cells evolve exactly as one
// slab of 120, which is what the devices' slabs plus halos must reproduce.
func TestReferenceIsIndependentOfTheSplit(t *testing.T) {
	split, whole := newReference(3, 40, 3), newReference(1, 120, 3)
	for step := uint32(0); step < 25; step++ {
		split.step(step)
		whole.step(step)
	}
	for g := range whole.cur {
		if split.cur[g] != whole.cur[g] {
			t.Fatalf("cell %d: %d split, %d whole", g, split.cur[g], whole.cur[g])
		}
	}
}

// One step by hand for a domain of 3 cells, halo 1, zeros outside.
func TestReferenceStepByHand(t *testing.T) {
	r := newReference(1, 3, 1)
	r.cur = []uint32{1, 2, 3}
	r.step(5)
	want := []uint32{
		1*3 + 5 + (0 ^ 2*7) + 1,
		2*3 + 5 + (1 ^ 3*7) + 1,
		3*3 + 5 + (2 ^ 0*7) + 1,
	}
	for i := range want {
		if r.cur[i] != want[i] {
			t.Errorf("cell %d = %d, want %d", i, r.cur[i], want[i])
		}
	}
}
