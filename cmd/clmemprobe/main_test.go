package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe"
)

// Every error has one exit code, mapped in one place: 4 only for what could not be written, 1 for an
// error no other code names.
func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		code int
	}{
		{name: "no error", err: nil, code: exitOK},
		{name: "bad input", err: usageErr("--size: no"), code: exitUsage},
		{name: "a file not written", err: outputErr("cannot write x"), code: exitOutput},
		{name: "a wrapped exit code", err: fmt.Errorf("outer: %w", &exitError{exitWorkerFault, nil}), code: exitWorkerFault},
		{name: "interrupted", err: fmt.Errorf("run: %w", context.Canceled), code: exitInterrupted},
		{name: "no OpenCL", err: fmt.Errorf("loading: %w", probe.ErrNoOpenCL), code: exitNoOpenCL},
		{name: "a runtime that crashed", err: fmt.Errorf("listing: %w", probe.ErrChildFault), code: exitWorkerFault},
		{name: "a full disk", err: fmt.Errorf("progress cell: %w", &fs.PathError{Op: "write", Path: "/tmp/x", Err: syscall.ENOSPC}), code: exitOutput},
		{name: "a read-only file system", err: &fs.PathError{Op: "open", Path: "/x", Err: syscall.EROFS}, code: exitOutput},
		{name: "an error nothing names", err: errors.New("the engine could not start a worker"), code: exitRegression},
		{name: "a file that is missing", err: &fs.PathError{Op: "open", Path: "/x", Err: syscall.ENOENT}, code: exitRegression},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := exitCode(c.err); got != c.code {
				t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.code)
			}
		})
	}
}
