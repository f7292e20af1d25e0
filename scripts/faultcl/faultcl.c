/*
 * faultcl: an OpenCL runtime whose failures we choose, for clmemprobe's tests.
 *
 * It implements the OpenCL ICD interface (clIcdGetPlatformIDsKHR and the dispatch table of CL/cl_icd.h), so
 * the real ICD loader loads it from an .icd file named by OCL_ICD_VENDORS and the tool under test runs
 * unmodified. Device memory is bookkeeping only; the host staging copy of the replicating model is real
 * memory, so process RSS shows it as it does on the runtime it imitates.
 *
 * Behaviour, from environment variables read once at load (sizes in bytes, call numbers 1-based):
 *   FAULTCL_DEVICES=n            devices in the one platform (default 2, at most 16; 0: a platform without any)
 *   FAULTCL_DEVICE_MEM=bytes     capacity of each device (default 4 GiB)
 *   FAULTCL_HOST_BUDGET=bytes    host staging budget (default: unlimited)
 *   FAULTCL_MODEL=replicate|lazy replicate (default): every buffer is allocated at create on every device
 *                                of its context, plus a host staging copy when the context has more than one
 *                                device; lazy: nothing at create, the first use on a queue's device allocates
 *   FAULTCL_CREATE_ERROR=code    what clCreateBuffer returns when a budget runs out (default -6)
 *   FAULTCL_LAZY_AT_FINISH=1     lazy failures are reported by clFinish instead of the enqueue call
 *   FAULTCL_OOR_AT=n             the n-th clCreateBuffer returns CL_OUT_OF_RESOURCES (-5)
 *   FAULTCL_CRASH_AT=n           the n-th clCreateBuffer writes through a null pointer (SIGSEGV)
 *   FAULTCL_HANG_AT=n            the n-th clCreateBuffer never returns
 *   FAULTCL_KILL_AT=n            the n-th clCreateBuffer sends the process SIGKILL, as the OOM killer ends it
 *   FAULTCL_KILL_FILL_AT=n       the n-th clEnqueueFillBuffer sends the process SIGKILL (a fill that touches
 *                                the memory the kernel has not got), before it answers
 *   FAULTCL_SLOW_US=us           every clCreateBuffer sleeps this long
 *   FAULTCL_FAULTS_MULTI_ONLY=1  the four faults above count only buffers of contexts over several devices,
 *                                so one strategy of a run crashes or hangs and the others do not
 *   FAULTCL_LEAK_ON_RELEASE=1    clReleaseMemObject frees nothing
 *   FAULTCL_NOTIFY=1             a failed allocation calls the context's notify callback first
 *   FAULTCL_FREE_QUERY=0         do not answer CL_DEVICE_GLOBAL_FREE_MEMORY_AMD (answered by default)
 *   FAULTCL_HELD=bytes           device memory another process holds on every device from the start: it counts
 *                                against each device's capacity and shows in the free-memory query
 *   FAULTCL_EXTENSIONS=list      extra device extensions (cl_khr_external_memory enables the device list)
 *   FAULTCL_PCI_BUS=n            devices list cl_khr_pci_bus_info and answer it: domain 0, bus n, device = index
 *   FAULTCL_BROKEN_PLATFORM=1    the platform's device queries fail with CL_OUT_OF_HOST_MEMORY (its own
 *                                name and suffix still answer, or the loader would hide it)
 *   FAULTCL_ZERO_MEM=1           devices report 0 bytes of global memory
 *   FAULTCL_CRASH_IN=call        clGetPlatformIDs or clGetDeviceInfo writes through a null pointer
 *   FAULTCL_HANG_IN=call         clGetPlatformIDs or clGetDeviceInfo never returns
 *   FAULTCL_LINGER=seconds       the first clCreateContext starts a detached helper (setsid sleep) that keeps
 *                                the process's inherited descriptors open that long after it exits
 *   FAULTCL_MAX_ALLOCS=n         at most n live buffers: a cap on the count of allocations, whatever their size
 *                                (the next create returns FAULTCL_CREATE_ERROR)
 *   FAULTCL_STAGING=memfd        host staging copies go to a memfd, written and never mapped: system memory the
 *                                process's RSS does not show, as driver-held memory is
 *   FAULTCL_OVERCOMMIT=1         device memory is not enforced: buffers beyond a device's global size succeed
 *   FAULTCL_MAP_PER_BUFFER=1     every buffer maps two pages of its own (read-write, then no access, so the
 *                                kernel cannot merge them): vm.max_map_count ends the loop (-6 when mmap fails)
 *   FAULTCL_RESERVE_PER_BUFFER=b every buffer reserves b bytes of address space (PROT_NONE, no memory): the
 *                                process's address-space limit ends the loop (-6 when mmap fails)
 *   FAULTCL_FDS_PER_EXTRA_DEVICE=k  every buffer placed on n devices holds k*(n-1) descriptors open (of
 *                                /dev/null) until it is released, as Intel's runtime kept one per buffer for each
 *                                additional GPU of a context: the descriptor limit (ulimit -n) ends the loop of a
 *                                shared context, with -6 at create when an open fails (EMFILE)
 *   FAULTCL_ACCEPT_FLAGS=mask    cl_mem_flags bits beyond the standard ones that clCreateBuffer accepts (default 0:
 *                                any other bit is CL_INVALID_VALUE, as a runtime without the vendor's extension)
 * Buffer flags as the specification has them: a host pointer with neither CL_MEM_USE_HOST_PTR nor
 * CL_MEM_COPY_HOST_PTR, or one of them without a pointer, is CL_INVALID_HOST_PTR. A CL_MEM_USE_HOST_PTR buffer
 * takes no host staging copy (the program's memory is the host copy; every page of it is read at create);
 * a CL_MEM_ALLOC_HOST_PTR buffer takes one even in a context of one device (host-accessible memory the runtime
 * allocates); CL_MEM_COPY_HOST_PTR's staging copy is copied from the pointer.
 *   FAULTCL_LOG=1                every allocation decision is printed to stderr ("faultcl: ..."), as a runtime's
 *                                own logging would be
 *   FAULTCL_PLATFORM_NAME=name   the platform's name (default faultcl), to stand in for a runtime the tool knows
 *   FAULTCL_NO_EVENT_STATUS=1    a command that failed after its enqueue reports CL_COMPLETE in its event (a
 *                                runtime that says only at clFinish that something failed, not which command)
 * With cl_intel_driver_diagnostics in FAULTCL_EXTENSIONS, a context created with
 * CL_CONTEXT_SHOW_DIAGNOSTICS_INTEL gets diagnostic messages through its notify callback (at creation and at
 * every failed allocation), as Intel's runtime sends its hints.
 */
