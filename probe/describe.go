package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/supervise"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/report/result"
)

// Describe lists the platforms and devices of the OpenCL library at libPath, in a child process: a runtime
// that crashes or hangs while loading or enumerating cannot take the caller down, and its memory is not
// counted as the tool's. It takes at most setup (plus the child's start and end). Every failure wraps
// ErrNoOpenCL and says what to do.
func Describe(ctx context.Context, libPath string, setup time.Duration) (result.Inventory, error) {
	groups, end := session()
	defer end()
	e, err := supervise.Run(ctx, supervise.Child{Spec: wire.Spec{Kind: wire.KindDescribe, Library: libPath}, Limits: Limits{Setup: setup},
		ReturnAtResult: true, Groups: groups})
	if err != nil {
		return nil, err
	}
	var a wire.DescribeAnswer
	if e.Answer == nil || json.Unmarshal(e.Answer, &a) != nil {
		if e.Stop == supervise.Interrupted {
			return nil, context.Canceled
		}
		return nil, &childFault{setup: true, msg: "the OpenCL runtime " + e.How() + ", listing platforms and devices"}
	}
	if a.Error != "" {
		return nil, fmt.Errorf("%w: %s", ErrNoOpenCL, a.Error)
	}
	return a.Inventory, nil
}
