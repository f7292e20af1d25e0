/*
 * holdmem: another process on the GPU, for the shared-device case (a GPU that other jobs use while the probe
 * runs). It takes GIB gibibytes of one OpenCL device's memory, in 1 GiB buffers that it fills (a lazy
 * runtime places a buffer only at first use), prints "holding N GiB on device D" once they are placed,
 * then holds them until it is killed or SECONDS have passed. The OpenCL library is loaded with dlopen, as in
 * scripts/cloop, so it builds without OpenCL development files.
 *
 * usage: holdmem PLATFORM DEVICE GIB [SECONDS]
 */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SYM(name) static __typeof__(&name) p_##name
SYM(clGetPlatformIDs); SYM(clGetDeviceIDs); SYM(clCreateContext); SYM(clCreateCommandQueue);
SYM(clCreateBuffer); SYM(clEnqueueFillBuffer); SYM(clFinish);

int main(int argc, char **argv) {
	if (argc < 4) {
		fprintf(stderr, "usage: holdmem PLATFORM DEVICE GIB [SECONDS]\n");
		return 2;
	}
	unsigned plat = (unsigned)atoi(argv[1]), dev = (unsigned)atoi(argv[2]);
	long gib = atol(argv[3]), seconds = argc > 4 ? atol(argv[4]) : 3600;
	void *h = dlopen(getenv("CLMEMPROBE_OPENCL_LIB") ? getenv("CLMEMPROBE_OPENCL_LIB") : "libOpenCL.so.1", RTLD_NOW);
	if (!h) { fprintf(stderr, "holdmem: %s\n", dlerror()); return 3; }
#define LOAD(name) if (!(p_##name = (__typeof__(p_##name))dlsym(h, #name))) { fprintf(stderr, "holdmem: no " #name "\n"); return 3; }
	LOAD(clGetPlatformIDs); LOAD(clGetDeviceIDs); LOAD(clCreateContext); LOAD(clCreateCommandQueue);
	LOAD(clCreateBuffer); LOAD(clEnqueueFillBuffer); LOAD(clFinish);
	cl_platform_id ps[16];
	cl_uint np = 0;
	if (p_clGetPlatformIDs(16, ps, &np) || plat >= np) { fprintf(stderr, "holdmem: no platform %u\n", plat); return 3; }
	cl_device_id ds[64];
	cl_uint nd = 0;
	if (p_clGetDeviceIDs(ps[plat], CL_DEVICE_TYPE_ALL, 64, ds, &nd) || dev >= nd) { fprintf(stderr, "holdmem: no device %u\n", dev); return 3; }
	cl_int err;
	cl_context ctx = p_clCreateContext(NULL, 1, &ds[dev], NULL, NULL, &err);
	if (err) { fprintf(stderr, "holdmem: clCreateContext: %d\n", err); return 3; }
	cl_command_queue q = p_clCreateCommandQueue(ctx, ds[dev], 0, &err);
	if (err) { fprintf(stderr, "holdmem: clCreateCommandQueue: %d\n", err); return 3; }
	const cl_uint pattern = 0x5a5a5a5a;
	long held = 0;
	for (; held < gib; held++) {
		cl_mem m = p_clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)1 << 30, NULL, &err);
		if (err == CL_SUCCESS) err = p_clEnqueueFillBuffer(q, m, &pattern, sizeof pattern, 0, (size_t)1 << 30, 0, NULL, NULL);
		if (err == CL_SUCCESS) err = p_clFinish(q);
		if (err != CL_SUCCESS) { fprintf(stderr, "holdmem: buffer %ld: %d\n", held, err); break; }
	}
	printf("holding %ld GiB on device %u\n", held, dev);
	fflush(stdout);
	sleep((unsigned)seconds);
	return held == gib ? 0 : 1;
}