#define _GNU_SOURCE /* memfd_create */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_icd.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#define MAXDEV 16
/* CL_MEM_DEVICE_HANDLE_LIST_KHR (cl_khr_external_memory); headers have spelled its name in two ways. */
#define FCL_DEVICE_HANDLE_LIST 0x2051
#define EXPORT __attribute__((visibility("default")))

static cl_icd_dispatch dispatch;

struct _cl_platform_id { cl_icd_dispatch *dispatch; };
struct _cl_device_id { cl_icd_dispatch *dispatch; int index; };
struct _cl_context {
	cl_icd_dispatch *dispatch;
	int ndev;
	cl_uint diagnostics; /* CL_CONTEXT_SHOW_DIAGNOSTICS_INTEL's level, 0 when not asked for */
	int devs[MAXDEV];
	void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *);
	void *user;
	long buffers; /* buffers made in it, for FAULTCL_SHARED_LIMIT */
};
struct _cl_command_queue { cl_icd_dispatch *dispatch; cl_context ctx; int dev; cl_int pending; int hang; };
struct _cl_mem {
	cl_icd_dispatch *dispatch;
	cl_context ctx;
	cl_mem_flags flags;
	size_t size;
	uint32_t resident;
	void *staging;
	void *mapped;
	size_t mapped_len;
	int *fds; /* FAULTCL_FDS_PER_EXTRA_DEVICE's descriptors, nfds of them */
	int nfds;
	/* What a fill wrote, without storing it: the pattern, and the bytes [fill_from, fill_to) it covers. A read
	 * answers the pattern there and zeros elsewhere, as a buffer whose fill stopped short reads back. */
	unsigned char pattern[128];
	size_t psize, fill_from, fill_to;
	cl_mem parent; /* a sub-buffer's pool: it is placed, and holds memory, as its parent does */
};
struct _cl_program { cl_icd_dispatch *dispatch; cl_context ctx; };
struct _cl_kernel { cl_icd_dispatch *dispatch; cl_mem arg0; };
/* Events are real objects with a reference count; a released one keeps its memory, marked dead, so a later
 * use (in a wait list, a query, a second release) is caught and answered as a real runtime should. */
#define EVENT_LIVE 0x4c495645u
#define EVENT_DEAD 0x44454144u
struct _cl_event { cl_icd_dispatch *dispatch; uint32_t magic; int refs; cl_int status; };

static struct {
	int ndev, lazy, lazy_at_finish, leak, notify, free_query, broken, zero_mem;
	cl_ulong dev_mem, host_budget;
	cl_int create_error;
	long oor_at, crash_at, hang_at, kill_at, kill_fill_at, slow_us;
	int faults_multi_only;
	const char *extensions;
	long pci_bus; /* -1: no PCI bus info */
	const char *crash_in, *hang_in;
	long linger, max_allocs, map_per_buffer, overcommit;
	/* FAULTCL_FILL=modulo: a fill takes its element count modulo 2^32 as a signed 32-bit number, hanging
	 * where that is negative and writing only that many elements otherwise (as one driver was measured to);
	 * FAULTCL_ENFORCE_MAX_ALLOC=1: a create above the reported maximum allocation fails with -61. */
	int fill_modulo, fill_none, enforce_max_alloc;
	/* FAULTCL_SHARED_LIMIT=N: a context over more than one device refuses its buffers after the N-th with
	 * FAULTCL_CREATE_ERROR (-6 by default), as NEO reports any allocation failure inside clCreateBuffer; a
	 * context over one device is not limited. */
	long shared_limit; /* FAULTCL_FILL=none: every fill reports success, writes nothing */
	int staging_memfd;
	cl_ulong reserve_per_buffer;
	int log, no_event_status;
	long fds_per_extra;
	unsigned long long accept_flags;
} cfg;

static struct _cl_platform_id platform = {&dispatch};
static struct _cl_device_id devices[MAXDEV];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static cl_ulong dev_used[MAXDEV], host_used, memfd_used;
static long create_calls, live_buffers, fill_calls;

static long env_long(const char *name, long def) {
	const char *v = getenv(name);
	return v && *v ? strtol(v, NULL, 0) : def;
}
static cl_ulong env_u64(const char *name, cl_ulong def) {
	const char *v = getenv(name);
	return v && *v ? strtoull(v, NULL, 0) : def;
}

