package cl

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// Every code of the OpenCL 3.0 headers (cl.h and cl_ext.h error codes) must have its standard name.
func TestEveryHeaderCodeHasItsName(t *testing.T) {
	for code := int32(0); code >= -19; code-- {
		if strings.HasPrefix(CodeName(code), "CL_UNKNOWN") {
			t.Errorf("code %d has no name", code)
		}
	}
	for code := int32(-30); code >= -72; code-- {
		if strings.HasPrefix(CodeName(code), "CL_UNKNOWN") {
			t.Errorf("code %d has no name", code)
		}
	}
	valid := regexp.MustCompile(`^CL_[A-Z0-9_]+$`)
	for code, name := range codeNames {
		if !valid.MatchString(name) {
			t.Errorf("code %d: %q is not a CL name", code, name)
		}
	}
	if got := CodeName(-9999); got != "CL_UNKNOWN_ERROR_-9999" {
		t.Errorf("unknown code: %q", got)
	}
}

func TestErrorsIsMatchesByCode(t *testing.T) {
	err := fmt.Errorf("creating buffer 7: %w", &Error{Code: -6, Call: "clCreateBuffer"})
	if !errors.Is(err, ErrOutOfHostMemory) || errors.Is(err, ErrOutOfResources) {
		t.Fatalf("errors.Is by code failed for %v", err)
	}
	if !IsOutOfMemory(err) || IsOutOfMemory(&Error{Code: -30}) {
		t.Fatalf("IsOutOfMemory is wrong")
	}
	if code, ok := CodeOf(err); !ok || code != -6 {
		t.Fatalf("CodeOf = %d, %v", code, ok)
	}
	if got := err.Error(); !strings.Contains(got, "clCreateBuffer: CL_OUT_OF_HOST_MEMORY (-6)") {
		t.Fatalf("message %q lacks the call, name and code", got)
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
