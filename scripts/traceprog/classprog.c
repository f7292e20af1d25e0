/*
 * classprog: one OpenCL program, built each way a program can reach OpenCL, for the tests that hold
 * `clmemprobe trace` to "the program behaves exactly as untraced" (scripts/traceprog/build.sh builds them):
 *
 *   classprog-linked   linked with -lOpenCL
 *   classprog-dlopen   opens the loader itself (dlopen of libOpenCL.so.1, or of the library named by
 *                      CLASSPROG_LIB: a copy of the loader under another name, as Python wheels bundle one)
 *                      and looks every entry up on its handle (dlsym), as hashcat and darktable do
 *   classprog-host     opens classprog-plugin.so with dlopen(RTLD_LOCAL), the plugin linked with -lOpenCL:
 *                      how Python extension modules, JNI libraries and application plugins reach OpenCL
 *
 * Each takes the same arguments:
 *   MODE SIZE N    run: in one context over platform 0's devices, N buffers of SIZE bytes, stopping at the
 *                  first create that fails; if none did, one buffer one byte over the devices' largest
 *                  allocation (a runtime that enforces it refuses it). It prints "first failure: index I
 *                  code C" (I 0-based, as the loop counts) and, on stderr, "classprog: done".
 *                  fork: the same in a child made by fork (the parent makes no OpenCL call), and the
 *                  parent prints "child status S".
 *                  threads: the same, with the creates made by 16 threads that take turns (a mutex and a
 *                  condition variable hand the turn on), so the order, and the index, are the program's.
 *                  fill: N buffers (0: no limit), each filled on its device (buffer i on device i mod n)
 *                  and waited for, as a program that uses its buffers: a runtime that allocates at first use
 *                  fails at a fill. It prints the index of the buffer whose create or fill failed.
 */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef CLASSPROG_DLOPEN
#include <dlfcn.h>
#define API(fn) static __typeof__(&fn) p_##fn;
#define CL(fn) p_##fn
API(clGetPlatformIDs)
API(clGetDeviceIDs)
API(clGetDeviceInfo)
API(clCreateContext)
API(clCreateBuffer)
API(clReleaseContext)
API(clCreateCommandQueue)
API(clEnqueueFillBuffer)
API(clFinish)

