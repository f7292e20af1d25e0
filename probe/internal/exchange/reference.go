package exchange

// reference computes the exchange on the host, exactly as kernels/halo.cl does, over the whole domain.
type reference struct {
	n         int
	cells     uint64
	halo      uint64
	cur, next []uint32
}

func newReference(n int, cells, halo uint64) *reference {
	r := &reference{n: n, cells: cells, halo: halo, cur: make([]uint32, uint64(n)*cells), next: make([]uint32, uint64(n)*cells)}
	for g := range r.cur {
		r.cur[g] = uint32(g)*2654435761 + 12345 // a spread of values, so a stale halo shows
	}
	return r
}

// slab returns device i's part of the current state.
func (r *reference) slab(i int) []uint32 {
	return r.cur[uint64(i)*r.cells : uint64(i+1)*r.cells]
}

func (r *reference) at(g int64) uint32 {
	if g < 0 || g >= int64(len(r.cur)) {
		return 0 // the outside of the domain
	}
	return r.cur[g]
}

func (r *reference) step(t uint32) {
	for g := range r.cur {
		v := r.cur[g]*3 + t
		for k := uint64(1); k <= r.halo; k++ {
			a := r.at(int64(g) - int64(k))
			b := r.at(int64(g) + int64(k))
			v += (a ^ (b * 7)) + uint32(k)
		}
		r.next[g] = v
	}
	r.cur, r.next = r.next, r.cur
}