static void init_config(void) {
	cfg.ndev = (int)env_long("FAULTCL_DEVICES", 2);
	if (cfg.ndev < 0) cfg.ndev = 0;
	if (cfg.ndev > MAXDEV) cfg.ndev = MAXDEV;
	cfg.dev_mem = env_u64("FAULTCL_DEVICE_MEM", 4ULL << 30);
	cfg.host_budget = env_u64("FAULTCL_HOST_BUDGET", 0);
	const char *model = getenv("FAULTCL_MODEL");
	cfg.lazy = model && strcmp(model, "lazy") == 0;
	cfg.lazy_at_finish = (int)env_long("FAULTCL_LAZY_AT_FINISH", 0);
	cfg.create_error = (cl_int)env_long("FAULTCL_CREATE_ERROR", CL_OUT_OF_HOST_MEMORY);
	cfg.oor_at = env_long("FAULTCL_OOR_AT", 0);
	cfg.crash_at = env_long("FAULTCL_CRASH_AT", 0);
	cfg.hang_at = env_long("FAULTCL_HANG_AT", 0);
	cfg.kill_at = env_long("FAULTCL_KILL_AT", 0);
	cfg.kill_fill_at = env_long("FAULTCL_KILL_FILL_AT", 0);
	cfg.slow_us = env_long("FAULTCL_SLOW_US", 0);
	cfg.faults_multi_only = (int)env_long("FAULTCL_FAULTS_MULTI_ONLY", 0);
	cfg.leak = (int)env_long("FAULTCL_LEAK_ON_RELEASE", 0);
	cfg.notify = (int)env_long("FAULTCL_NOTIFY", 0);
	cfg.free_query = (int)env_long("FAULTCL_FREE_QUERY", 1);
	cfg.broken = (int)env_long("FAULTCL_BROKEN_PLATFORM", 0);
	cfg.zero_mem = (int)env_long("FAULTCL_ZERO_MEM", 0);
	cfg.extensions = getenv("FAULTCL_EXTENSIONS");
	cfg.pci_bus = env_long("FAULTCL_PCI_BUS", -1);
	cfg.crash_in = getenv("FAULTCL_CRASH_IN");
	cfg.hang_in = getenv("FAULTCL_HANG_IN");
	cfg.linger = env_long("FAULTCL_LINGER", 0);
	cfg.max_allocs = env_long("FAULTCL_MAX_ALLOCS", 0);
	cfg.map_per_buffer = env_long("FAULTCL_MAP_PER_BUFFER", 0);
	cfg.overcommit = env_long("FAULTCL_OVERCOMMIT", 0);
	cfg.reserve_per_buffer = env_u64("FAULTCL_RESERVE_PER_BUFFER", 0);
	/* Memory another process holds on every device from the start: it counts against the capacity and the
	 * free-memory query, as on a GPU another program uses. */
	cl_ulong held = env_u64("FAULTCL_HELD", 0);
	for (int i = 0; i < MAXDEV; i++) dev_used[i] = held;
	cfg.log = (int)env_long("FAULTCL_LOG", 0);
	cfg.no_event_status = (int)env_long("FAULTCL_NO_EVENT_STATUS", 0);
	cfg.fds_per_extra = env_long("FAULTCL_FDS_PER_EXTRA_DEVICE", 0);
	cfg.accept_flags = env_u64("FAULTCL_ACCEPT_FLAGS", 0);
	const char *fill = getenv("FAULTCL_FILL");
	cfg.fill_modulo = fill && strcmp(fill, "modulo") == 0;
	cfg.fill_none = fill && strcmp(fill, "none") == 0;
	cfg.enforce_max_alloc = (int)env_long("FAULTCL_ENFORCE_MAX_ALLOC", 0);
	cfg.shared_limit = env_long("FAULTCL_SHARED_LIMIT", 0);
	const char *staging = getenv("FAULTCL_STAGING");
	cfg.staging_memfd = -1;
	if (staging && strcmp(staging, "memfd") == 0) cfg.staging_memfd = memfd_create("faultcl-staging", 0);
	for (int i = 0; i < MAXDEV; i++) {
		devices[i].dispatch = &dispatch;
		devices[i].index = i;
	}
}

/* fault_in crashes or hangs the named entry point when the configuration says so. */
static void fault_in(const char *call) {
	if (cfg.crash_in && strcmp(cfg.crash_in, call) == 0) *(volatile int *)0 = 1;
	if (cfg.hang_in && strcmp(cfg.hang_in, call) == 0) for (;;) pause();
}

/* linger starts, once, a detached helper that outlives the process holding its inherited descriptors, as
 * runtimes that start daemons or compiler servers do. */
static void linger(void) {
	static int started;
	if (cfg.linger <= 0 || __atomic_exchange_n(&started, 1, __ATOMIC_SEQ_CST)) return;
	pid_t pid = fork();
	if (pid == 0) {
		setsid();
		char secs[32];
		snprintf(secs, sizeof secs, "%ld", cfg.linger);
		execlp("sleep", "sleep", secs, (char *)NULL);
		_exit(127);
	}
}

/* info copies a value into an OpenCL info query's output, with the standard size checks. */
static cl_int info(const void *val, size_t n, size_t size, void *out, size_t *size_ret) {
	if (size_ret) *size_ret = n;
	if (out) {
		if (size < n) return CL_INVALID_VALUE;
		memcpy(out, val, n);
	}
	return CL_SUCCESS;
}
static cl_int info_str(const char *s, size_t size, void *out, size_t *size_ret) {
	return info(s, strlen(s) + 1, size, out, size_ret);
}

static cl_int CL_API_CALL GetPlatformInfo(cl_platform_id p, cl_platform_info param, size_t size, void *out, size_t *ret) {
	(void)p;
	if (param == CL_PLATFORM_ICD_SUFFIX_KHR) return info_str("FAULT", size, out, ret);
	switch (param) {
	case CL_PLATFORM_NAME: return info_str(getenv("FAULTCL_PLATFORM_NAME") ? getenv("FAULTCL_PLATFORM_NAME") : "faultcl", size, out, ret);
	case CL_PLATFORM_VENDOR: return info_str("clmemprobe tests", size, out, ret);
	case CL_PLATFORM_VERSION: return info_str("OpenCL 3.0 faultcl", size, out, ret);
	case CL_PLATFORM_PROFILE: return info_str("FULL_PROFILE", size, out, ret);
	case CL_PLATFORM_EXTENSIONS: return info_str("cl_khr_icd", size, out, ret);
	}
	return CL_INVALID_VALUE;
}

static cl_int CL_API_CALL GetDeviceIDs(cl_platform_id p, cl_device_type type, cl_uint n, cl_device_id *out, cl_uint *nret) {
	(void)p;
	if (cfg.broken) return CL_OUT_OF_HOST_MEMORY;
	if (cfg.ndev == 0 || !(type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_DEFAULT))) return CL_DEVICE_NOT_FOUND;
	if (nret) *nret = (cl_uint)cfg.ndev;
	for (cl_uint i = 0; out && i < n && i < (cl_uint)cfg.ndev; i++) out[i] = &devices[i];
	return CL_SUCCESS;
}

