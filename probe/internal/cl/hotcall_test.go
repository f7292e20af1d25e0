package cl

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/ebitengine/purego"
)

// TestHotCallPassesNineArguments calls libc's snprintf through the loop's call path with all nine argument
// slots in use (three of them on the stack on amd64) and reads back what C formatted: every argument
// arrives in its place and the integer result comes back, at every stack depth the stack test tries.
func TestHotCallPassesNineArguments(t *testing.T) {
	libc, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW)
	if err != nil {
		t.Fatalf("libc: %v", err)
	}
	snprintf, err := purego.Dlsym(libc, "snprintf")
	if err != nil {
		t.Fatal(err)
	}
	b := newPinnedBlock()
	defer b.release()
	var out [96]byte
	format := []byte("%ld %ld %ld %ld %ld %ld\x00")
	var pin runtime.Pinner
	pin.Pin(&out[0])
	pin.Pin(&format[0])
	defer pin.Unpin()
	depth := 0
	atEveryDepth(t, "snprintf through hotCall", func() error {
		depth++
		values := [6]int64{int64(depth), -1, 1 << 40, 3, -(1 << 33), 9}
		want := fmt.Sprintf("%d %d %d %d %d %d", values[0], values[1], values[2], values[3], values[4], values[5])
		// Pinned: their addresses may sit in the block before the call (the package comment).
		b.args = [9]uintptr{pinnedAddr(&out[0]), uintptr(len(out)), pinnedAddr(&format[0])}
		for i, v := range values {
			b.args[3+i] = uintptr(v)
		}
		n := int(int32(b.call(snprintf, 9)))
		if got := string(out[:min(max(n, 0), len(out)-1)]); n != len(want) || got != want {
			return fmt.Errorf("C returned %d and formatted %q, want %d and %q", n, got, len(want), want)
		}
		return nil
	})
}
