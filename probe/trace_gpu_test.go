package probe

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/nvml"
)

// The trace's GPU memory child, as the parent sees it: without NVML its first word is why, in the words of
// the worker's NVML sampler, and it holds no reading; with NVML its first word is a reading.
func TestGPUChildFirstWord(t *testing.T) {
	groups, end := session(false)
	defer end()
	g := newGPUChild()
	g.start(context.Background(), 50*time.Millisecond, groups)
	defer g.stop()
	select {
	case <-g.ready:
	case <-time.After(gpuSetup):
		t.Fatalf("no first word from the GPU memory child in %v", gpuSetup)
	}
	n, err := nvml.Open()
	if n != nil {
		n.Close()
	}
	switch {
	case errors.Is(err, nvml.ErrorLibraryNotFound):
		if want := "NVML: " + nvml.Library + " not found"; g.Unavailable() != want || g.Latest() != nil {
			t.Fatalf("unavailable %q, reading %+v; want %q and none", g.Unavailable(), g.Latest(), want)
		}
	case err != nil:
		t.Skipf("NVML present but not opening: %v", err)
	default:
		if g.Latest() == nil || g.Unavailable() != "" {
			t.Fatalf("with NVML: reading %+v, unavailable %q", g.Latest(), g.Unavailable())
		}
	}
}
