/*
 * traceprog: OpenCL programs of the project's own for `clmemprobe trace`'s tests and benchmark, written as a
 * user would write them (linked with -lOpenCL, errors checked, no dlopen). Every mode prints what it saw, so
 * a test compares the program's own account with the trace's, and its output with and without the layer.
 *
 *   traceprog loop SIZE [MAX]     one context over platform 0's devices; SIZE-byte read-write buffers until
 *                                 a create fails (or MAX buffers): "first failure: index I code C"
 *   traceprog mixed SIZE          two contexts (clCreateContext over every device, clCreateContextFromType),
 *                                 several flags, errcode_ret NULL and not, releases, a sub-buffer, a create
 *                                 with properties, then a buffer over the device's largest allocation, which
 *                                 fails: one line per call, the failure and every context's live buffers
 *   traceprog fill SIZE [MAX]     as loop, buffer i meant for device i mod n: each buffer filled on its device's
 *                                 queue and waited for (clFinish), so a runtime that allocates at first use
 *                                 fails at the fill: "first failure: index I code C" (I counts buffers)
 *   traceprog later SIZE N        as fill, but all N buffers are made first and filled after, in order: a
 *                                 runtime that allocates at first use fails at the fill of an older buffer
 *   traceprog fork N M            N creates, then a child made by fork (no exec) makes M more in the same context
 *                                 and exits; the parent waits: "parent N child M status S"
 *   traceprog crash SIZE          as loop, then a write through a null pointer (SIGSEGV) after the failure
 *   traceprog forever SIZE N      N buffers, "created N", then sleeps until killed
 *   traceprog bench COUNT SIZE    COUNT creates on device 0, timed: "creates COUNT seconds S user U system Y"
 *   traceprog threads N COUNT     N threads at once, each creating COUNT 4 KiB buffers in one shared context
 *                                 and releasing every other one: "live B bytes Y"
 *   traceprog relay N ROUNDS      N threads (the main one first) take turns, ROUNDS times round, one create a
 *                                 turn, so the order of calls is the program's, not the scheduler's: thread
 *                                 k's buffers are (k+1) * 4 KiB; thread 1 makes a second context on its first
 *                                 turn, which the even threads use from then on. One line per call, in order
 */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static cl_platform_id platform;
static cl_device_id devs[16];
static cl_uint ndev;

static void die(const char *what, cl_int code) {
	printf("%s failed: code %d\n", what, code);
	exit(3);
}

static cl_context setup(cl_uint use) {
	cl_int err = clGetPlatformIDs(1, &platform, NULL);
	if (err != CL_SUCCESS) die("clGetPlatformIDs", err);
	err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 16, devs, &ndev);
	if (err != CL_SUCCESS) die("clGetDeviceIDs", err);
	if (use == 0 || use > ndev) use = ndev;
	cl_context ctx = clCreateContext(NULL, use, devs, NULL, NULL, &err);
	if (!ctx) die("clCreateContext", err);
	return ctx;
}

/* loop creates buffers until one fails; returns its index, or -1 after max. */
static long loop(cl_context ctx, size_t size, long max, cl_int *code) {
	for (long i = 0; max <= 0 || i < max; i++) {
		cl_int err = CL_SUCCESS;
		cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, &err);
		if (!m) {
			*code = err;
			return i;
		}
	}
	return -1;
}

/* queues makes one queue on each device of the context. */
static void queues(cl_context ctx, cl_command_queue q[16]) {
	for (cl_uint d = 0; d < ndev; d++) {
		cl_int err = CL_SUCCESS;
		q[d] = clCreateCommandQueue(ctx, devs[d], 0, &err);
		if (!q[d]) die("clCreateCommandQueue", err);
	}
}

/* fill is loop with every buffer filled on its device and waited for, as a program that uses its buffers;
 * returns the index of the buffer whose create or fill failed, or -1 after max. */
static long fill(cl_context ctx, size_t size, long max, cl_int *code) {
	cl_command_queue q[16];
	queues(ctx, q);
	const cl_uint pattern = 0xA5A5A5A5u;
	for (long i = 0; max <= 0 || i < max; i++) {
		cl_int err = CL_SUCCESS;
		cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, &err);
		if (err == CL_SUCCESS) err = clEnqueueFillBuffer(q[i % ndev], m, &pattern, sizeof pattern, 0, size, 0, NULL, NULL);
		if (err == CL_SUCCESS) err = clFinish(q[i % ndev]);
		if (err != CL_SUCCESS) {
			*code = err;
			return i;
		}
	}
	return -1;
}

/* later makes n buffers, then fills each on its device and waits, in order; returns the index of the buffer
 * whose fill failed, or -1. */
