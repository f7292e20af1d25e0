/*
 * cloop: the allocation loop in plain C, for scripts/bench.sh to measure clmemprobe against.
 * Same loop as `clmemprobe run --strategies shared`: one context over the platform's devices, buffer i
 * for device i mod n, create and (touch fill) fill + finish on the buffer's device, never released, no
 * sampling. With fill it waits for the devices (clFinish on every queue) every FINISH_EVERY buffers (default
 * 64, as a hand-written loop would; 1 waits after each). Prints one JSON line: allocations done, the loop's
 * nanoseconds per allocation, the first error, the peak RSS of the process, and the set-up's time (from main
 * to the loop: the runtime loaded, its platforms listed, the context and queues made). The OpenCL library is loaded
 * with dlopen, so the binary builds without OpenCL development files and runs wherever libOpenCL.so.1 is.
 *
 * With EVENTS 1 each fill asks for an event, released at the next wait (what batched attribution costs).
 *
 * CLOOP_THREAD=1 runs the loop (only the loop: the context and queues are made on the main thread, as the
 * tool's worker makes them before its loop) on a thread of its own made with pthread_create, joined before
 * the figures are printed; CLOOP_THREAD=2 makes the context and queues on that thread too. The tool's loop
 * runs on a thread of Go's runtime that is not the process's first, so these tell the thread apart from
 * the program (docs/performance.md#the-create-loop-off-the-main-thread).
 *
 * usage: cloop PLATFORM COUNT SIZE_BYTES none|fill [DEVICES [FINISH_EVERY [EVENTS]]]
 */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <dlfcn.h>
#include <pthread.h>
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

/* job is one run of the loop: its arguments, its OpenCL objects and what it reached. */
struct job {
	unsigned plat, want;
	long count, every;
	size_t size;
	int fill;
	cl_event *evs;
	cl_uint nd;
	cl_context ctx;
	cl_command_queue qs[64];
	int setup_failed; /* an exit code: set-up failed and said why on stderr */
	long done;
	cl_int first;
	const char *stage;
	double t0, t1;
};

/* setup makes the context over the platform's first devices and a queue on each. */
static int setup(struct job *j) {
	cl_platform_id ps[16];
	cl_uint np = 0;
	if (p_clGetPlatformIDs(16, ps, &np) || j->plat >= np) { fprintf(stderr, "cloop: no platform %u\n", j->plat); return 3; }
	cl_device_id ds[64];
	cl_uint nd = 0;
	if (p_clGetDeviceIDs(ps[j->plat], CL_DEVICE_TYPE_ALL, 64, ds, &nd) || nd == 0) { fprintf(stderr, "cloop: no device\n"); return 3; }
	if (j->want > 0 && j->want < nd) nd = j->want;
	cl_int err;
	cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)ps[j->plat], 0};
	j->ctx = p_clCreateContext(props, nd, ds, NULL, NULL, &err);
	if (err) { fprintf(stderr, "cloop: clCreateContext %d\n", err); return 3; }
	for (cl_uint d = 0; d < nd; d++) {
		j->qs[d] = p_clCreateCommandQueue(j->ctx, ds[d], 0, &err);
		if (err) { fprintf(stderr, "cloop: clCreateCommandQueue %d\n", err); return 3; }
	}
	j->nd = nd;
	return 0;
}

/* loop is the timed loop: creates, and fills waited for every j->every buffers. */
static void loop(struct job *j) {
	const unsigned char pattern[4] = {0xA5, 0x5A, 0xC3, 0x3C};
	size_t psize = j->size % 4 == 0 ? 4 : 1;
	cl_uint nd = j->nd;
	long i, every = j->every;
	cl_int err;
	j->stage = "";
	j->first = 0;
	j->t0 = now_ns();
	for (i = 0; i < j->count; i++) {
		cl_uint d = (cl_uint)(i % nd);
		cl_mem m = p_clCreateBuffer(j->ctx, CL_MEM_READ_WRITE, j->size, NULL, &err);
		if (err) { j->first = err; j->stage = "create"; break; }
		if (j->fill) {
			err = p_clEnqueueFillBuffer(j->qs[d], m, pattern, psize, 0, j->size, 0, NULL, j->evs ? &j->evs[i % every] : NULL);
			if (err) { j->first = err; j->stage = "touch"; break; }
			if ((i + 1) % every == 0 || i + 1 == j->count) {
				for (cl_uint q = 0; q < nd && !err; q++) err = p_clFinish(j->qs[q]);
				if (j->evs) for (long e = 0; e <= i % every; e++) p_clReleaseEvent(j->evs[e]);
				if (err) { j->first = err; j->stage = "finish"; break; }
			}
		}
	}
	j->t1 = now_ns();
	j->done = i;
}

