package supervise

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
)

// Decoy is a small child of the tool's own (this binary as a KindDecoy child) that sits at oom_score_adj
// 1000 holding wire.DecoyBytes, so that the OOM killer takes it before the tool.
//
// Why: where a memory cgroup (or the machine) runs out, the killer takes the child that allocates, which is
// the OOM killer's first choice. But the kernel marks that victim as done (MMF_OOM_SKIP) while its memory
// is still being freed, a batch at a time; a page the tool touches in those milliseconds calls the killer
// again, and the victim no longer counts, so it chooses among what is left: without a decoy, the tool
// itself (1 traced program's kill in 20 to 200 in a 256 MiB cgroup here was followed by the tool's, 4 to
// 8 ms later). With one, the second kill takes the decoy, whose memory is freed at once, and the tool
// lives to record the first.
//
// The zero value has none running; the engine's sessions that run allocating children share one, started
// before each child where none is running (again after a kill took it). The decoy ends when its standard
// input closes: when the tool exits, however it exits.
type Decoy struct {
	mu    sync.Mutex
	ended chan struct{} // closed when the running decoy has ended; nil: none started
	stdin *os.File      // the write end of the decoy's standard input, open while the tool lives
}

// decoyReady is how long ensure waits for a new decoy to hold its memory (a few milliseconds, as a rule).
const decoyReady = time.Second

// ensure starts a decoy where none is running, and waits until it holds its memory. A decoy that cannot
// be started is no error: the tool runs as it would without one.
func (d *Decoy) ensure() {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ended != nil {
		select {
		case <-d.ended:
		default:
			return // running
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	ready, readyW, err := os.Pipe()
	if err != nil {
		r.Close()
		w.Close()
		return
	}
	defer ready.Close()
	cmd := exec.Command(exe, wire.ChildCommand, string(wire.KindDecoy))
	cmd.Stdin, cmd.Stdout = r, readyW
	// A group of its own: a Ctrl-C at the terminal is the tool's to decide, and Groups.Kill leaves it be.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	r.Close()
	readyW.Close()
	if err != nil {
		w.Close()
		return
	}
	// Written here too, as for a traced program, for the moments before the decoy writes its own.
	oomFirst(cmd.Process.Pid)
	// Its memory touched, it writes one byte: the child started next finds it ready. One that does not say
	// so within decoyReady comes up on its own, later.
	_ = ready.SetReadDeadline(time.Now().Add(decoyReady))
	_, _ = ready.Read(make([]byte, 1))
	if d.stdin != nil {
		d.stdin.Close()
	}
	ended := make(chan struct{})
	d.ended, d.stdin = ended, w
	go func() {
		_ = cmd.Wait()
		close(ended)
	}()
}

// oomFirst makes the process the OOM killer's first choice: oom_score_adj 1000, which raising needs no
// privilege for.
func oomFirst(pid int) {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/oom_score_adj", pid), []byte(wire.OOMScoreFirst), 0)
}