static void load(void) {
	const char *lib = getenv("CLASSPROG_LIB");
	void *h = dlopen(lib && *lib ? lib : "libOpenCL.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!h) {
		printf("dlopen failed: %s\n", dlerror());
		exit(3);
	}
#define LOOKUP(fn) \
	if (!(p_##fn = (__typeof__(&fn))dlsym(h, #fn))) { printf("dlsym %s failed\n", #fn); exit(3); }
	LOOKUP(clGetPlatformIDs)
	LOOKUP(clGetDeviceIDs)
	LOOKUP(clGetDeviceInfo)
	LOOKUP(clCreateContext)
	LOOKUP(clCreateBuffer)
	LOOKUP(clReleaseContext)
	LOOKUP(clCreateCommandQueue)
	LOOKUP(clEnqueueFillBuffer)
	LOOKUP(clFinish)
}
#else
#define CL(fn) fn
static void load(void) {}
#endif

#define THREADS 16

static cl_context ctx;
static cl_device_id devs[16];
static cl_uint ndev;
static size_t size, over;
static long n;

static void die(const char *what, cl_int code) {
	printf("%s failed: code %d\n", what, code);
	exit(3);
}

static void setup(void) {
	load();
	cl_platform_id platform;
	cl_int err = CL(clGetPlatformIDs)(1, &platform, NULL);
	if (err != CL_SUCCESS) die("clGetPlatformIDs", err);
	err = CL(clGetDeviceIDs)(platform, CL_DEVICE_TYPE_ALL, 16, devs, &ndev);
	if (err != CL_SUCCESS) die("clGetDeviceIDs", err);
	ctx = CL(clCreateContext)(NULL, ndev, devs, NULL, NULL, &err);
	if (!ctx) die("clCreateContext", err);
	for (cl_uint d = 0; d < ndev; d++) {
		cl_ulong m = 0;
		CL(clGetDeviceInfo)(devs[d], CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof m, &m, NULL);
		if (m + 1 > over) over = (size_t)m + 1;
	}
}

/* create makes buffer i (0-based): SIZE bytes for the first N, then the one over the largest allocation. */
static cl_int create(long i) {
	cl_int err = CL_SUCCESS;
	cl_mem m = CL(clCreateBuffer)(ctx, CL_MEM_READ_WRITE, i < n ? size : over, NULL, &err);
	return m ? CL_SUCCESS : err;
}

static void report(long i, cl_int code) {
	if (code != CL_SUCCESS) printf("first failure: index %ld code %d\n", i, code);
	else printf("no failure after %ld buffers\n", i);
	fprintf(stderr, "classprog: done\n");
}

static void run_loop(void) {
	setup();
	long i = 0;
	cl_int code = CL_SUCCESS;
	for (; i <= n && code == CL_SUCCESS; i++) code = create(i);
	report(i - 1, code);
}

static void run_fill(void) {
	setup();
	cl_command_queue q[16];
	for (cl_uint d = 0; d < ndev; d++) {
		cl_int err = CL_SUCCESS;
		q[d] = CL(clCreateCommandQueue)(ctx, devs[d], 0, &err);
		if (!q[d]) die("clCreateCommandQueue", err);
	}
	const cl_uint pattern = 0xA5A5A5A5u;
	long i = 0;
	cl_int err = CL_SUCCESS;
	for (; (n <= 0 || i < n) && err == CL_SUCCESS; i++) {
		cl_mem m = CL(clCreateBuffer)(ctx, CL_MEM_READ_WRITE, size, NULL, &err);
		if (err == CL_SUCCESS) err = CL(clEnqueueFillBuffer)(q[i % ndev], m, &pattern, sizeof pattern, 0, size, 0, NULL, NULL);
		if (err == CL_SUCCESS) err = CL(clFinish)(q[i % ndev]);
	}
	report(err == CL_SUCCESS ? i : i - 1, err);
}

/* The relay: thread k makes the creates whose index is k modulo THREADS, in turn. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turned = PTHREAD_COND_INITIALIZER;
static long next_index, failed_at = -1;
static cl_int failed_code;

static void *relay(void *arg) {
	long k = (long)arg;
	pthread_mutex_lock(&mu);
	for (;;) {
		while (failed_at < 0 && next_index <= n && next_index % THREADS != k) pthread_cond_wait(&turned, &mu);
		if (failed_at >= 0 || next_index > n) break;
		cl_int code = create(next_index);
		if (code != CL_SUCCESS) failed_at = next_index, failed_code = code;
		next_index++;
		pthread_cond_broadcast(&turned);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void run_threads(void) {
	setup();
	pthread_t t[THREADS];
	for (long k = 0; k < THREADS; k++)
		if (pthread_create(&t[k], NULL, relay, (void *)k) != 0) die("pthread_create", 0);
	for (int k = 0; k < THREADS; k++) pthread_join(t[k], NULL);
	report(failed_at >= 0 ? failed_at : next_index - 1, failed_at >= 0 ? failed_code : CL_SUCCESS);
}

#ifdef CLASSPROG_PLUGIN
__attribute__((visibility("default"))) int classprog_main(int argc, char **argv);
int classprog_main(int argc, char **argv)
#else
int main(int argc, char **argv)
#endif
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s run|fork|threads|fill SIZE N\n", argv[0]);
		return 2;
	}
	size = strtoull(argv[2], NULL, 0);
	n = strtol(argv[3], NULL, 0);
	if (strcmp(argv[1], "run") == 0) {
		run_loop();
	} else if (strcmp(argv[1], "fill") == 0) {
		run_fill();
	} else if (strcmp(argv[1], "threads") == 0) {
		run_threads();
	} else if (strcmp(argv[1], "fork") == 0) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			run_loop();
			exit(0);
		}
		int status = 0;
		waitpid(pid, &status, 0);
		printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	} else {
		fprintf(stderr, "%s: unknown mode %s\n", argv[0], argv[1]);
		return 2;
	}
	return 0;
}
