package worker

import (
	"io"
	"os"
	"syscall"

	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
)

// isDecoy says this child is the OOM decoy: its kind rides in its arguments, as every child's does, and it
// is started without the protocol's descriptors or a spec.
func isDecoy(args []string) bool { return len(args) > 2 && args[2] == string(wire.KindDecoy) }

// runDecoy is the OOM decoy (supervise.Decoy): the OOM killer's first choice, holding wire.DecoyBytes of
// touched memory outside the Go heap, which it says with one byte on its standard output, until its
// standard input closes (the tool exited); then it exits.
func runDecoy(stdin io.Reader) int {
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte(wire.OOMScoreFirst), 0)
	mem, err := syscall.Mmap(-1, 0, wire.DecoyBytes, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err == nil {
		for i := 0; i < len(mem); i += os.Getpagesize() {
			mem[i] = 1
		}
	}
	_, _ = os.Stdout.Write([]byte{1}) // ready: the parent waits for it
	_, _ = io.Copy(io.Discard, stdin)
	return exitOK
}
