package supervise

import (
	"fmt"
	"strings"
	"sync"
)

// outputBuffer keeps the head and the tail of what a child printed (runtime warnings and logs, an abort
// message, the Go runtime's report of a fault in native code), 64 KiB at most whatever the child prints:
// the head holds the first lines of a crash report, the tail (a ring) the last words.
type outputBuffer struct {
	mu    sync.Mutex
	head  []byte
	ring  [outputTail]byte
	next  int  // where the ring's next byte goes
	full  bool // the ring has wrapped
	total int64
}

const outputHead, outputTail = 2 << 10, 62 << 10

// Write keeps what p adds to the head, and its end in the tail; it never fails.
func (t *outputBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	t.total += int64(n)
	if room := outputHead - len(t.head); room > 0 {
		k := min(room, len(p))
		t.head = append(t.head, p[:k]...)
		p = p[k:]
	}
	if len(p) > outputTail {
		p = p[len(p)-outputTail:]
		t.full = true
	}
	for len(p) > 0 {
		k := copy(t.ring[t.next:], p)
		p = p[k:]
		t.next += k
		if t.next == outputTail {
			t.next, t.full = 0, true
		}
	}
	return n, nil
}

// String is the head and the tail, with a note of how much was left out between them.
func (t *outputBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	tail := string(t.ring[:t.next])
	if t.full {
		tail = string(t.ring[t.next:]) + tail
	}
	sep := ""
	if kept := int64(len(t.head) + len(tail)); t.total > kept {
		sep = fmt.Sprintf("\n[... %d bytes left out ...]\n", t.total-kept)
	}
	return strings.TrimSpace(string(t.head) + sep + tail)
}
