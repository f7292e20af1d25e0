/*
 * cloop: the allocation loop in plain C, for scripts/bench.sh to measure clmemprobe against.
 * Same loop as `clmemprobe run --strategies shared`: one context over the platform's devices, buffer i
 * for device i mod n, create and (touch fill) fill + finish on the buffer's device, never released, no
 * sampling. With fill it waits for the devices (clFinish on every queue) every FINISH_EVERY buffers (default
 * 64, as a hand-written loop would; 1 waits after each). Prints one JSON line: allocations done, the loop's
 * nanoseconds per allocation, the first error, and the peak RSS of the process. The OpenCL library is loaded
 * with dlopen, so the binary builds without OpenCL development files and runs wherever libOpenCL.so.1 is.
 *
 * With EVENTS 1 each fill asks for an event, released at the next wait (what batched attribution costs).
 *
 * usage: cloop PLATFORM COUNT SIZE_BYTES none|fill [DEVICES [FINISH_EVERY [EVENTS]]]
 */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define SYM(name) static __typeof__(&name) p_##name
SYM(clGetPlatformIDs); SYM(clGetDeviceIDs); SYM(clCreateContext); SYM(clCreateCommandQueue);
SYM(clCreateBuffer); SYM(clEnqueueFillBuffer); SYM(clFinish); SYM(clReleaseEvent);

static double now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv) {
	if (argc < 5) {
		fprintf(stderr, "usage: cloop PLATFORM COUNT SIZE_BYTES none|fill [DEVICES [FINISH_EVERY [EVENTS]]]\n");
		return 2;
	}
	unsigned plat = (unsigned)atoi(argv[1]);
	long count = atol(argv[2]);
	size_t size = (size_t)atoll(argv[3]);
	int fill = strcmp(argv[4], "fill") == 0;
	unsigned want = argc > 5 ? (unsigned)atoi(argv[5]) : 0;
	long every = argc > 6 ? atol(argv[6]) : 64;
	if (every < 1) every = 1;
	int events = argc > 7 ? atoi(argv[7]) : 0;
	cl_event *evs = events ? calloc((size_t)every, sizeof *evs) : NULL;
	void *h = dlopen(getenv("CLMEMPROBE_OPENCL_LIB") ? getenv("CLMEMPROBE_OPENCL_LIB") : "libOpenCL.so.1", RTLD_NOW);
	if (!h) { fprintf(stderr, "cloop: %s\n", dlerror()); return 3; }
#define LOAD(name) if (!(p_##name = (__typeof__(p_##name))dlsym(h, #name))) { fprintf(stderr, "cloop: no " #name "\n"); return 3; }
	LOAD(clGetPlatformIDs); LOAD(clGetDeviceIDs); LOAD(clCreateContext); LOAD(clCreateCommandQueue);
	LOAD(clCreateBuffer); LOAD(clEnqueueFillBuffer); LOAD(clFinish); LOAD(clReleaseEvent);
	cl_platform_id ps[16];
	cl_uint np = 0;
	if (p_clGetPlatformIDs(16, ps, &np) || plat >= np) { fprintf(stderr, "cloop: no platform %u\n", plat); return 3; }
	cl_device_id ds[64];
	cl_uint nd = 0;
	if (p_clGetDeviceIDs(ps[plat], CL_DEVICE_TYPE_ALL, 64, ds, &nd) || nd == 0) { fprintf(stderr, "cloop: no device\n"); return 3; }
	if (want > 0 && want < nd) nd = want;
	cl_int err;
	cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)ps[plat], 0};
	cl_context ctx = p_clCreateContext(props, nd, ds, NULL, NULL, &err);
	if (err) { fprintf(stderr, "cloop: clCreateContext %d\n", err); return 3; }
	cl_command_queue qs[64];
	for (cl_uint d = 0; d < nd; d++) {
		qs[d] = p_clCreateCommandQueue(ctx, ds[d], 0, &err);
		if (err) { fprintf(stderr, "cloop: clCreateCommandQueue %d\n", err); return 3; }
	}
	const unsigned char pattern[4] = {0xA5, 0x5A, 0xC3, 0x3C};
	size_t psize = size % 4 == 0 ? 4 : 1;
	long i;
	cl_int first = 0;
	const char *stage = "";
	double t0 = now_ns();
	for (i = 0; i < count; i++) {
		cl_uint d = (cl_uint)(i % nd);
		cl_mem m = p_clCreateBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, &err);
		if (err) { first = err; stage = "create"; break; }
		if (fill) {
			err = p_clEnqueueFillBuffer(qs[d], m, pattern, psize, 0, size, 0, NULL, evs ? &evs[i % every] : NULL);
			if (err) { first = err; stage = "touch"; break; }
			if ((i + 1) % every == 0 || i + 1 == count) {
				for (cl_uint q = 0; q < nd && !err; q++) err = p_clFinish(qs[q]);
				if (evs) for (long e = 0; e <= i % every; e++) p_clReleaseEvent(evs[e]);
				if (err) { first = err; stage = "finish"; break; }
			}
		}
	}
	double t1 = now_ns();
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"allocations_ok\": %ld, \"ns_per_alloc\": %.1f, \"loop_seconds\": %.6f, \"first_error\": %d, \"stage\": \"%s\", \"peak_rss_bytes\": %ld}\n",
	       i, i > 0 ? (t1 - t0) / i : 0.0, (t1 - t0) / 1e9, first, stage, ru.ru_maxrss * 1024L);
	return 0;
}
