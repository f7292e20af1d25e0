package repro

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// Step kinds of the reproducer's table, as its C interpreter reads them.
const (
	reproContext = iota
	reproBuffer
	reproSubBuffer
	reproRelease
)

// reproSteps is the trace's sequence to its first failure, in the reproducer's kinds: contexts, creates
// (with properties as plain creates, sub-buffers of the context's last buffer) and releases of the context's
// latest buffers; failed enqueues and context releases are left out (no kernels, contexts kept).
func reproSteps(t *result.Trace) ([]result.TraceStep, []int, error) {
	if t.FirstFailure == nil {
		return nil, nil, errors.New("the trace has no allocation failure to repeat")
	}
	if !strings.HasPrefix(t.FirstFailure.Call, "clCreate") {
		// The reproducer repeats allocations, not the program's commands: a failure at an enqueue (a fill,
		// a kernel) of a runtime that allocates at first use is not one it can repeat.
		return nil, nil, fmt.Errorf("the trace's first failure is at %s, a command, and the reproducer repeats only the allocations (no kernels or fills); run --like this trace with --touch fill repeats it with clmemprobe's loop", t.FirstFailure.Call)
	}
	if t.SequenceTruncated {
		return nil, nil, fmt.Errorf("the trace kept only the first %d steps of the program's sequence", result.MaxTraceSteps)
	}
	var steps []result.TraceStep
	var kinds []int
	var index uint64
	for _, s := range t.Sequence {
		kind := -1
		switch s.Call {
		case "clCreateContext":
			kind = reproContext
		case "clCreateBuffer", "clCreateBufferWithProperties":
			kind = reproBuffer
		case "clCreateSubBuffer":
			kind = reproSubBuffer
		case "clReleaseMemObject":
			kind = reproRelease
		}
		if kind < 0 || (kind == reproContext && s.Code != 0) {
			continue
		}
		if kind == reproBuffer || kind == reproSubBuffer {
			if index+s.Count > t.FirstFailure.Index {
				s.Count = t.FirstFailure.Index - index + 1 // up to the failed call, which it repeats
				steps, kinds = append(steps, s), append(kinds, kind)
				return steps, kinds, nil
			}
			index += s.Count
		}
		steps, kinds = append(steps, s), append(kinds, kind)
	}
	return nil, nil, errors.New("the trace's sequence does not reach its first failure (records were dropped)")
}

// WriteTraceRepro writes a C program that repeats the traced program's allocation sequence to its first
// failure: the same contexts (over as many devices of platform 0), the same sizes and flags in the same
// order, releases of as many of a context's latest buffers, and prints the first failure as the program's
// own index in its sequence, "first failure: index I code C".
func WriteTraceRepro(w io.Writer, j findings.JudgedTrace, _ render.Options) error {
	t := j.Trace()
	steps, kinds, err := reproSteps(t)
	if err != nil {
		return err
	}
	cw := &render.ErrWriter{W: w}
	f := t.FirstFailure
	fmt.Fprintf(cw, "/*\n * Reproducer written by clmemprobe %s from a trace of: %s\n", commentSafe(t.Tool.Version), commentSafe(render.TraceCommand(t)))
	fmt.Fprintf(cw, " * The program's first allocation failure: %s, %s, %s (%d).\n", render.FailurePlace(f), f.Call, f.CodeName, f.Code)
	fmt.Fprint(cw, " * It repeats the program's contexts, buffer sizes and flags, and releases, to that failure (no kernels).\n")
	fmt.Fprint(cw, " * Build: cc -O2 -o repro repro.c -lOpenCL     Run: ./repro (exit 0: it failed where the program did)\n */\n")
	_, _ = io.WriteString(cw, traceReproHead)
	fmt.Fprintf(cw, "static const struct step steps[] = {\n")
	for i, s := range steps {
		fmt.Fprintf(cw, "\t{%d, %d, %du, %dull, %dull, %dull},\n", kinds[i], s.Context, max(s.Devices, 0), s.Size, s.Flags, s.Count)
	}
	fmt.Fprintf(cw, "};\nstatic const unsigned long long want_index = %dull;\nstatic const cl_int want_code = %d;\n", f.Index, f.Code)
	_, _ = io.WriteString(cw, traceReproMain)
	return cw.Err
}

// commentSafe keeps text inside a C comment: no comment end, one line.
func commentSafe(s string) string {
	return strings.NewReplacer("*/", "* /", "\n", " ", "\r", " ").Replace(render.Plain(s))
}

const traceReproHead = `#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CONTEXT, BUFFER, SUB_BUFFER, RELEASE };
struct step { int kind, context; unsigned devices; unsigned long long size, flags, count; };
`

const traceReproMain = `
#define MAXCTX 128
static cl_context ctx[MAXCTX];
static cl_mem *live[MAXCTX]; /* each context's live buffers, latest last */
static size_t nlive[MAXCTX], cap[MAXCTX];

static void push(int c, cl_mem m) {
	if (nlive[c] == cap[c]) {
		cap[c] = cap[c] ? 2 * cap[c] : 1024;
		live[c] = realloc(live[c], cap[c] * sizeof(cl_mem));
		if (!live[c]) { fprintf(stderr, "out of memory for the buffer list\n"); exit(3); }
	}
	live[c][nlive[c]++] = m;
}

/* host memory for a buffer that asks for it: its own block, never freed, as the program's would live */
static void *host_for(unsigned long long flags, unsigned long long size) {
	if (!(flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR))) return NULL;
	void *p = NULL;
	if (posix_memalign(&p, 4096, size ? size : 1) != 0) { fprintf(stderr, "no host memory for a buffer\n"); exit(3); }
	memset(p, 0, size);
	return p;
}

int main(void) {
	cl_platform_id platform;
	cl_device_id devs[64];
	cl_uint ndev = 0;
	cl_int err = clGetPlatformIDs(1, &platform, NULL);
	if (err == CL_SUCCESS) err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 64, devs, &ndev);
	if (err != CL_SUCCESS || ndev == 0) { printf("no OpenCL device: code %d\n", err); return 3; }
	unsigned long long index = 0;
	for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
		const struct step *st = &steps[s];
		int c = st->context;
		if (c < 0 || c >= MAXCTX) continue;
		if (st->kind == CONTEXT) {
			cl_uint n = st->devices && st->devices < ndev ? st->devices : ndev;
			ctx[c] = clCreateContext(NULL, n, devs, NULL, NULL, &err);
			if (!ctx[c]) { printf("clCreateContext failed: code %d\n", err); return 3; }
			continue;
		}
		for (unsigned long long i = 0; i < st->count; i++) {
			if (st->kind == RELEASE) {
				if (nlive[c]) clReleaseMemObject(live[c][--nlive[c]]);
				continue;
			}
			cl_mem m;
			err = CL_SUCCESS;
			if (st->kind == SUB_BUFFER && nlive[c]) {
				cl_buffer_region r = {0, st->size};
				m = clCreateSubBuffer(live[c][nlive[c] - 1], st->flags, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
			} else {
				m = clCreateBuffer(ctx[c], st->flags, st->size, host_for(st->flags, st->size), &err);
			}
			if (!m) {
				printf("first failure: index %llu code %d\n", index, err);
				if (index == want_index && err == want_code) return 0;
				printf("the program's was index %llu code %d\n", want_index, want_code);
				return 1;
			}
			if (st->kind == BUFFER) push(c, m);
			index++;
		}
	}
	printf("no failure after %llu allocations; the program's first was index %llu code %d\n", index, want_index, want_code);
	return 1;
}
`
