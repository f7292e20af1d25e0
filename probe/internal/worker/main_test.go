package worker

import (
	"os"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
)

// Re-executed as `__child KIND` by the supervisor, this test binary is the child, as the tool's own binary
// would be.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == wire.ChildCommand {
		os.Exit(RunChild(os.Stdin))
	}
	os.Exit(m.Run())
}