static long later(cl_context ctx, size_t size, long n, cl_int *code) {
	cl_command_queue q[16];
	queues(ctx, q);
	cl_mem *bufs = calloc((size_t)n, sizeof *bufs);
	if (!bufs) die("calloc", 0);
	for (long i = 0; i < n; i++) {
		bufs[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, code);
		if (!bufs[i]) die("clCreateBuffer", *code);
	}
	const cl_uint pattern = 0x5A5A5A5Au;
	for (long i = 0; i < n; i++) {
		cl_int err = clEnqueueFillBuffer(q[i % ndev], bufs[i], &pattern, sizeof pattern, 0, size, 0, NULL, NULL);
		if (err == CL_SUCCESS) err = clFinish(q[i % ndev]);
		if (err != CL_SUCCESS) {
			*code = err;
			return i;
		}
	}
	return -1;
}

/* forked makes n buffers, then a child (fork, no exec) makes m more in the same context; returns the child's
 * exit status as wait gives it. */
static int forked(long n, long m) {
	cl_context ctx = setup(1);
	cl_int code = 0;
	if (loop(ctx, 4096, n, &code) >= 0) die("clCreateBuffer", code);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) die("fork", 0);
	if (pid == 0) _exit(loop(ctx, 4096, m, &code) >= 0 ? 3 : 0);
	int status = 0;
	waitpid(pid, &status, 0);
	return status;
}

static void report(long idx, cl_int code) {
	if (idx < 0) printf("no failure\n");
	else printf("first failure: index %ld code %d\n", idx, code);
	fflush(stdout);
}

static long created;

/* made prints one create's outcome as the program saw it: the handle's presence and the code it got. */
static cl_mem made(const char *what, cl_mem m, const cl_int *err) {
	created++;
	if (err) printf("%s: %s code %d\n", what, m ? "ok" : "failed", *err);
	else printf("%s: %s (no errcode)\n", what, m ? "ok" : "failed");
	return m;
}

static int mixed(size_t size) {
	cl_context a = setup(0);
	cl_int err = CL_SUCCESS;
	cl_context b = clCreateContextFromType(NULL, CL_DEVICE_TYPE_ALL, NULL, NULL, &err);
	if (!b) die("clCreateContextFromType", err);
	cl_mem r1 = made("a read-only", clCreateBuffer(a, CL_MEM_READ_ONLY, size, NULL, NULL), NULL);
	cl_mem r2 = made("a read-only", clCreateBuffer(a, CL_MEM_READ_ONLY, size, NULL, NULL), NULL);
	err = 1;
	cl_mem h1 = made("a alloc-host-ptr", clCreateBuffer(a, CL_MEM_ALLOC_HOST_PTR, size, NULL, &err), &err);
	cl_buffer_region reg = {0, size / 2};
	cl_mem sub = made("a sub-buffer", clCreateSubBuffer(r1, CL_MEM_READ_ONLY, CL_BUFFER_CREATE_TYPE_REGION, &reg, &err), &err);
	printf("release a read-only: %d\n", clReleaseMemObject(r2));
	cl_mem w1 = made("b write-only", clCreateBuffer(b, CL_MEM_WRITE_ONLY, 2 * size, NULL, &err), &err);
	cl_mem p1 = made("b with properties", clCreateBufferWithProperties(b, NULL, CL_MEM_READ_WRITE, size, NULL, &err), &err);
	printf("release b with properties: %d\n", clReleaseMemObject(p1));
	cl_ulong max = 0;
	clGetDeviceInfo(devs[0], CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max, &max, NULL);
	long index = created;
	cl_mem big = made("b over the largest allocation", clCreateBuffer(b, CL_MEM_READ_WRITE, (size_t)max + 1, NULL, &err), &err);
	if (!big) printf("first failure: index %ld code %d\n", index, err);
	cl_mem big2 = made("b again, no errcode", clCreateBuffer(b, CL_MEM_READ_WRITE, (size_t)max + 1, NULL, NULL), NULL);
	printf("live at the failure: context 0 buffers 2 bytes %zu, context 1 buffers 1 bytes %zu\n", 2 * size, 2 * size);
	(void)big2;
	clReleaseMemObject(sub);
	clReleaseMemObject(r1);
	clReleaseMemObject(h1);
	clReleaseMemObject(w1);
	printf("release contexts: %d %d\n", clReleaseContext(a), clReleaseContext(b));
	return 0;
}

static cl_context shared_ctx;
static long per_thread;

