package cl

import (
	"fmt"
	"testing"
)

// The calls that pass through a call block allocate nothing: the allocation loop makes them for every
// buffer, and a garbage collection in the loop would move the figures it measures.
func TestBlockCallsAllocateNothing(t *testing.T) {
	e := openStackEnv(t)
	k, err := e.prog.Kernel("k")
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.ctx.CreateBuffer(MEM_READ_WRITE, 64, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer e.ctx.ReleaseMem(m)
	e.q.SetFillPattern([]byte{1, 2, 3, 4})
	list := []Mem{m}
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"Fill", func() error { ev, err := e.q.Fill(m, 64, true); e.q.ReleaseEvent(ev); return err }},
		{"Migrate", func() error { ev, err := e.q.Migrate(list, nil, true); e.q.ReleaseEvent(ev); return err }},
		{"SetMem, SetUint32, RunKernel", func() error {
			if err := k.SetMem(0, m); err != nil {
				return err
			}
			if err := k.SetUint32(1, 7); err != nil {
				return err
			}
			_, err := e.q.RunKernel(k, 16, false)
			return err
		}},
		{"CommandStatus", func() error {
			ev, err := e.q.Fill(m, 64, true)
			if err == nil {
				_, err = e.q.CommandStatus(ev)
			}
			e.q.ReleaseEvent(ev)
			return err
		}},
		{"Finish", e.q.Finish},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if n := testing.AllocsPerRun(100, func() { err = c.call() }); n != 0 || err != nil {
				t.Errorf("%v allocations per call (%v), want none", n, err)
			}
		})
	}
}

// A list longer than the call block's room is refused with the limit, before any call.
func TestMigrateRefusesALongList(t *testing.T) {
	q := &Queue{hot: newPinnedBlock()}
	defer q.hot.release()
	_, err := q.Migrate(make([]Mem, listRoom+1), nil, false)
	if err == nil || err.Error() != fmt.Sprintf("clEnqueueMigrateMemObjects: %d buffers and 0 events to wait for; the binding passes at most %d of each", listRoom+1, listRoom) {
		t.Errorf("got %v, want the binding's limit", err)
	}
}