static cl_int CL_API_CALL GetDeviceInfo(cl_device_id d, cl_device_info param, size_t size, void *out, size_t *ret) {
	fault_in("clGetDeviceInfo");
	char buf[512];
	cl_ulong u64;
	cl_uint u32;
	switch (param) {
	case CL_DEVICE_NAME: snprintf(buf, sizeof buf, "faultcl device %d", d->index); return info_str(buf, size, out, ret);
	case CL_DEVICE_VENDOR: return info_str("clmemprobe tests", size, out, ret);
	case CL_DEVICE_VERSION: return info_str("OpenCL 3.0 faultcl", size, out, ret);
	case CL_DRIVER_VERSION: return info_str("1.0-faultcl", size, out, ret);
	case CL_DEVICE_EXTENSIONS:
		snprintf(buf, sizeof buf, "cl_khr_byte_addressable_store %s%s", cfg.pci_bus >= 0 ? "cl_khr_pci_bus_info " : "",
			cfg.extensions ? cfg.extensions : "");
		return info_str(buf, size, out, ret);
	case 0x410F: { /* CL_DEVICE_PCI_BUS_INFO_KHR: domain, bus, device, function */
		if (cfg.pci_bus < 0) return CL_INVALID_VALUE;
		cl_uint pci[4] = {0, (cl_uint)cfg.pci_bus, (cl_uint)d->index, 0};
		return info(pci, sizeof pci, size, out, ret);
	}
	case CL_DEVICE_TYPE: u64 = CL_DEVICE_TYPE_GPU; return info(&u64, 8, size, out, ret);
	case CL_DEVICE_GLOBAL_MEM_SIZE: u64 = cfg.zero_mem ? 0 : cfg.dev_mem; return info(&u64, 8, size, out, ret);
	case CL_DEVICE_MAX_MEM_ALLOC_SIZE: u64 = cfg.zero_mem ? 0 : cfg.dev_mem / 4; return info(&u64, 8, size, out, ret);
	case CL_DEVICE_MEM_BASE_ADDR_ALIGN: { cl_uint bits = 4096; return info(&bits, sizeof bits, size, out, ret); }
	case CL_DEVICE_HOST_UNIFIED_MEMORY: u32 = CL_FALSE; return info(&u32, 4, size, out, ret);
	case CL_DEVICE_MAX_COMPUTE_UNITS: u32 = 1; return info(&u32, 4, size, out, ret);
	case CL_DEVICE_GLOBAL_FREE_MEMORY_AMD: {
		if (!cfg.free_query) return CL_INVALID_VALUE;
		size_t kib[2];
		pthread_mutex_lock(&mu);
		cl_ulong used = dev_used[d->index] < cfg.dev_mem ? dev_used[d->index] : cfg.dev_mem;
		kib[0] = kib[1] = (size_t)((cfg.dev_mem - used) / 1024);
		pthread_mutex_unlock(&mu);
		return info(kib, sizeof kib, size, out, ret);
	}
	}
	return CL_INVALID_VALUE; /* as real drivers answer queries they lack */
}

/* CL_CONTEXT_SHOW_DIAGNOSTICS_INTEL, from cl_ext.h's cl_intel_driver_diagnostics; older headers lack it. */
#define FCL_SHOW_DIAGNOSTICS 0x4106

static void say(cl_context c, const char *msg);

static cl_context CL_API_CALL CreateContext(const cl_context_properties *props, cl_uint n, const cl_device_id *devs,
		void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *), void *user, cl_int *err) {
	linger();
	if (n == 0 || n > MAXDEV) { if (err) *err = CL_INVALID_VALUE; return NULL; }
	cl_context c = calloc(1, sizeof *c);
	c->dispatch = &dispatch;
	c->ndev = (int)n;
	for (cl_uint i = 0; i < n; i++) c->devs[i] = devs[i]->index;
	c->notify = notify;
	c->user = user;
	for (const cl_context_properties *p = props; p && p[0]; p += 2) {
		if (p[0] != FCL_SHOW_DIAGNOSTICS) continue;
		if (!cfg.extensions || !strstr(cfg.extensions, "cl_intel_driver_diagnostics")) {
			free(c);
			if (err) *err = CL_INVALID_PROPERTY;
			return NULL;
		}
		c->diagnostics = (cl_uint)p[1];
	}
	if (c->diagnostics && c->notify) {
		char msg[128];
		snprintf(msg, sizeof msg, "faultcl diagnostics: context over %d device(s); buffers of several devices are staged in host memory", c->ndev);
		c->notify(msg, NULL, 0, c->user);
	}
	if (err) *err = CL_SUCCESS;
	return c;
}
static cl_int CL_API_CALL ReleaseContext(cl_context c) { (void)c; return CL_SUCCESS; }
static cl_int CL_API_CALL GetContextInfo(cl_context c, cl_context_info param, size_t size, void *out, size_t *ret) {
	cl_uint n = (cl_uint)c->ndev;
	if (param == CL_CONTEXT_NUM_DEVICES) return info(&n, 4, size, out, ret);
	return CL_INVALID_VALUE;
}

static cl_command_queue CL_API_CALL CreateCommandQueue(cl_context c, cl_device_id d, cl_command_queue_properties p, cl_int *err) {
	(void)p;
	cl_command_queue q = calloc(1, sizeof *q);
	q->dispatch = &dispatch;
	q->ctx = c;
	q->dev = d->index;
	if (err) *err = CL_SUCCESS;
	return q;
}
static cl_int CL_API_CALL ReleaseCommandQueue(cl_command_queue q) { (void)q; return CL_SUCCESS; }
/* GetCommandQueueInfo answers a queue's context and device, as a tracing layer asks of a failed command. */
static cl_int CL_API_CALL GetCommandQueueInfo(cl_command_queue q, cl_command_queue_info param, size_t size, void *out, size_t *ret) {
	if (param == CL_QUEUE_CONTEXT) return info(&q->ctx, sizeof q->ctx, size, out, ret);
	cl_device_id d = &devices[q->dev];
	if (param == CL_QUEUE_DEVICE) return info(&d, sizeof d, size, out, ret);
	return CL_INVALID_VALUE;
}
static cl_int CL_API_CALL Flush(cl_command_queue q) { (void)q; return CL_SUCCESS; }
static cl_int CL_API_CALL Finish(cl_command_queue q) {
	if (q->hang) for (;;) pause(); /* a fill that never completes */
	cl_int e = q->pending;
	q->pending = CL_SUCCESS;
	return e;
}

