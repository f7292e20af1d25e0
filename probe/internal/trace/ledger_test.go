package trace

import (
	"strings"
	"testing"
)

// The layer's table of live attributed allocations, driven directly by a C program that includes the
// layer's source: keys chosen to share one home slot, so that a release in the middle of their run must
// move the ones after it back (deletion by backward shift) for a later lookup to find them; and a key made
// again while the table still holds it (an object the runtime destroyed unseen) retires the old entry.
// Each line the program prints is a check that held; it prints FAIL and stops at the first that did not.
func TestLedgerTableKeepsCollidingKeysFindable(t *testing.T) {
	out, err := runWithLayer(t, `#include <stdio.h>
#define CHECK(c) do { if (!(c)) { printf("FAIL %s\n", #c); return 1; } printf("ok %s\n", #c); } while (0)
static struct tr_header h;
int main(void) {
	hdr = &h, ledger_on = 1, ledger_whole = 1, ledger_rate = 0;
	h.sites[0].state = h.sites[1].state = 2;
	uint64_t keys[4], found = 0;
	uint32_t home = live_home(0x1000);
	for (uint64_t k = 0x1000; found < 4; k += 8) /* four keys with one home slot */
		if (live_home(k) == home) keys[found++] = k;
	CHECK(live_table_mapped() != NULL);
	for (int i = 0; i < 4; i++) {
		ledger_lock();
		pending[npending++] = (struct live_buffer){keys[i], (uint64_t)(100 + i) << SITE_BITS | (uint64_t)(i % 2 + 1)};
		live_count++;
		h.sites[i % 2].live += 1, h.sites[i % 2].live_bytes += 100 + i;
		ledger_unlock();
	}
	ledger_released(keys[1]); /* the second of the run: the two after it move back */
	CHECK(live_count == 3 && h.sites[1].released == 1 && h.sites[1].released_bytes == 101);
	ledger_released(keys[3]); /* found only if the shift kept it reachable from its home */
	CHECK(live_count == 2 && h.sites[1].released == 2 && h.sites[1].released_bytes == 101 + 103);
	ledger_released(keys[2]);
	ledger_released(keys[0]);
	CHECK(live_count == 0 && h.sites[0].released == 2 && h.sites[0].released_bytes == 100 + 102);
	ledger_released(keys[0]); /* twice: nothing more */
	CHECK(h.sites[0].released == 2);
	ledger_lock(); /* the same key made twice without a release between: the first is retired */
	pending[npending++] = (struct live_buffer){keys[0], (uint64_t)7 << SITE_BITS | 1};
	pending[npending++] = (struct live_buffer){keys[0], (uint64_t)9 << SITE_BITS | 1};
	live_count += 2;
	flush_pending();
	ledger_unlock();
	CHECK(live_count == 1 && h.sites[0].released == 3 && h.sites[0].released_bytes == 100 + 102 + 7);
	return 0;
}
`)
	if err != nil || strings.Contains(string(out), "FAIL") || strings.Count(string(out), "ok ") != 6 {
		t.Fatalf("%v:\n%s", err, out)
	}
}

// Only an interpreter's own objects cut a stack: a program or library merely named like one keeps its frames.
func TestInterpreterObjects(t *testing.T) {
	for name, want := range map[string]bool{
		"/usr/bin/python3.11": true, "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0": true, "/usr/bin/python3": true,
		"/usr/lib/jvm/java-17/lib/server/libjvm.so": true, "/usr/bin/node": true, "/usr/lib/libnode.so.108": true,
		"/usr/lib/libruby-3.1.so.3.1": true, "/opt/julia/lib/libjulia-internal.so.1.9": true,
		"/home/u/node-leak": false, "/opt/python_tool": false, "/usr/lib/libpython_helpers.so": false, "/srv/nodeapp": false,
		"/usr/lib/x86_64-linux-gnu/libOpenCL.so.1": false,
	} {
		if _, got := interpreter(name); got != want {
			t.Errorf("interpreter(%q) = %v, want %v", name, got, want)
		}
	}
}
