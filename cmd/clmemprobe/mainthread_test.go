package main

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe"
)

// threadProbeEnv makes a re-executed child print which thread its main goroutine is on instead of running.
const threadProbeEnv = "CLMEMPROBE_TEST_CHILD_THREAD"

// reportThread gives the scheduler every chance to move the main goroutine (other goroutines busy on
// every processor, sleeps, yields), then prints "main" where it is still on the process's first thread.
func reportThread() int {
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 * runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					runtime.Gosched()
				}
			}
		}()
	}
	where := "main"
	for range 50 {
		time.Sleep(time.Millisecond)
		runtime.Gosched()
		if syscall.Gettid() != os.Getpid() {
			where = "another thread"
		}
	}
	close(stop)
	wg.Wait()
	os.Stdout.WriteString(where + "\n")
	return 0
}

func TestChildRunsOnTheMainThread(t *testing.T) {
	cmd := exec.Command(os.Args[0], probe.ChildCommand)
	cmd.Env = append(os.Environ(), threadProbeEnv+"=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != "main" {
		t.Errorf("a child's main goroutine ran on %s, want the process's first thread", got)
	}
}

func TestIsChild(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want bool
	}{
		{"child", []string{"clmemprobe", probe.ChildCommand}, true},
		{"command", []string{"clmemprobe", "run"}, false},
		{"bare", []string{"clmemprobe"}, false},
	} {
		if got := isChild(tc.args); got != tc.want {
			t.Errorf("%s: isChild(%q) = %v, want %v", tc.name, tc.args, got, tc.want)
		}
	}
}