/* say reports a failed allocation: to the notify callback where FAULTCL_NOTIFY or the context's diagnostics
 * ask for it, and to stderr where FAULTCL_LOG does. */
static void say(cl_context c, const char *msg) {
	if ((cfg.notify || c->diagnostics) && c->notify) c->notify(msg, NULL, 0, c->user);
	if (cfg.log) fprintf(stderr, "%s\n", msg);
}

/* close_fds closes the descriptors a buffer holds. */
static void close_fds(cl_mem m) {
	for (int i = 0; i < m->nfds; i++) close(m->fds[i]);
	free(m->fds);
	m->fds = NULL;
	m->nfds = 0;
}

/* open_fds opens the descriptors a buffer on n devices holds (FAULTCL_FDS_PER_EXTRA_DEVICE); when one cannot
 * be opened (EMFILE at the process's limit) it closes those it opened and returns the errno. */
static int open_fds(cl_mem m, int n) {
	long want = cfg.fds_per_extra * (n - 1);
	if (want <= 0) return 0;
	m->fds = malloc((size_t)want * sizeof *m->fds);
	if (!m->fds) return ENOMEM;
	for (m->nfds = 0; m->nfds < want; m->nfds++) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			int e = errno;
			close_fds(m);
			return e;
		}
		m->fds[m->nfds] = fd;
	}
	return 0;
}

/* standard_flags are the cl_mem_flags bits of OpenCL 3.0 that a buffer may have. */
#define STANDARD_FLAGS (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | \
	CL_MEM_COPY_HOST_PTR | CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)

/* check_flags is clCreateBuffer's check of its flags and host pointer. */
static cl_int check_flags(cl_mem_flags flags, const void *host) {
	if (flags & ~(cl_mem_flags)(STANDARD_FLAGS | cfg.accept_flags)) return CL_INVALID_VALUE;
	int wants_host = (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR)) != 0;
	if (wants_host != (host != NULL)) return CL_INVALID_HOST_PTR;
	if ((flags & CL_MEM_USE_HOST_PTR) && (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR))) return CL_INVALID_VALUE;
	return CL_SUCCESS;
}

/* create_common is clCreateBuffer and clCreateBufferWithProperties; devs/n are where the buffer goes. */
static cl_mem create_common(cl_context c, const int *devs, int n, size_t size, cl_mem_flags flags, void *host, cl_int *err) {
	long call = -1;
	if (!cfg.faults_multi_only || c->ndev > 1) call = __atomic_add_fetch(&create_calls, 1, __ATOMIC_SEQ_CST);
	if (cfg.slow_us > 0) usleep((useconds_t)cfg.slow_us);
	if (cfg.crash_at && call == cfg.crash_at) *(volatile int *)0 = 1;
	if (cfg.hang_at && call == cfg.hang_at) for (;;) pause();
	if (cfg.kill_at && call == cfg.kill_at) raise(SIGKILL);
	if (cfg.oor_at && call == cfg.oor_at) {
		say(c, "faultcl: out of resources (injected)");
		if (err) *err = CL_OUT_OF_RESOURCES;
		return NULL;
	}
	if (size == 0 || (cfg.enforce_max_alloc && size > cfg.dev_mem / 4)) { if (err) *err = CL_INVALID_BUFFER_SIZE; return NULL; }
	if (cfg.shared_limit && c->ndev > 1 && __atomic_add_fetch(&c->buffers, 1, __ATOMIC_SEQ_CST) > cfg.shared_limit) {
		say(c, "faultcl: the multi-device context's buffer limit is reached");
		if (err) *err = cfg.create_error;
		return NULL;
	}
	cl_int bad = check_flags(flags, host);
	if (bad != CL_SUCCESS) { if (err) *err = bad; return NULL; }
	if (flags & CL_MEM_USE_HOST_PTR) {
		/* The runtime reads the program's storage, as one that maps it for the device does. */
		volatile const char *p = host;
		long page = sysconf(_SC_PAGESIZE);
		for (size_t at = 0; at < size; at += (size_t)page) (void)p[at];
	}
	if (cfg.max_allocs && __atomic_load_n(&live_buffers, __ATOMIC_SEQ_CST) >= cfg.max_allocs) {
		say(c, "faultcl: the allocation count cap is reached");
		if (err) *err = cfg.create_error;
		return NULL;
	}
	cl_mem m = calloc(1, sizeof *m);
	m->dispatch = &dispatch;
	m->ctx = c;
	m->flags = flags;
	m->size = size;
	/* Descriptors of the process's own, per buffer and additional device: the limit is the process's. */
	int fd_err = open_fds(m, n);
	if (fd_err) {
		free(m);
		char msg[128];
		snprintf(msg, sizeof msg, "faultcl: cannot open a descriptor for a buffer: %s", strerror(fd_err));
		say(c, msg);
		if (err) *err = CL_OUT_OF_HOST_MEMORY;
		return NULL;
	}
	/* Memory of the process's own, per buffer: mappings or address space the kernel limits. */
	if (cfg.map_per_buffer || cfg.reserve_per_buffer) {
		long page = sysconf(_SC_PAGESIZE);
		size_t len = cfg.reserve_per_buffer ? (size_t)cfg.reserve_per_buffer : (size_t)(2 * page);
		void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED || (cfg.map_per_buffer && mprotect(p, (size_t)page, PROT_READ | PROT_WRITE) != 0)) {
			if (p != MAP_FAILED) munmap(p, len);
			close_fds(m);
			free(m);
			say(c, "faultcl: mmap failed for a buffer");
			if (err) *err = CL_OUT_OF_HOST_MEMORY;
			return NULL;
		}
		if (cfg.map_per_buffer) *(volatile char *)p = 1;
		m->mapped = p;
		m->mapped_len = len;
	}
	if (!cfg.lazy) {
		int staging = (n > 1 || (flags & CL_MEM_ALLOC_HOST_PTR)) && !(flags & CL_MEM_USE_HOST_PTR);
		pthread_mutex_lock(&mu);
		int ok = !(staging && cfg.host_budget && host_used + size > cfg.host_budget);
		for (int i = 0; ok && !cfg.overcommit && i < n; i++) ok = dev_used[devs[i]] + size <= cfg.dev_mem;
		if (ok) {
			for (int i = 0; i < n; i++) { dev_used[devs[i]] += size; m->resident |= 1u << devs[i]; }
			if (staging) host_used += size;
		}
		pthread_mutex_unlock(&mu);
		if (!ok) {
			if (m->mapped) munmap(m->mapped, m->mapped_len);
			close_fds(m);
			free(m);
			say(c, "faultcl: allocation failed: a device or the host staging budget is full");
			if (err) *err = cfg.create_error;
			return NULL;
		}
		if (staging && cfg.staging_memfd >= 0) {
			/* Written through the descriptor, never mapped: shared memory that is not in RSS. */
			static char chunk[1 << 16];
			memset(chunk, 0x5A, sizeof chunk);
			pthread_mutex_lock(&mu);
			off_t at = (off_t)memfd_used;
			memfd_used += size;
			pthread_mutex_unlock(&mu);
			for (size_t done = 0; done < size; done += sizeof chunk) {
				size_t k = size - done < sizeof chunk ? size - done : sizeof chunk;
				if (pwrite(cfg.staging_memfd, chunk, k, at + (off_t)done) < 0) break;
			}
		} else if (staging) {
			m->staging = malloc(size);
			if (m->staging && (flags & CL_MEM_COPY_HOST_PTR)) memcpy(m->staging, host, size);
			else if (m->staging) memset(m->staging, 0x5A, size); /* touched, so RSS counts it */
		}
	}
	long live = __atomic_add_fetch(&live_buffers, 1, __ATOMIC_SEQ_CST);
	if (cfg.log) fprintf(stderr, "faultcl: buffer of %zu bytes on %d device(s), %ld live\n", size, n, live);
	if (err) *err = CL_SUCCESS;
	return m;
}

