package worker

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// mappingsIn counts the lines of /proc/self/maps that begin in [lo, hi) and, where perms is not empty, have
// those permissions.
func mappingsIn(t *testing.T, lo, hi uintptr, perms string) int {
	t.Helper()
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		start, _, _ := strings.Cut(fields[0], "-")
		a, err := strconv.ParseUint(start, 16, 64)
		if err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		if uintptr(a) >= lo && uintptr(a) < hi && (perms == "" || fields[1] == perms) {
			n++
		}
	}
	return n
}

func TestTheMappingReserveHoldsItsMappingsUntilGivenBack(t *testing.T) {
	const pages = 8
	r := holdMappings(pages)
	if r.mem == nil {
		t.Fatal("no reserve was mapped")
	}
	lo := uintptr(unsafe.Pointer(&r.mem[0]))
	hi := lo + uintptr(len(r.mem))
	want := 2*pages + 1 // every readable page splits the region, and is one mapping itself
	// Nothing else can map into the range while the reserve holds it.
	if got := mappingsIn(t, lo, hi, ""); got != want || r.held != uint64(want) {
		t.Fatalf("the reserve holds %d mappings (counted %d), want %d", got, r.held, want)
	}
	r.giveBack()
	// Once given back, the Go runtime may map into the range (its heap and stacks are read-write or
	// reserved, never read-only): the reserve's read-only pages are what must be gone.
	if got := mappingsIn(t, lo, hi, "r--p"); got != 0 || r.given != uint64(want) || r.held != 0 || r.mem != nil {
		t.Fatalf("given back: %d of its read-only pages left, given %d, held %d; want 0, %d, 0", got, r.given, r.held, want)
	}
	r.giveBack() // a second time gives nothing more
	if r.given != uint64(want) {
		t.Errorf("given %d after a second giveBack, want %d", r.given, want)
	}
	var none *mapReserve
	none.giveBack() // no reserve (vm.max_map_count unknown): nothing to give
}