static void *worker(void *arg) {
	(void)arg;
	cl_mem keep = NULL;
	for (long i = 0; i < per_thread; i++) {
		cl_int err;
		cl_mem m = clCreateBuffer(shared_ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
		if (!m) die("clCreateBuffer", err);
		if (i % 2) clReleaseMemObject(m);
		else keep = m;
	}
	return keep;
}

static int threads(long n, long count) {
	shared_ctx = setup(0);
	per_thread = count;
	pthread_t t[64];
	if (n > 64) n = 64;
	for (long i = 0; i < n; i++) pthread_create(&t[i], NULL, worker, NULL);
	for (long i = 0; i < n; i++) pthread_join(t[i], NULL);
	long live = n * ((count + 1) / 2);
	printf("live %ld bytes %ld\n", live, live * 4096);
	return 0;
}

static pthread_mutex_t relay_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t relay_cv = PTHREAD_COND_INITIALIZER;
static long relay_turn, relay_threads, relay_rounds;
static cl_context relay_ctx[2];

/* relay_call is thread k's turn: its one create (and thread 1's context, the first time), said in order. */
static void relay_call(long k) {
	cl_int err = CL_SUCCESS;
	if (k == 1 && !relay_ctx[1]) {
		relay_ctx[1] = clCreateContext(NULL, 1, devs, NULL, NULL, &err);
		if (!relay_ctx[1]) die("clCreateContext", err);
		printf("context 1\n");
	}
	int c = k % 2 == 0 && relay_ctx[1] ? 1 : 0;
	size_t size = (size_t)(k + 1) * 4096;
	if (!clCreateBuffer(relay_ctx[c], CL_MEM_READ_WRITE, size, NULL, &err)) die("clCreateBuffer", err);
	printf("buffer context %d size %zu\n", c, size);
}

static void *relay_thread(void *arg) {
	long k = (long)(intptr_t)arg;
	for (long r = 0; r < relay_rounds; r++) {
		pthread_mutex_lock(&relay_mu);
		while (relay_turn % relay_threads != k) pthread_cond_wait(&relay_cv, &relay_mu);
		relay_call(k);
		relay_turn++;
		pthread_cond_broadcast(&relay_cv);
		pthread_mutex_unlock(&relay_mu);
	}
	return NULL;
}

static int relay(long n, long rounds) {
	relay_ctx[0] = setup(1);
	printf("context 0\n");
	relay_threads = n < 1 ? 1 : n > 64 ? 64 : n;
	relay_rounds = rounds;
	pthread_t t[64];
	for (long k = 1; k < relay_threads; k++) pthread_create(&t[k], NULL, relay_thread, (void *)(intptr_t)k);
	relay_thread(0);
	for (long k = 1; k < relay_threads; k++) pthread_join(t[k], NULL);
	return 0;
}

static double seconds(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: traceprog loop|fill|later|fork|mixed|crash|forever|bench|threads|relay ARGS (see its top comment)\n");
		return 2;
	}
	const char *mode = argv[1];
	size_t size = (size_t)strtoull(argv[2], NULL, 0);
	cl_int code = 0;
	if (strcmp(mode, "loop") == 0) {
		long idx = loop(setup(0), size, argc > 3 ? atol(argv[3]) : 0, &code);
		report(idx, code);
		return 0;
	}
	if (strcmp(mode, "fill") == 0) {
		cl_int code = 0;
		cl_context ctx = setup(0);
		long idx = fill(ctx, size, argc > 3 ? atol(argv[3]) : 0, &code); /* before code is read */
		report(idx, code);
		return 0;
	}
	if (strcmp(mode, "mixed") == 0) return mixed(size);
	if (strcmp(mode, "fork") == 0) {
		long m = argc > 3 ? atol(argv[3]) : 10;
		int status = forked((long)size, m);
		printf("parent %ld child %ld status %d\n", (long)size, m, status);
		return 0;
	}
	if (strcmp(mode, "later") == 0) {
		cl_context ctx = setup(0);
		long idx = later(ctx, size, argc > 3 ? atol(argv[3]) : 100, &code);
		report(idx, code);
		return 0;
	}
	if (strcmp(mode, "threads") == 0) return threads((long)size, argc > 3 ? atol(argv[3]) : 1000);
	if (strcmp(mode, "relay") == 0) return relay((long)size, argc > 3 ? atol(argv[3]) : 10);
	if (strcmp(mode, "crash") == 0) {
		long idx = loop(setup(0), size, 0, &code);
		report(idx, code);
		*(volatile int *)NULL = 1;
		return 0;
	}
	if (strcmp(mode, "forever") == 0) {
		long n = argc > 3 ? atol(argv[3]) : 1;
		cl_int c2 = 0;
		loop(setup(0), size, n, &c2);
		printf("created %ld\n", n);
		fflush(stdout);
		for (;;) pause();
	}
	if (strcmp(mode, "bench") == 0) {
		long count = (long)size;
		size_t bsize = argc > 3 ? (size_t)strtoull(argv[3], NULL, 0) : 1024;
		cl_context ctx = setup(1);
		struct rusage r0, r1;
		getrusage(RUSAGE_SELF, &r0);
		double t0 = now();
		long idx = loop(ctx, bsize, count, &code);
		double t1 = now();
		getrusage(RUSAGE_SELF, &r1);
		if (idx >= 0) printf("failed at %ld code %d\n", idx, code);
		/* The CPU times beside the wall time: the layer adds user time, and a page fault's cost (system time)
		 * is what varies most from run to run on a virtual machine. */
		printf("creates %ld seconds %.6f user %.6f system %.6f\n", count, t1 - t0, seconds(r1.ru_utime) - seconds(r0.ru_utime),
		       seconds(r1.ru_stime) - seconds(r0.ru_stime));
		return 0;
	}
	fprintf(stderr, "traceprog: unknown mode %s\n", mode);
	return 2;
}
