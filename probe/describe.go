package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// DescribeCommand is the hidden command under which the binary lists platforms and devices for `run`.
const DescribeCommand = "__describe"

// describeAnswer is what the describing child prints.
type describeAnswer struct {
	Inventory *Inventory `json:"inventory,omitempty"`
	Error     string     `json:"error,omitempty"`
	NoOpenCL  bool       `json:"no_opencl,omitempty"`
}

// RunDescribe is the describing child: it opens the library, enumerates, prints the answer and exits. The
// parent of a run never loads the vendor runtime itself: its memory (tens of MiB for a compiler-bearing
// runtime) would count as the tool's, and a runtime that crashes while enumerating would take the parent
// and its results down.
func RunDescribe(libPath string, out io.Writer) int {
	var a describeAnswer
	rt, err := OpenRuntime(libPath)
	if err != nil {
		a.Error, a.NoOpenCL = err.Error(), errors.Is(err, ErrNoOpenCL)
	} else {
		a.Inventory = rt.Inventory
	}
	if err := json.NewEncoder(out).Encode(a); err != nil {
		return 3
	}
	return 0
}

// DescribeInChild lists platforms and devices in a child process (see RunDescribe). exe "" is this binary.
func DescribeInChild(exe, libPath string, timeout time.Duration) (*Inventory, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// Pdeathsig follows the thread that started the child: keep this goroutine on its thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd, err := childCommand(ctx, exe, DescribeCommand, libPath)
	if err != nil {
		return nil, err
	}
	var stdout bytes.Buffer
	stderr := &outputBuffer{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	err = cmd.Run()
	var a describeAnswer
	if jerr := json.Unmarshal(stdout.Bytes(), &a); jerr != nil || (a.Inventory == nil && a.Error == "") {
		why := describeExit(err)
		if ctx.Err() != nil {
			why = fmt.Sprintf("it did not answer within %s", timeout)
		}
		if m := goFatalSignal.FindStringSubmatch(stderr.String()); m != nil {
			why = "it faulted with " + m[1]
		}
		return nil, fmt.Errorf("%w: the OpenCL runtime failed while listing platforms and devices (%s)%s", ErrNoOpenCL, why, lastLine(stderr.String()))
	}
	if a.Error != "" {
		if a.NoOpenCL {
			return nil, fmt.Errorf("%w: %s", ErrNoOpenCL, strings.TrimPrefix(a.Error, ErrNoOpenCL.Error()+": "))
		}
		return nil, errors.New(a.Error)
	}
	return a.Inventory, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return ": " + s
}

// childCommand prepares this binary (or exe) as a child that cannot outlive the parent: its own process
// group, so it is killed as a group (with any helper the runtime forked) and does not get the terminal's
// Ctrl-C before the parent decides; and SIGKILL when the parent's starting thread dies (Pdeathsig).
func childCommand(ctx context.Context, exe string, args ...string) (*exec.Cmd, error) {
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("cannot find this program to start a child process: %w", err)
		}
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd, nil
}
