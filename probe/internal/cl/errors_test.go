package cl

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/report/result"
)

// Every code of the OpenCL 3.0 headers (cl.h and cl_ext.h error codes) must have its standard name.
func TestEveryHeaderCodeHasItsName(t *testing.T) {
	for code := int32(0); code >= -19; code-- {
		if strings.HasPrefix(Status(code).Name(), "CL_UNKNOWN") {
			t.Errorf("code %d has no name", code)
		}
	}
	for code := int32(-30); code >= -72; code-- {
		if strings.HasPrefix(Status(code).Name(), "CL_UNKNOWN") {
			t.Errorf("code %d has no name", code)
		}
	}
	valid := regexp.MustCompile(`^CL_[A-Z0-9_]+$`)
	for code, name := range result.CodeNames() {
		if !valid.MatchString(name) || Status(code).Name() != name {
			t.Errorf("code %d: %q is not a CL name", code, name)
		}
	}
	if got := Status(-9999).Name(); got != "CL_UNKNOWN_ERROR_-9999" {
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
