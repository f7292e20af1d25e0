package cl

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/report/result/clcode"
)

// A status is named as clcode names its code (which has every code of the OpenCL 3.0 headers).
func TestStatusNames(t *testing.T) {
	for code, name := range clcode.Names() {
		if Status(code).Name() != name {
			t.Errorf("code %d: %q, want %q", code, Status(code).Name(), name)
		}
	}
	if got := Status(-9999).Error(); got != "CL_UNKNOWN_ERROR_-9999 (-9999)" {
		t.Errorf("unknown code: %q", got)
	}
}

func TestErrorsIsMatchesByStatus(t *testing.T) {
	err := fmt.Errorf("creating buffer 7: %w", &CallError{Call: "clCreateBuffer", Status: -6})
	if !errors.Is(err, OutOfHostMemory) || errors.Is(err, OutOfResources) {
		t.Fatalf("errors.Is by status failed for %v", err)
	}
	var ce *CallError
	if !errors.As(err, &ce) || ce.Status != OutOfHostMemory || ce.Call != "clCreateBuffer" {
		t.Fatalf("errors.As found %+v", ce)
	}
	if got := err.Error(); !strings.Contains(got, "clCreateBuffer: CL_OUT_OF_HOST_MEMORY (-6)") {
		t.Fatalf("message %q lacks the call, name and code", got)
	}
	if check(0, "clFinish") != nil {
		t.Fatal("status 0 is not an error")
	}
}

func TestOpenMissingAndWrongLibraries(t *testing.T) {
	if _, err := Open("/nonexistent/libOpenCL.so.1"); !errors.Is(err, ErrLibraryNotFound) {
		t.Errorf("missing library: %v", err)
	}
	// The C library loads but has none of the OpenCL entry points.
	if _, err := Open("libc.so.6"); !errors.Is(err, ErrNotOpenCL) {
		t.Errorf("libc: %v", err)
	}
}
