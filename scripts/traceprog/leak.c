/* leak: a program with two allocation paths, one of which forgets its buffers: the trace ledger's example
 * (README) and test. upload_frames creates and releases FRAMES buffers of 1 MiB, one at a time; alloc_cache
 * creates CACHED and keeps them to the end. With "fail" it then creates buffers of 1 MiB in alloc_more, through
 * buffer (always inlined: the ledger names the function the call is written in, and the one it was inlined
 * into), until a create fails (or 1,000,000 were made), so the ledger has a first failure to show.
 * With "images" it makes images and SVM allocations instead, each of 1 MiB: make_images makes 5 images and
 * releases 2, svm_pool allocates 10 and frees 6.
 * With "paths" one helper, make_one, makes and keeps buffers for two callers alike but for their counts
 * (path_a 300, path_b 200): the stacks differ only in the return address into them, at the same place.
 * With "subs" make_parent makes 10 buffers with a sub-buffer each and releases each parent, then its
 * sub-buffer, which held the parent's last reference where the runtime counts one (PoCL does).
 *   leak [FRAMES CACHED] [fail]       (defaults 300 200)
 *   leak subs
 *   leak images
 *   leak paths */
#define CL_TARGET_OPENCL_VERSION 200
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cl_context ctx;

static inline __attribute__((always_inline)) cl_mem buffer(size_t size, cl_int *err) {
	return clCreateBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, err);
}

__attribute__((noinline)) static long upload_frames(long n) {
	long made = 0;
	for (long i = 0; i < n; i++) {
		cl_int err;
		cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1 << 20, NULL, &err);
		if (!m) break;
		made++;
		clReleaseMemObject(m);
	}
	return made;
}

__attribute__((noinline)) static long alloc_cache(cl_mem *keep, long n) {
	long made = 0;
	for (long i = 0; i < n; i++) {
		cl_int err;
		keep[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1 << 20, NULL, &err);
		if (!keep[i]) break;
		made++;
	}
	return made;
}

__attribute__((noinline)) static long alloc_more(void) {
	for (long i = 0; i < 1000000; i++) {
		cl_int err = CL_SUCCESS;
		if (!buffer(1 << 20, &err)) {
			printf("alloc_more failed at %ld with %d\n", i, err);
			return i;
		}
	}
	return 1000000;
}

__attribute__((noinline)) static void make_images(void) {
	cl_image_format f = {CL_RGBA, CL_UNORM_INT8};
	cl_image_desc d = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 512, .image_height = 512}; /* 1 MiB */
	cl_mem im[5];
	for (int i = 0; i < 5; i++) {
		cl_int err;
		im[i] = clCreateImage(ctx, CL_MEM_READ_WRITE, &f, &d, NULL, &err);
		if (!im[i]) printf("clCreateImage: %d\n", err);
	}
	for (int i = 0; i < 2; i++) clReleaseMemObject(im[i]);
}

__attribute__((noinline)) static void svm_pool(void) {
	void *p[10];
	for (int i = 0; i < 10; i++)
		if (!(p[i] = clSVMAlloc(ctx, CL_MEM_READ_WRITE, 1 << 20, 0))) printf("clSVMAlloc failed\n");
	for (int i = 0; i < 6; i++) clSVMFree(ctx, p[i]);
}

__attribute__((noinline)) static cl_mem make_one(void) {
	cl_int err;
	return clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1 << 20, NULL, &err);
}

static cl_mem kept[500];

__attribute__((noinline)) static void path_a(void) {
	for (int i = 0; i < 300; i++) kept[i] = make_one();
}

__attribute__((noinline)) static void path_b(void) {
	for (int i = 0; i < 200; i++) kept[300 + i] = make_one();
}

/* Read-only where make_one's buffers are read-write: two functions of one body would be folded into one by
 * the compiler (identical code folding), and named as one. */
__attribute__((noinline)) static cl_mem make_parent(void) {
	cl_int err;
	return clCreateBuffer(ctx, CL_MEM_READ_ONLY, 1 << 20, NULL, &err);
}

static void subs(void) {
	for (int i = 0; i < 10; i++) {
		cl_int err;
		cl_mem parent = make_parent();
		cl_buffer_region r = {0, 4096};
		cl_mem sub = clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err); /* its parent's flags */
		clReleaseMemObject(parent);
		clReleaseMemObject(sub);
	}
	printf("make_parent made 10 and released them all, each with its sub-buffer\n");
}

int main(int argc, char **argv) {
	long frames = argc > 2 ? atol(argv[1]) : 300, cached = argc > 2 ? atol(argv[2]) : 200;
	int fail = argc > 1 && strcmp(argv[argc - 1], "fail") == 0;
	cl_platform_id p;
	cl_device_id d;
	cl_int err;
	if (clGetPlatformIDs(1, &p, NULL) != CL_SUCCESS || clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL) != CL_SUCCESS) {
		fprintf(stderr, "leak: no OpenCL device\n");
		return 1;
	}
	ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
	if (!ctx) {
		fprintf(stderr, "leak: clCreateContext: %d\n", err);
		return 1;
	}
	if (argc > 1 && strcmp(argv[1], "subs") == 0) {
		subs();
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "paths") == 0) {
		path_a(); /* path_b's first create meets path_a's stack in the layer's cache, at the same place */
		path_b();
		printf("path_a made 300, path_b 200, through make_one\n");
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "images") == 0) {
		make_images();
		svm_pool();
		printf("make_images kept 3 of 5, svm_pool kept 4 of 10\n");
		return 0;
	}
	cl_mem *keep = calloc((size_t)(cached > 0 ? cached : 1), sizeof *keep);
	long a = upload_frames(frames), b = alloc_cache(keep, cached);
	printf("upload_frames made and released %ld, alloc_cache made and kept %ld\n", a, b);
	if (fail) alloc_more();
	return 0;
}
