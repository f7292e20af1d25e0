package probe

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/report/result"
)

// The supervisor is tested with this test binary as the child: re-executed as `__child KIND`, it plays the
// child that FAKE_CHILD names instead of running a job, so each rule of the protocol is checked without
// OpenCL.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ChildCommand {
		os.Exit(fakeChild(os.Getenv("FAKE_CHILD")))
	}
	os.Exit(m.Run())
}

// fakeChild writes what a child of the given behaviour would write on its events descriptor.
func fakeChild(behaviour string) int {
	events := os.NewFile(childEventsFD, "events")
	hello := fmt.Sprintf(`{"t":"hello","v":%d}`+"\n", protocolVersion)
	res := `{"t":"result","r":{"answer":42}}` + "\n"
	switch behaviour {
	case "garbage":
		fmt.Fprint(events, hello+"this is not json\n{\"t\":\n"+res)
	case "old-protocol":
		fmt.Fprint(events, `{"t":"hello","v":0}`+"\n"+res)
	case "slow-exit":
		fmt.Fprint(events, hello+res)
		time.Sleep(time.Minute) // the parent must not wait for this
	case "no-result":
		fmt.Fprint(events, hello)
		fmt.Fprintln(os.Stderr, "pocl: assertion `pool != NULL' failed")
		return 7
	case "silent-hang":
		fmt.Fprint(events, hello)
		time.Sleep(time.Minute)
	}
	return 0
}

func superviseFake(t *testing.T, behaviour string, limits Limits) *ending {
	t.Helper()
	t.Setenv("FAKE_CHILD", behaviour)
	start := time.Now()
	e, err := supervise(context.Background(), supervision{spec: childSpec{Kind: "fake"}, limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("%s: supervising took %s", behaviour, took)
	}
	return e
}

func TestMalformedEventLinesAreCounted(t *testing.T) {
	e := superviseFake(t, "garbage", Limits{Setup: 10 * time.Second})
	if string(e.answer) != `{"answer":42}` || e.badLines != 2 {
		t.Errorf("answer %s, %d bad lines; want the answer and 2 bad lines", e.answer, e.badLines)
	}
}

func TestAnotherProtocolVersionIsNotTrusted(t *testing.T) {
	e := superviseFake(t, "old-protocol", Limits{Setup: 10 * time.Second})
	if e.badLines != 1 {
		t.Errorf("%d bad lines: a hello of another version must count as one", e.badLines)
	}
}

// The result completes the job: a child that lingers after it is killed after the grace time, and its
// outcome is its result, not a hang.
func TestResultCompletesTheJob(t *testing.T) {
	start := time.Now()
	e := superviseFake(t, "slow-exit", Limits{Setup: 100 * time.Millisecond, Hang: 100 * time.Millisecond})
	if e.answer == nil || e.killed != "" {
		t.Errorf("answer %s, killed %q (%s); want the answer and no kill outcome", e.answer, e.killed, e.reason)
	}
	if took := time.Since(start); took > exitGrace+2*time.Second {
		t.Errorf("took %s with an exit grace of %s", took, exitGrace)
	}
}

func TestChildWithoutResultCrashed(t *testing.T) {
	e := superviseFake(t, "no-result", Limits{Setup: 10 * time.Second})
	if !e.crashed() || e.exitCode == nil || *e.exitCode != 7 || e.printed != "pocl: assertion `pool != NULL' failed" {
		t.Errorf("crashed %v, exit code %v, printed %q", e.crashed(), e.exitCode, e.printed)
	}
	if !strings.Contains(failedHow(e), "exited with status 7") {
		t.Errorf("failedHow: %q", failedHow(e))
	}
}

func TestSetupTimeoutEndsASilentChild(t *testing.T) {
	e := superviseFake(t, "silent-hang", Limits{Setup: 300 * time.Millisecond})
	if e.killed != result.OutcomeHung || !strings.Contains(e.reason, "--setup-timeout") {
		t.Errorf("killed %q (%s); want hung at set-up", e.killed, e.reason)
	}
}
