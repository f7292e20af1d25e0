package probe

import "testing"

func TestBudget(t *testing.T) {
	p := Plan{MaxAllocs: 100000, MaxBytes: 1 << 30}
	if got := p.Budget(1 << 20); got != 1024 {
		t.Errorf("1 GiB of 1 MiB buffers: %d, want 1024", got)
	}
	if got := p.Budget(1 << 10); got != 100000 {
		t.Errorf("the smaller limit wins: %d, want 100000", got)
	}
}