/* on_thread is CLOOP_THREAD's thread: the loop, after the set-up too where it was asked for. */
static int thread_setup;
static void *on_thread(void *arg) {
	struct job *j = arg;
	if (thread_setup && (j->setup_failed = setup(j)) != 0) return NULL;
	loop(j);
	return NULL;
}

int main(int argc, char **argv) {
	double started = now_ns(); /* the set-up's start: the runtime loaded, listed and set up to the loop */
	if (argc < 5) {
		fprintf(stderr, "usage: cloop PLATFORM COUNT SIZE_BYTES none|fill [DEVICES [FINISH_EVERY [EVENTS]]]\n");
		return 2;
	}
	static struct job j;
	j.plat = (unsigned)atoi(argv[1]);
	j.count = atol(argv[2]);
	j.size = (size_t)atoll(argv[3]);
	j.fill = strcmp(argv[4], "fill") == 0;
	j.want = argc > 5 ? (unsigned)atoi(argv[5]) : 0;
	j.every = argc > 6 ? atol(argv[6]) : 64;
	if (j.every < 1) j.every = 1;
	int events = argc > 7 ? atoi(argv[7]) : 0;
	j.evs = events ? calloc((size_t)j.every, sizeof *j.evs) : NULL;
	const char *th = getenv("CLOOP_THREAD");
	int threaded = th && *th && strcmp(th, "0") != 0;
	thread_setup = threaded && strcmp(th, "2") == 0;
	void *h = dlopen(getenv("CLMEMPROBE_OPENCL_LIB") ? getenv("CLMEMPROBE_OPENCL_LIB") : "libOpenCL.so.1", RTLD_NOW);
	if (!h) { fprintf(stderr, "cloop: %s\n", dlerror()); return 3; }
#define LOAD(name) if (!(p_##name = (__typeof__(p_##name))dlsym(h, #name))) { fprintf(stderr, "cloop: no " #name "\n"); return 3; }
	LOAD(clGetPlatformIDs); LOAD(clGetDeviceIDs); LOAD(clCreateContext); LOAD(clCreateCommandQueue);
	LOAD(clCreateBuffer); LOAD(clEnqueueFillBuffer); LOAD(clFinish); LOAD(clReleaseEvent);
	if (!thread_setup && (j.setup_failed = setup(&j)) != 0) return j.setup_failed;
	if (threaded) {
		pthread_t t;
		int e = pthread_create(&t, NULL, on_thread, &j);
		if (e) { fprintf(stderr, "cloop: pthread_create: %s\n", strerror(e)); return 3; }
		pthread_join(t, NULL);
		if (j.setup_failed) return j.setup_failed;
	} else {
		loop(&j);
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"allocations_ok\": %ld, \"ns_per_alloc\": %.1f, \"loop_seconds\": %.6f, \"setup_seconds\": %.6f, \"first_error\": %d, \"stage\": \"%s\", \"peak_rss_bytes\": %ld, "
	       "\"thread\": \"%s\", \"minor_faults\": %ld, \"user_seconds\": %.3f, \"sys_seconds\": %.3f, \"ctx_switches\": %ld}\n",
	       j.done, j.done > 0 ? (j.t1 - j.t0) / j.done : 0.0, (j.t1 - j.t0) / 1e9, (j.t0 - started) / 1e9, j.first, j.stage, ru.ru_maxrss * 1024L,
	       threaded ? (thread_setup ? "pthread, set-up too" : "pthread") : "main", ru.ru_minflt,
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6, ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_nvcsw + ru.ru_nivcsw);
	return 0;
}