static cl_mem CL_API_CALL CreateBuffer(cl_context c, cl_mem_flags flags, size_t size, void *host, cl_int *err) {
	return create_common(c, c->devs, c->ndev, size, flags, host, err);
}

/* CreateSubBuffer makes a region of a buffer (CL_BUFFER_CREATE_TYPE_REGION), aligned to the devices'
 * CL_DEVICE_MEM_BASE_ADDR_ALIGN (4096 bits, 512 bytes): it holds its parent's memory, none of its own. */
static cl_mem CL_API_CALL CreateSubBuffer(cl_mem parent, cl_mem_flags flags, cl_buffer_create_type type, const void *info, cl_int *err) {
	const cl_buffer_region *r = info;
	cl_int e = CL_SUCCESS;
	if (!parent || parent->parent) e = CL_INVALID_MEM_OBJECT;
	else if (type != CL_BUFFER_CREATE_TYPE_REGION || !r || r->size == 0) e = CL_INVALID_VALUE;
	else if (r->origin + r->size > parent->size || r->origin + r->size < r->origin) e = CL_INVALID_VALUE;
	else if (r->origin % 512) e = CL_MISALIGNED_SUB_BUFFER_OFFSET;
	if (e != CL_SUCCESS) { if (err) *err = e; return NULL; }
	cl_mem m = calloc(1, sizeof *m);
	m->dispatch = &dispatch;
	m->ctx = parent->ctx;
	m->flags = flags ? flags : parent->flags;
	m->size = r->size;
	m->parent = parent;
	__atomic_add_fetch(&live_buffers, 1, __ATOMIC_SEQ_CST);
	if (err) *err = CL_SUCCESS;
	return m;
}

static cl_mem CL_API_CALL CreateBufferWithProperties(cl_context c, const cl_mem_properties *props, cl_mem_flags flags,
		size_t size, void *host, cl_int *err) {
	int devs[MAXDEV], n = 0;
	int listed = 0;
	for (const cl_mem_properties *p = props; p && *p; p++) {
		if (*p != FCL_DEVICE_HANDLE_LIST || !cfg.extensions || !strstr(cfg.extensions, "cl_khr_external_memory")) {
			if (err) *err = CL_INVALID_PROPERTY;
			return NULL;
		}
		listed = 1;
		for (p++; *p != 0 && n < MAXDEV; p++) devs[n++] = ((cl_device_id)(uintptr_t)*p)->index;
	}
	if (!listed) return create_common(c, c->devs, c->ndev, size, flags, host, err);
	return create_common(c, devs, n, size, flags, host, err);
}

/* GetMemObjectInfo answers what a buffer is; its reference count is 1 (a release frees it), and it is no
 * sub-buffer (faultcl makes none). */
static cl_int CL_API_CALL GetMemObjectInfo(cl_mem m, cl_mem_info param, size_t size, void *out, size_t *ret) {
	cl_uint one = 1;
	cl_mem none = NULL;
	switch (param) {
	case CL_MEM_SIZE: return info(&m->size, sizeof m->size, size, out, ret);
	case CL_MEM_CONTEXT: return info(&m->ctx, sizeof m->ctx, size, out, ret);
	case CL_MEM_FLAGS: return info(&m->flags, sizeof m->flags, size, out, ret);
	case CL_MEM_REFERENCE_COUNT: return info(&one, sizeof one, size, out, ret);
	case CL_MEM_ASSOCIATED_MEMOBJECT: return info(m->parent ? &m->parent : &none, sizeof none, size, out, ret);
	default: return CL_INVALID_VALUE;
	}
}

static cl_int CL_API_CALL ReleaseMemObject(cl_mem m) {
	if (cfg.leak) return CL_SUCCESS;
	if (m->parent) { /* a sub-buffer holds no memory of its own */
		__atomic_sub_fetch(&live_buffers, 1, __ATOMIC_SEQ_CST);
		free(m);
		return CL_SUCCESS;
	}
	pthread_mutex_lock(&mu);
	for (int d = 0; d < MAXDEV; d++)
		if (m->resident & (1u << d)) dev_used[d] -= m->size;
	if (m->staging) host_used -= m->size;
	pthread_mutex_unlock(&mu);
	if (m->mapped) munmap(m->mapped, m->mapped_len);
	close_fds(m);
	__atomic_sub_fetch(&live_buffers, 1, __ATOMIC_SEQ_CST);
	free(m->staging);
	free(m);
	return CL_SUCCESS;
}

