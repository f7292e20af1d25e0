package cl

import (
	"errors"
	"fmt"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result/clcode"
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
	if got := err.Error(); got != "creating buffer 7: clCreateBuffer: CL_OUT_OF_HOST_MEMORY (-6)" {
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

// A library that is not OpenCL at all is named with the one symbol that says so, not with the list of
// every entry point the tool would call (issue 46: 28 names on one line).
func TestOpenNamesTheMissingPlatformEntryOnly(t *testing.T) {
	for _, name := range []string{"libc.so.6", "libz.so.1", "libm.so.6"} {
		t.Run(name, func(t *testing.T) {
			_, err := Open(name)
			if !errors.Is(err, ErrNotOpenCL) {
				t.Skipf("%s: %v (not installed here)", name, err)
			}
			want := name + ": not an OpenCL library: it lacks clGetPlatformIDs"
			if got := err.Error(); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// An OpenCL library with clGetPlatformIDs but without some entry point the tool calls is said to be one,
// with the first missing entry point and how many more, never the whole list.
func TestIncompleteNamesFirstMissingAndCount(t *testing.T) {
	cases := []struct {
		name    string
		missing []string
		want    string
	}{
		{"platform entry missing", []string{"clGetPlatformIDs", "clGetPlatformInfo", "clFlush"}, "/x/lib.so: not an OpenCL library: it lacks clGetPlatformIDs"},
		{"one missing", []string{"clEnqueueFillBuffer"}, "/x/lib.so: an OpenCL library without an entry point clmemprobe calls: it lacks clEnqueueFillBuffer"},
		{"three missing", []string{"clEnqueueFillBuffer", "clEnqueueMigrateMemObjects", "clFlush"}, "/x/lib.so: an OpenCL library without an entry point clmemprobe calls: it lacks clEnqueueFillBuffer and 2 more"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := lacking("/x/lib.so", c.missing, false)
			if got := err.Error(); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
			if platform := c.missing[0] == "clGetPlatformIDs"; errors.Is(err, ErrNotOpenCL) != platform || errors.Is(err, ErrIncomplete) == platform {
				t.Errorf("%v: ErrNotOpenCL %v, ErrIncomplete %v; want only the one its first missing entry says", err, errors.Is(err, ErrNotOpenCL), errors.Is(err, ErrIncomplete))
			}
		})
	}
}
