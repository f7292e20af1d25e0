package trace

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

// runWithLayer compiles a C program that includes the layer's own source (so it sees its types and static
// functions) before body, runs it, and returns what it printed.
func runWithLayer(t *testing.T, body string) ([]byte, error) {
	t.Helper()
	built(t) // skips where nothing can be compiled
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "prog.c"), filepath.Join(dir, "prog")
	prog := `#include "` + filepath.Join(root(), "probe", "internal", "trace", "layer", "clmemprobe_layer.c") + "\"\n" + body
	if err := os.WriteFile(src, []byte(prog), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cc", "-O1", "-o", bin, src, "-ldl", "-lm", "-pthread").CombinedOutput(); err != nil {
		t.Fatalf("compiling with the layer: %v: %s", err, out)
	}
	return exec.Command(bin).CombinedOutput()
}

// The Go mirror of the channel has the C layout: sizes and the offsets of fields both sides use, printed by
// a C program that includes the layer's own source.
func TestLayoutMatchesC(t *testing.T) {
	out, err := runWithLayer(t, `#include <stdio.h>
#include <stddef.h>
int main(void) {
	printf("%zu %zu %zu %zu ", sizeof(struct tr_header), sizeof(struct tr_record), sizeof(struct tr_device), sizeof(struct tr_context));
	printf("%zu %zu %zu %zu %zu ", offsetof(struct tr_header, shards_used), offsetof(struct tr_header, tail), offsetof(struct tr_header, first), offsetof(struct tr_header, devices), offsetof(struct tr_header, contexts));
	printf("%zu %zu %zu %zu %zu ", offsetof(struct tr_header, fast_head), offsetof(struct tr_header, head), offsetof(struct tr_header, fast_tail), offsetof(struct tr_header, devices_untracked), offsetof(struct tr_record, after_count));
	printf("%zu %zu %zu ", offsetof(struct tr_header, first_time_ns), offsetof(struct tr_header, fast_dropped), offsetof(struct tr_header, first_buffer));
	printf("%zu %zu %zu %zu %zu ", offsetof(struct tr_context, failures), offsetof(struct tr_record, aux), offsetof(struct tr_header, shards), sizeof(struct tr_shard), offsetof(struct tr_device, pci_bus_id));
	printf("%zu %zu %zu %zu %d %d ", offsetof(struct tr_header, layer_inits), offsetof(struct tr_header, unresolved), offsetof(struct tr_header, libraries), sizeof(struct tr_library), L_LOADER, L_RUNTIME);
	printf("%d %d %d %d %d %d %d %d %d %d %d ", K_CONTEXT, K_BUFFER, K_SUB_BUFFER, K_BUFFER_PROPS, K_RELEASE_MEM, K_RELEASE_CONTEXT, K_ENQUEUE, M_LAYER, M_PRELOAD, B_NEWEST, B_OLDER);
	printf("%d %zu ", K_ISSUE, offsetof(struct tr_header, log_calls));
	printf("%zu %zu %zu %zu %zu %zu %zu %zu %zu %d %d %d %d ", offsetof(struct tr_header, ledger), offsetof(struct tr_header, stacks_cached), offsetof(struct tr_header, objects),
		offsetof(struct tr_header, sites), sizeof(struct tr_site), sizeof(struct tr_object), offsetof(struct tr_site, objects), offsetof(struct tr_site, attributed),
		offsetof(struct tr_site, first_live_bytes), O_PROGRAM, O_SELF, S_UNWOUND, S_TRUNCATED);
	printf("%zu %d %d %d %zu\n", offsetof(struct tr_site, alloc), A_BUFFER, A_IMAGE, A_SVM, offsetof(struct tr_object, name));
	return 0;
}
`)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var h header
	var c ctxSlot
	var r record
	var d devSlot
	var s siteSlot
	want := fmt.Sprintf("%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d", unsafe.Sizeof(h), unsafe.Sizeof(r), unsafe.Sizeof(devSlot{}), unsafe.Sizeof(c),
		unsafe.Offsetof(h.ShardsUsed), unsafe.Offsetof(h.Tail), unsafe.Offsetof(h.First), unsafe.Offsetof(h.Devices), unsafe.Offsetof(h.Contexts),
		unsafe.Offsetof(h.FastHead), unsafe.Offsetof(h.Head), unsafe.Offsetof(h.FastTail), unsafe.Offsetof(h.DevicesUntracked), unsafe.Offsetof(r.AfterCount), unsafe.Offsetof(h.FirstTimeNS), unsafe.Offsetof(h.FastDropped), unsafe.Offsetof(h.FirstBuffer),
		unsafe.Offsetof(c.Failures), unsafe.Offsetof(r.Aux), unsafe.Offsetof(h.Shards), unsafe.Sizeof(shard{}), unsafe.Offsetof(d.PCIBusID)) +
		fmt.Sprintf(" %d %d %d %d %d %d", unsafe.Offsetof(h.LayerInits), unsafe.Offsetof(h.Unresolved), unsafe.Offsetof(h.Libraries), unsafe.Sizeof(libSlot{}), libLoader, libRuntime) +
		fmt.Sprintf(" %d %d %d %d %d %d %d %d %d %d %d", kindContext, kindBuffer, kindSubBuffer, kindBufferProps, kindReleaseMem, kindReleaseContext, kindEnqueue,
			mechLayer, mechPreload, bufferNewest, bufferOlder) +
		fmt.Sprintf(" %d %d", kindIssue, unsafe.Offsetof(h.LogCalls)) +
		fmt.Sprintf(" %d %d %d %d %d %d %d %d %d %d %d %d %d", unsafe.Offsetof(h.Ledger), unsafe.Offsetof(h.StacksCached), unsafe.Offsetof(h.Objects),
			unsafe.Offsetof(h.Sites), unsafe.Sizeof(siteSlot{}), unsafe.Sizeof(objSlot{}), unsafe.Offsetof(s.Objects), unsafe.Offsetof(s.Attributed),
			unsafe.Offsetof(s.FirstLiveBytes), objProgram, objSelf, siteUnwound, siteTruncated) +
		fmt.Sprintf(" %d %d %d %d %d", unsafe.Offsetof(s.Alloc), allocBuffer, allocImage, allocSVM, unsafe.Offsetof(objSlot{}.Name))
	if got := strings.TrimSpace(string(out)); got != want {
		t.Fatalf("C layout %s, Go layout %s", got, want)
	}
}