/* deferred is the status a command that failed after its enqueue leaves in its event (FAULTCL_LAZY_AT_FINISH):
 * set by first_use, taken by enqueued. */
static __thread cl_int deferred;

/* first_use places a buffer on the queue's device in the lazy model (a sub-buffer: its parent). */
static cl_int first_use(cl_command_queue q, cl_mem m) {
	if (m->parent) m = m->parent;
	if (!cfg.lazy || (m->resident & (1u << q->dev))) return CL_SUCCESS;
	pthread_mutex_lock(&mu);
	int ok = cfg.overcommit || dev_used[q->dev] + m->size <= cfg.dev_mem;
	if (ok) { dev_used[q->dev] += m->size; m->resident |= 1u << q->dev; }
	pthread_mutex_unlock(&mu);
	if (ok) return CL_SUCCESS;
	say(q->ctx, "faultcl: device memory is full at first use");
	if (cfg.lazy_at_finish) {
		q->pending = CL_MEM_OBJECT_ALLOCATION_FAILURE;
		if (!cfg.no_event_status) deferred = CL_MEM_OBJECT_ALLOCATION_FAILURE;
		return CL_SUCCESS;
	}
	return CL_MEM_OBJECT_ALLOCATION_FAILURE;
}

static cl_int enqueued(cl_int e, cl_event *ev) {
	cl_int status = deferred;
	deferred = CL_SUCCESS;
	if (e == CL_SUCCESS && ev) {
		cl_event x = calloc(1, sizeof *x);
		x->dispatch = &dispatch;
		x->magic = EVENT_LIVE;
		x->refs = 1;
		x->status = status < 0 ? status : CL_COMPLETE;
		*ev = x;
	}
	return e;
}
static int live(cl_event e) { return e && e->magic == EVENT_LIVE; }
static cl_int check_wait(cl_uint n, const cl_event *w) {
	if ((n == 0) != (w == NULL)) return CL_INVALID_EVENT_WAIT_LIST;
	for (cl_uint i = 0; i < n; i++)
		if (!live(w[i])) return CL_INVALID_EVENT_WAIT_LIST;
	return CL_SUCCESS;
}
#define CHECK_WAIT(n, w) do { cl_int e_ = check_wait(n, w); if (e_) return e_; } while (0)

static cl_int CL_API_CALL EnqueueFillBuffer(cl_command_queue q, cl_mem m, const void *pat, size_t psize, size_t off, size_t size,
		cl_uint nw, const cl_event *w, cl_event *ev) {
	if (cfg.kill_fill_at && __atomic_add_fetch(&fill_calls, 1, __ATOMIC_SEQ_CST) == cfg.kill_fill_at) raise(SIGKILL);
	CHECK_WAIT(nw, w);
	if (!pat || psize == 0 || psize > sizeof m->pattern || (psize & (psize - 1)) || off % psize || size % psize || off + size > m->size)
		return CL_INVALID_VALUE;
	cl_int e = first_use(q, m);
	if (e == CL_SUCCESS) {
		size_t bytes = size;
		if (cfg.fill_none) bytes = 0;
		if (cfg.fill_modulo) {
			int32_t count = (int32_t)(uint32_t)(size / psize);
			if (count < 0) q->hang = 1;
			bytes = count < 0 ? 0 : (size_t)count * psize;
		}
		memcpy(m->pattern, pat, psize);
		m->psize = psize;
		m->fill_from = off;
		m->fill_to = off + bytes;
	}
	return enqueued(e, ev);
}
static cl_int CL_API_CALL EnqueueWriteBuffer(cl_command_queue q, cl_mem m, cl_bool b, size_t off, size_t size, const void *p,
		cl_uint nw, const cl_event *w, cl_event *ev) {
	(void)b; (void)off; (void)size; (void)p;
	CHECK_WAIT(nw, w);
	return enqueued(first_use(q, m), ev);
}
static cl_int CL_API_CALL EnqueueReadBuffer(cl_command_queue q, cl_mem m, cl_bool b, size_t off, size_t size, void *p,
		cl_uint nw, const cl_event *w, cl_event *ev) {
	(void)b;
	CHECK_WAIT(nw, w);
	if (!p || off + size > m->size) return CL_INVALID_VALUE;
	unsigned char *out = p;
	for (size_t i = 0; i < size; i++) {
		size_t at = off + i;
		out[i] = m->psize && at >= m->fill_from && at < m->fill_to ? m->pattern[(at - m->fill_from) % m->psize] : 0;
	}
	return enqueued(first_use(q, m), ev);
}
static cl_int CL_API_CALL EnqueueCopyBuffer(cl_command_queue q, cl_mem s, cl_mem d, size_t so, size_t dof, size_t size,
		cl_uint nw, const cl_event *w, cl_event *ev) {
	(void)so; (void)dof; (void)size;
	CHECK_WAIT(nw, w);
	cl_int e = first_use(q, s);
	return enqueued(e ? e : first_use(q, d), ev);
}
static cl_int CL_API_CALL EnqueueMigrateMemObjects(cl_command_queue q, cl_uint n, const cl_mem *mems, cl_mem_migration_flags f,
		cl_uint nw, const cl_event *w, cl_event *ev) {
	CHECK_WAIT(nw, w);
	if (f & CL_MIGRATE_MEM_OBJECT_HOST) return enqueued(CL_SUCCESS, ev);
	for (cl_uint i = 0; i < n; i++) {
		cl_int e = first_use(q, mems[i]);
		if (e) return e;
	}
	return enqueued(CL_SUCCESS, ev);
}

