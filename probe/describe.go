package probe

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/supervise"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// Describe lists the platforms and devices of the OpenCL library at libPath, in a child process: a runtime
// that crashes or hangs while loading or enumerating cannot take the caller down, and its memory is not
// counted as the tool's. It takes at most setup (plus the child's start and end). Every failure wraps
// ErrNoOpenCL and says what to do.
func Describe(ctx context.Context, libPath string, setup time.Duration) (result.Inventory, error) {
	groups, end := session(false)
	defer end()
	e, err := supervise.Run(ctx, supervise.Child{Spec: wire.Spec{Kind: wire.KindDescribe, Library: libPath}, Limits: Limits{Setup: setup},
		ReturnAtResult: true, Groups: groups})
	if err != nil {
		return nil, err
	}
	a, err := supervise.Answer[wire.DescribeAnswer](e)
	if err != nil {
		if e.Stop == supervise.Interrupted {
			return nil, context.Canceled
		}
		return nil, &childFault{setup: true, msg: "the OpenCL runtime " + supervise.How(err) + ", listing platforms and devices"}
	}
	if a.NoPlatform {
		dir, st := DiagnoseICDs(ctx, libPath, setup)
		return nil, noPlatform(libPath, dir, st)
	}
	if a.Error != "" {
		return nil, fmt.Errorf("%w: %s", ErrNoOpenCL, a.Error)
	}
	return a.Inventory, nil
}

// NoPlatformError is a loader that loaded and reports no platform, with what each registered runtime gave,
// one line each: the first question on every vendor's tracker ("clinfo shows 0 platforms") has one of
// a few answers, and each runtime has its own.
type NoPlatformError struct {
	Head     string
	Runtimes []string // one line per registered runtime
}

func (e *NoPlatformError) Error() string {
	return strings.Join(append([]string{ErrNoOpenCL.Error() + ": " + e.Head}, e.Runtimes...), "; ")
}

func (e *NoPlatformError) Unwrap() error { return ErrNoOpenCL }

// Lines is the error as the lines a terminal shows: the head, then one per registered runtime.
func (e *NoPlatformError) Lines() []string {
	return append([]string{ErrNoOpenCL.Error() + ": " + e.Head}, e.Runtimes...)
}

// noPlatform says why a loader that loaded reports no platform: no runtime registered in dir, or what
// every registered runtime gave.
func noPlatform(libPath, dir string, st []result.ICDStatus) *NoPlatformError {
	if len(st) == 0 {
		return &NoPlatformError{Head: fmt.Sprintf("%s loaded but reports no platform: no vendor runtime is registered in %s; install one (Debian/Ubuntu: apt-get install pocl-opencl-icd for the CPU, or your GPU vendor's OpenCL package), or point OCL_ICD_VENDORS at its .icd file", libPath, dir)}
	}
	e := &NoPlatformError{Head: fmt.Sprintf("%s loaded but reports no platform; what each runtime registered in %s gave:", libPath, dir)}
	for _, s := range st {
		e.Runtimes = append(e.Runtimes, s.Line())
	}
	return e
}
