package exchange

import (
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/cl"
)

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

func TestConfigValidate(t *testing.T) {
	two := []*cl.Device{{}, {}}
	cases := []struct {
		name string
		c    Config
		ok   bool
	}{
		{"fine", Config{Devices: two, Cells: 64, Halo: 4, Steps: 1, Sync: SyncEvents, BufferFlags: cl.MEM_READ_WRITE}, true},
		{"one device", Config{Devices: two[:1], Cells: 64, Halo: 4, Steps: 1, Sync: SyncEvents, BufferFlags: cl.MEM_READ_WRITE}, false},
		{"halo wider than a slab", Config{Devices: two, Cells: 3, Halo: 4, Steps: 1, Sync: SyncEvents, BufferFlags: cl.MEM_READ_WRITE}, false},
		{"zero steps", Config{Devices: two, Cells: 64, Halo: 4, Steps: 0, Sync: SyncEvents, BufferFlags: cl.MEM_READ_WRITE}, false},
		{"zero halo", Config{Devices: two, Cells: 64, Halo: 0, Steps: 1, Sync: SyncEvents, BufferFlags: cl.MEM_READ_WRITE}, false},
		{"unknown sync", Config{Devices: two, Cells: 64, Halo: 4, Steps: 1, Sync: "barrier", BufferFlags: cl.MEM_READ_WRITE}, false},
	}
	for _, c := range cases {
		if err := c.c.Validate(); (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