static cl_int CL_API_CALL WaitForEvents(cl_uint n, const cl_event *evs) {
	if (n == 0) return CL_INVALID_VALUE;
	cl_int e = CL_SUCCESS;
	for (cl_uint i = 0; i < n; i++) {
		if (!live(evs[i])) return CL_INVALID_EVENT;
		if (evs[i]->status < 0) e = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
	}
	return e;
}
static cl_int CL_API_CALL GetEventInfo(cl_event e, cl_event_info param, size_t size, void *out, size_t *ret) {
	if (!live(e)) return CL_INVALID_EVENT;
	cl_int st = e->status;
	if (param == CL_EVENT_COMMAND_EXECUTION_STATUS) return info(&st, 4, size, out, ret);
	return CL_INVALID_VALUE;
}
static cl_int CL_API_CALL GetEventProfilingInfo(cl_event e, cl_profiling_info param, size_t size, void *out, size_t *ret) {
	(void)param;
	if (!live(e)) return CL_INVALID_EVENT;
	cl_ulong t = 0;
	return info(&t, 8, size, out, ret);
}
static cl_int CL_API_CALL ReleaseEvent(cl_event e) {
	if (!live(e)) return CL_INVALID_EVENT;
	if (--e->refs == 0) e->magic = EVENT_DEAD;
	return CL_SUCCESS;
}

static cl_program CL_API_CALL CreateProgramWithSource(cl_context c, cl_uint n, const char **src, const size_t *len, cl_int *err) {
	(void)n; (void)src; (void)len;
	cl_program p = calloc(1, sizeof *p);
	p->dispatch = &dispatch;
	p->ctx = c;
	if (err) *err = CL_SUCCESS;
	return p;
}
static cl_int CL_API_CALL BuildProgram(cl_program p, cl_uint n, const cl_device_id *d, const char *o,
		void(CL_CALLBACK *cb)(cl_program, void *), void *u) {
	(void)p; (void)n; (void)d; (void)o; (void)cb; (void)u;
	return CL_SUCCESS;
}
static cl_int CL_API_CALL GetProgramBuildInfo(cl_program p, cl_device_id d, cl_program_build_info param, size_t size, void *out, size_t *ret) {
	(void)p; (void)d; (void)param;
	return info_str("", size, out, ret);
}
static cl_int CL_API_CALL ReleaseProgram(cl_program p) { (void)p; return CL_SUCCESS; }
static cl_kernel CL_API_CALL CreateKernel(cl_program p, const char *name, cl_int *err) {
	(void)p; (void)name;
	cl_kernel k = calloc(1, sizeof *k);
	k->dispatch = &dispatch;
	if (err) *err = CL_SUCCESS;
	return k;
}
static cl_int CL_API_CALL SetKernelArg(cl_kernel k, cl_uint i, size_t size, const void *val) {
	if (i == 0 && size == sizeof(cl_mem)) k->arg0 = *(const cl_mem *)val;
	return CL_SUCCESS;
}
static cl_int CL_API_CALL EnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *off, const size_t *g,
		const size_t *l, cl_uint nw, const cl_event *w, cl_event *ev) {
	(void)dim; (void)off; (void)g; (void)l;
	CHECK_WAIT(nw, w);
	return enqueued(k->arg0 ? first_use(q, k->arg0) : CL_SUCCESS, ev);
}
static cl_int CL_API_CALL ReleaseKernel(cl_kernel k) { (void)k; return CL_SUCCESS; }

EXPORT cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint n, cl_platform_id *out, cl_uint *nret) {
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, init_config);
	fault_in("clGetPlatformIDs");
	dispatch.clGetPlatformInfo = GetPlatformInfo;
	dispatch.clGetDeviceIDs = GetDeviceIDs;
	dispatch.clGetDeviceInfo = GetDeviceInfo;
	dispatch.clCreateContext = CreateContext;
	dispatch.clReleaseContext = ReleaseContext;
	dispatch.clGetContextInfo = GetContextInfo;
	dispatch.clGetCommandQueueInfo = GetCommandQueueInfo;
	dispatch.clCreateCommandQueue = CreateCommandQueue;
	dispatch.clReleaseCommandQueue = ReleaseCommandQueue;
	dispatch.clFlush = Flush;
	dispatch.clFinish = Finish;
	dispatch.clCreateBuffer = CreateBuffer;
	dispatch.clCreateSubBuffer = CreateSubBuffer;
	dispatch.clCreateBufferWithProperties = CreateBufferWithProperties;
	dispatch.clReleaseMemObject = ReleaseMemObject;
	dispatch.clGetMemObjectInfo = GetMemObjectInfo;
	dispatch.clEnqueueFillBuffer = EnqueueFillBuffer;
	dispatch.clEnqueueWriteBuffer = EnqueueWriteBuffer;
	dispatch.clEnqueueReadBuffer = EnqueueReadBuffer;
	dispatch.clEnqueueCopyBuffer = EnqueueCopyBuffer;
	dispatch.clEnqueueMigrateMemObjects = EnqueueMigrateMemObjects;
	dispatch.clWaitForEvents = WaitForEvents;
	dispatch.clGetEventInfo = GetEventInfo;
	dispatch.clGetEventProfilingInfo = GetEventProfilingInfo;
	dispatch.clReleaseEvent = ReleaseEvent;
	dispatch.clCreateProgramWithSource = CreateProgramWithSource;
	dispatch.clBuildProgram = BuildProgram;
	dispatch.clGetProgramBuildInfo = GetProgramBuildInfo;
	dispatch.clReleaseProgram = ReleaseProgram;
	dispatch.clCreateKernel = CreateKernel;
	dispatch.clSetKernelArg = SetKernelArg;
	dispatch.clEnqueueNDRangeKernel = EnqueueNDRangeKernel;
	dispatch.clReleaseKernel = ReleaseKernel;
	if (nret) *nret = 1;
	if (out && n > 0) out[0] = &platform;
	return CL_SUCCESS;
}

EXPORT void *CL_API_CALL clGetExtensionFunctionAddress(const char *name) {
	if (strcmp(name, "clIcdGetPlatformIDsKHR") == 0) return (void *)clIcdGetPlatformIDsKHR;
	return NULL;
}

/* The loader looks clGetPlatformInfo up by name too, to read the ICD suffix before it uses the dispatch table. */
EXPORT cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id p, cl_platform_info param, size_t size, void *out, size_t *ret) {
	return GetPlatformInfo(p, param, size, out, ret);
}
