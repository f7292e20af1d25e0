/*
 * clmemprobe's OpenCL interception layer, for `clmemprobe trace -- PROGRAM`.
 *
 * It is loaded into the traced program one of two ways, and records the same things either way:
 *   - as an ICD loader layer (OPENCL_LAYERS names this library): the loader calls clInitLayer with the next
 *     dispatch table, and this layer returns a copy of it with its own entries for the calls it watches;
 *   - preloaded (LD_PRELOAD names it), where the loader has no layers: the exported clCreateBuffer and the
 *     others are found before the loader's, record, and forward to the real definition: the next one
 *     (dlsym RTLD_NEXT), else, for a program whose OpenCL library sits in a local scope (a Python extension,
 *     a JNI library, a plugin opened with RTLD_LOCAL), the one of the loader mapped in the process (the link
 *     map). The layer never answers a call itself (real_entry says the one exception).
 * The tool puts the layer in one way, not both (it asks the loader first); should both be set and the loader
 * initialise the layer, the exported functions only forward: the layer inside the loader records, once. The
 * header's mechanism field says which one recorded. Either way the layer notes the OpenCL libraries mapped in
 * the process (loaders and runtimes), so that the tool can tell a program that used no OpenCL from one whose
 * calls did not come through the layer.
 *
 * Nothing is held in the program: every record goes into shared memory the tool created (a memfd whose
 * descriptor is named by CLMEMPROBE_TRACE_FD), a header of exact counters and two rings of fixed-size
 * records the tool drains while the program runs. The first thread that records (in most programs the one
 * that allocates) writes the fast ring alone, with plain stores, and a call identical to the one before it
 * (a loop) only counts one more in that record: its run. Every other thread reserves its place in the
 * shared ring with a compare-and-swap, one record a call, and notes how far the fast ring had come, so that
 * the tool can put the two back into one order that agrees with what each thread saw. A full ring drops
 * records and counts them; the counters and the first failure stay exact, and the memory is the tool's too, so a crash of the
 * program loses nothing that was written. No call here allocates, takes a lock or makes a system call on
 * the create path, so the memory the layer uses is the fixed mapping whatever the program does.
 *
 * It never changes what the program sees: the result and errcode_ret of every call are the runtime's own;
 * where the program passes errcode_ret NULL, the layer passes its own variable and the program's stays NULL.
 *
 * The layout below is mirrored by probe/internal/trace/channel.go (a size test holds the two together).
 */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS /* clCreateImage2D and 3D, which programs still call */
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_icd.h>
#include <CL/cl_layer.h>
#include <dlfcn.h>
#include <link.h>
#include <math.h>
#include <unwind.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

#define TR_MAGIC 0x31435254504d4c43ull /* "CLMPTRC1" little-endian */
#define TR_VERSION 6
#define TR_MAX_CONTEXTS 128
#define TR_MAX_DEVICES 64
#define TR_CTX_DEVICES 16
#define TR_NAME 64
#define TR_PCI 16 /* "dddd:bb:dd.f" and its NUL */
#define PREFETCH_AHEAD 4
#define TR_SHARDS 32 /* per-thread counters; the last is shared, with atomic operations, by threads beyond */
#define TR_LIBS 8
#define TR_LIB_NAME 240
/* The ledger: call sites (a program's stack, per context), the objects their frames are in, and the program
 * frames kept of each stack. 16 frames tell apart two paths that differ anywhere within 16 calls of the
 * create (a helper called from two places, a wrapper library's own frames between), at a few loads more
 * per frame verified; a Python or JVM program's frames past its extension are the interpreter's, which
 * the tool cuts off. */
#define TR_SITES 1024
#define TR_FRAMES 16
#define TR_OBJECTS 128
#define TR_OBJ_NAME 192
#define TR_BUILD_ID 28

/* K_ENQUEUE is a failed command; K_ISSUE a command as the program makes it, before the runtime has it (only
 * where the tool keeps a call log: header.log_calls). */
enum { K_CONTEXT = 1, K_BUFFER = 2, K_SUB_BUFFER = 3, K_BUFFER_PROPS = 4, K_RELEASE_MEM = 5, K_RELEASE_CONTEXT = 6, K_ENQUEUE = 7, K_ISSUE = 8 };
enum { M_LAYER = 1, M_PRELOAD = 2 };
/* An OpenCL library mapped in the process: an ICD loader (it exports clGetPlatformIDs and no ICD entry), or
 * a runtime (an ICD: it exports clIcdGetPlatformIDsKHR). */
enum { L_LOADER = 1, L_RUNTIME = 2 };
/* A failed command's buffer: its thread's newest memory object, an older one (0: not known). */
enum { B_NEWEST = 1, B_OLDER = 2 };
enum {
	C_READ = 1, C_WRITE, C_COPY, C_FILL, C_MAP, C_MIGRATE, C_NDRANGE, C_TASK,
	C_READ_RECT, C_WRITE_RECT, C_COPY_RECT, C_FINISH, C_UNMAP
};

/* A record is a call and what came of it, without a time: the sequence keeps the order of calls, and a clock
 * read would cost every create. */
struct tr_record {
	uint64_t commit;  /* its ring position + 1, stored last (release): the record is whole */
	uint64_t count;   /* the calls it stands for: a run of identical calls in the fast ring, 1 in the shared */
	uint64_t size;
	uint64_t flags;
	uint64_t after;       /* in the shared ring, what its thread saw of the fast ring when its call returned: */
	uint64_t after_count; /* the run then open (or about to be) and how many calls that run had counted */
	uint32_t context; /* context slot + 1; 0: not tracked */
	uint32_t kind;
	int32_t code;
	uint32_t aux;     /* devices of a context, command of an enqueue, properties of a buffer, destroyed at release */
};

struct tr_device {
	uint64_t handle;
	uint32_t state; /* 0 free, 1 being written, 2 ready */
	uint32_t pad;
	uint64_t type;
	uint64_t global_mem;
	uint64_t max_alloc;
	char name[TR_NAME];
	char pci_bus_id[TR_PCI]; /* "" when the runtime does not tell: the tool keys device memory to devices by it */
};

struct tr_context {
	uint64_t handle;
	uint32_t state; /* 0 free, 1 being written, 2 ready */
	uint32_t ndev;  /* devices of the context (may exceed TR_CTX_DEVICES; those are listed) */
	uint32_t devices[TR_CTX_DEVICES]; /* device slot + 1 */
	uint64_t created_index;
	uint64_t created_ns;
	uint64_t released_ns; /* 0 while it lives */
	uint64_t sub_buffers;
	uint64_t failures;
};

/* A thread's counters: written by that thread alone, with plain stores (the tool reads them atomically, as
 * 64-bit words), so the create path pays no locked instruction for them. A release in another thread than
 * the create subtracts from its own shard: a shard's live counts may wrap, their sum over shards is exact. */
struct tr_shard {
	uint64_t seq; /* allocation calls (buffer and sub-buffer creates) */
	uint64_t live_buffers[TR_MAX_CONTEXTS];
	uint64_t live_bytes[TR_MAX_CONTEXTS];
	uint64_t pad[7];
};

struct tr_library {
	uint32_t state; /* 0 free, 1 being written, 2 ready */
	uint32_t kind;  /* L_LOADER, L_RUNTIME */
	char name[TR_LIB_NAME]; /* its path as the dynamic linker has it, NUL-terminated (cut to fit) */
	uint64_t pad;
};

/* An object (the program, a library) that a frame of a call site is in: its load bias, its span in memory,
 * and its path ("" for none; the program's own from /proc/self/exe). kind: O_PROGRAM, L_LOADER, L_RUNTIME,
 * O_SELF (this layer). */
enum { O_PROGRAM = 0, O_SELF = 3 };
struct tr_object {
	uint32_t state; /* 0 free, 1 being written, 2 ready */
	uint32_t kind;
	uint64_t base, lo, hi;
	uint32_t build_id_len; /* its GNU build ID as mapped (0: none): the tool names frames from the file only
	                          where the file on disk has the same one */
	uint8_t build_id[TR_BUILD_ID];
	char name[TR_OBJ_NAME];
};

/* A call site: the program's frames above the OpenCL libraries at a buffer's create, in one context, and
 * what its buffers came to. The figures are sums of weights: a buffer attributed one by one counts 1, a
 * sampled one the buffers it stands for (scaled counts how many did). Written under the ledger lock. */
enum { S_UNWOUND = 1, S_TRUNCATED = 2 }; /* flags: the unwinder reached the program; its stack had more frames */
enum { A_BUFFER = 1, A_IMAGE = 2, A_SVM = 3 }; /* what a site allocates */
struct tr_site {
	uint32_t state; /* 0 free, 1 being written, 2 ready */
	uint32_t context; /* context slot + 1 */
	uint32_t depth;
	uint32_t flags;
	uint64_t hash;
	uint64_t pcs[TR_FRAMES];     /* return addresses, innermost first */
	uint16_t objects[TR_FRAMES]; /* object slot + 1 of each (0: in no object the layer could find) */
	uint64_t attributed, released_attributed, scaled;
	double created, created_bytes, released, released_bytes, live, live_bytes, peak_bytes, first_live, first_live_bytes;
	uint32_t alloc; /* what its calls allocate: A_BUFFER, A_IMAGE, A_SVM */
	uint32_t pad32;
	uint64_t pad[4];
};

struct tr_header {
	uint64_t magic;
	uint32_t version, header_size, record_size, ring_records;
	uint32_t max_contexts, max_devices;
	uint32_t mechanism;      /* M_LAYER | M_PRELOAD bits: who recorded */
	uint32_t owner_pid;      /* the first process that recorded; others only forward */
	uint32_t other_processes;
	uint32_t log_calls;      /* the tool keeps a call log (trace --calls): every command is recorded as it is made */
	uint64_t start_ns;       /* the tool's CLOCK_MONOTONIC_COARSE when it made the channel */
	uint64_t devices_untracked;
	/* A cache line the fast thread writes (offset 64), one the other threads write (128), one the tool
	 * writes (192): no side's writes take another's line away on every create. */
	uint64_t fast_head;      /* fast ring runs ended (the one at fast_head may be open: its count still grows) */
	uint64_t fast_dropped;   /* the fast thread's records that did not fit (the others' are in dropped) */
	uint64_t pad1[6];
	uint64_t shards_used;    /* counter shards handed out to threads other than the fast one */
	uint64_t head;           /* shared ring positions reserved */
	uint64_t creates_failed, enqueues_failed, releases, dropped;
	uint64_t contexts_untracked;
	uint64_t pad2;
	uint64_t tail, fast_tail; /* ring positions the tool has read (the tool writes them) */
	uint64_t pad3[6];
	uint32_t first_state;    /* 0 none, 1 being written, 2 written */
	uint32_t first_context_count;
	uint64_t first_index;    /* allocation calls before the first failure, of every thread */
	uint64_t first_time_ns;  /* CLOCK_MONOTONIC_COARSE */
	uint64_t first_buffer_bytes; /* a failed command's buffer: its size, and whether it was the newest memory */
	uint32_t first_buffer;       /* B_NEWEST, B_OLDER, or 0: not known */
	uint32_t pad4;
	struct tr_record first;
	uint64_t first_live_buffers[TR_MAX_CONTEXTS];
	uint64_t first_live_bytes[TR_MAX_CONTEXTS];
	struct tr_device devices[TR_MAX_DEVICES];
	struct tr_context contexts[TR_MAX_CONTEXTS];
	struct tr_shard shards[TR_SHARDS];
	/* What the layer learnt of the process's OpenCL, off the create path. */
	uint32_t layer_inits;      /* loaders that took the layer's table (clInitLayer) */
	uint32_t loaders_untraced; /* loaders after the first, given their own table back: their calls are not traced */
	uint32_t resolved_by_map;  /* exported entry points RTLD_NEXT did not find, found in the link map */
	uint32_t unresolved;       /* exported calls that found no definition anywhere (see real_entry) */
	uint32_t libraries_more;   /* OpenCL libraries beyond the table */
	uint32_t pad5[11];
	struct tr_library libraries[TR_LIBS];
	/* The ledger: the tool sets ledger, ledger_rate and ledger_whole before the program starts. */
	uint32_t ledger;        /* 1: attribute buffers to the program's call sites */
	uint32_t objects_more;  /* objects beyond the table: their frames are in no object */
	uint64_t ledger_rate;   /* mean bytes between two sampled buffers smaller than ledger_whole; 0: every buffer */
	uint64_t ledger_whole;  /* buffers of this size or more are attributed one by one */
	uint64_t sites_full;    /* buffers not attributed: no site slot was free */
	uint64_t live_full;     /* buffers not attributed: the table of live attributed buffers was full */
	uint64_t stacks_unwound, stacks_cached; /* stacks read by the unwinder, and verified from the cache */
	uint64_t pad6[9];
	struct tr_object objects[TR_OBJECTS];
	struct tr_site sites[TR_SITES];
};

_Static_assert(sizeof(struct tr_record) == 64, "record layout");
_Static_assert(sizeof(struct tr_library) == 256, "library layout");
_Static_assert(sizeof(struct tr_shard) % 64 == 0, "shard lines");
_Static_assert(sizeof(struct tr_site) == 320 && sizeof(struct tr_object) == 256, "ledger layout");
_Static_assert(__builtin_offsetof(struct tr_header, fast_head) == 64 && __builtin_offsetof(struct tr_header, shards_used) == 128 &&
               __builtin_offsetof(struct tr_header, tail) == 192, "header lines");

/* The calls the layer makes itself (queries), from whichever side it was loaded through. Function types are
 * taken from cl.h's own prototypes (__typeof__): the headers' names for them changed between releases
 * (cl_api_clGetContextInfo, then clGetContextInfo_t). */
struct next_fns {
	__typeof__(&clGetContextInfo) get_context_info;
	__typeof__(&clGetDeviceInfo) get_device_info;
	__typeof__(&clGetMemObjectInfo) get_mem_info;
	__typeof__(&clGetCommandQueueInfo) get_queue_info;
	__typeof__(&clSetMemObjectDestructorCallback) set_destructor;
};

static struct tr_header *hdr;
static struct tr_record *ring, *fast_ring;
static uint64_t ring_mask;
static uint32_t my_pid;
static int recording; /* this process owns the channel */
static int layer_active;
static pthread_once_t attach_once = PTHREAD_ONCE_INIT;
static struct next_fns layer_next, preload_next;
/* The ledger's settings, copied from the channel when this process attaches (see the ledger below). */
static int ledger_on;
static uint64_t ledger_rate, ledger_whole;
static cl_icd_dispatch next_dispatch, layer_dispatch;

static uint64_t now_ns(void) {
	struct timespec ts;
	/* The coarse clock (a few ms) costs a few ns where the fine one costs tens, on every create; the tool
	 * reads the same clock. */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The fast thread: the first that records. It is told apart by its thread pointer (each live thread has its
 * own), one instruction, where a thread-local variable in a library loaded with dlopen costs a call on every
 * create. A thread that comes later with the same pointer (the fast one has ended) takes its place: still
 * one writer at a time. */
static uintptr_t fast_thread;
static int fast_state; /* 0 unclaimed, 1 being claimed, 2 claimed */
/* The fast thread's own: the position of its run, the run's slot while it is open (written, its count
 * growing), and how far it may go before reading the tool's tail again. */
static uint64_t fast_pos, fast_room;
static struct tr_record *fast_open;

static inline uintptr_t thread_id(void) {
#if defined(__has_builtin)
#if __has_builtin(__builtin_thread_pointer)
	return (uintptr_t)__builtin_thread_pointer();
#endif
#endif
	return (uintptr_t)pthread_self(); /* a call, where the compiler cannot read the pointer itself */
}

static inline __attribute__((always_inline)) int is_fast(void) {
	int st = __atomic_load_n(&fast_state, __ATOMIC_ACQUIRE);
	if (st == 2) return fast_thread == thread_id();
	int zero = 0;
	if (st != 0 || !__atomic_compare_exchange_n(&fast_state, &zero, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return 0;
	fast_thread = thread_id();
	__atomic_store_n(&fast_state, 2, __ATOMIC_RELEASE);
	return 1;
}

static __thread int my_shard = -1;

/* The newest memory object each thread made: a failed command on it is the loop's "use each buffer as it is
 * made", one on another is a program that made its buffers first and uses them later. (A thread that takes
 * an ended fast thread's place starts with that thread's newest.) */
static cl_mem fast_last_mem;
static __thread cl_mem my_last_mem;

/* shard is the calling thread's counters: the first shard for the fast thread, else one handed out once per
 * thread; shared says they are the last shard's, which the threads beyond the others write together. */
static struct tr_shard *shard(int fast, int *shared) {
	*shared = 0;
	if (fast) return &hdr->shards[0];
	if (my_shard < 0) {
		uint64_t n = 1 + __atomic_fetch_add(&hdr->shards_used, 1, __ATOMIC_RELAXED);
		my_shard = n < TR_SHARDS - 1 ? (int)n : TR_SHARDS - 1;
	}
	*shared = my_shard == TR_SHARDS - 1;
	return &hdr->shards[my_shard];
}

static void bump(uint64_t *p, uint64_t v, int shared) {
	if (shared) __atomic_add_fetch(p, v, __ATOMIC_RELAXED);
	else __atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

/* calls is the allocation calls of every thread so far: exact in a program of one thread (or of threads
 * that take turns); cold paths only, it reads every shard. */
static uint64_t calls(void) {
	uint64_t n = 0;
	for (int i = 0; i < TR_SHARDS; i++) n += __atomic_load_n(&hdr->shards[i].seq, __ATOMIC_RELAXED);
	return n;
}

/* forked_child stops a child that fork made, without exec, from recording: it has the parent's mapping and
 * the parent's fast-thread state, and would write the parent's fast ring beside it. Its calls only forward,
 * and it is counted among the other processes. */
static void forked_child(void) {
	recording = 0;
	__atomic_add_fetch(&hdr->other_processes, 1, __ATOMIC_RELAXED);
}

/* The channel as this process mapped it (NULL: none, or not the tool's), whether or not it records into it:
 * a process that only notes its libraries or a loader's init maps it too. */
static struct tr_header *chan;
static pthread_once_t map_once = PTHREAD_ONCE_INIT;

/* map_channel maps the tool's channel once per process. The descriptor is checked before it is mapped (its
 * first bytes read with pread, which moves nothing): the program may have closed it and opened something else
 * under its number. It is made close-on-exec: a program this one starts does not write into the trace. */
static void map_channel(void) {
	const char *s = getenv("CLMEMPROBE_TRACE_FD");
	if (!s || !*s) return;
	char *end;
	long fd = strtol(s, &end, 10);
	if (*end || fd < 0 || fd > 1 << 20) return;
	struct stat st;
	uint64_t head[2];
	if (fstat((int)fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size < sizeof(struct tr_header) ||
	    pread((int)fd, head, sizeof head, 0) != (ssize_t)sizeof head || head[0] != TR_MAGIC)
		return;
	void *mem = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	if (mem == MAP_FAILED) return;
	struct tr_header *h = mem;
	if (h->magic != TR_MAGIC || h->version != TR_VERSION || h->header_size != sizeof(struct tr_header) ||
	    h->record_size != sizeof(struct tr_record) || h->ring_records == 0 || (h->ring_records & (h->ring_records - 1)) != 0 ||
	    (size_t)st.st_size < sizeof(struct tr_header) + 2 * (size_t)h->ring_records * sizeof(struct tr_record)) {
		munmap(mem, (size_t)st.st_size);
		return;
	}
	fcntl((int)fd, F_SETFD, FD_CLOEXEC);
	__atomic_store_n(&chan, h, __ATOMIC_RELEASE);
}

static struct tr_header *mapped(void) {
	pthread_once(&map_once, map_channel);
	return __atomic_load_n(&chan, __ATOMIC_ACQUIRE);
}

static void note_libraries(struct tr_header *h);

/* attach makes this process the one that records, once per process, where it is the first to record: the
 * first process to make a watched call owns the channel (a program that forks before it uses OpenCL is
 * traced in the child that uses it); others only forward, and are counted. */
static void attach(void) {
	struct tr_header *h = mapped();
	if (!h) return;
	my_pid = (uint32_t)getpid();
	uint32_t none = 0;
	if (!__atomic_compare_exchange_n(&h->owner_pid, &none, my_pid, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) && none != my_pid) {
		__atomic_add_fetch(&h->other_processes, 1, __ATOMIC_RELAXED);
		return;
	}
	fast_ring = (struct tr_record *)((char *)h + sizeof(struct tr_header));
	ring = fast_ring + h->ring_records;
	ring_mask = h->ring_records - 1;
	ledger_on = h->ledger == 1, ledger_rate = h->ledger_rate, ledger_whole = h->ledger_whole;
	hdr = h;
	recording = 1;
	pthread_atfork(NULL, NULL, forked_child);
}

static int attached;

static int channel(void) {
	if (__atomic_load_n(&attached, __ATOMIC_ACQUIRE)) return recording;
	pthread_once(&attach_once, attach);
	__atomic_store_n(&attached, 1, __ATOMIC_RELEASE);
	return recording;
}

/* ---- the process's OpenCL libraries, from the link map (cold paths only) ----
 *
 * Everything here reads the mapped objects' own dynamic symbol tables inside dl_iterate_phdr's callback: no
 * dlopen (which would run a constructor out of order, and wait on the dynamic linker's lock), no lock of
 * the layer's own (a fork, a signal handler that exits, a library constructor calling OpenCL while another
 * thread is in dlopen: none can find it held), no buffer that a large process could outgrow. */

/* dyn_ptr is a dynamic-section address: glibc relocates most in place, some loaders and the vDSO do not. */
static uintptr_t dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) p) {
	return p < info->dlpi_addr ? info->dlpi_addr + p : p;
}

static uint32_t gnu_hash(const char *s) {
	uint32_t h = 5381;
	for (; *s; s++) h = h * 33 + (unsigned char)*s;
	return h;
}

static uint32_t sysv_hash(const char *s) {
	uint32_t h = 0;
	for (; *s; s++) {
		h = (h << 4) + (unsigned char)*s;
		uint32_t g = h & 0xf0000000u;
		if (g) h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

struct dyn_tables {
	const ElfW(Sym) *symtab;
	const char *strtab;
	const uint32_t *gnu, *sysv;
	const ElfW(Half) *versym;
};

static int dyn_tables(const struct dl_phdr_info *info, struct dyn_tables *t) {
	memset(t, 0, sizeof *t);
	const ElfW(Dyn) *dyn = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		uintptr_t p = dyn_ptr(info, dyn->d_un.d_ptr);
		switch (dyn->d_tag) {
		case DT_SYMTAB: t->symtab = (const ElfW(Sym) *)p; break;
		case DT_STRTAB: t->strtab = (const char *)p; break;
		case DT_GNU_HASH: t->gnu = (const uint32_t *)p; break;
		case DT_HASH: t->sysv = (const uint32_t *)p; break;
		case DT_VERSYM: t->versym = (const ElfW(Half) *)p; break;
		}
	}
	return t->symtab && t->strtab && (t->gnu || t->sysv);
}

/* defined_here is symbol i when it is a function or object the object itself defines, under its default
 * version (a hidden version, clGetExtensionFunctionAddress@OPENCL_1.0 beside @@OPENCL_1.2, is not what a
 * lookup by name finds), and not an IFUNC (whose address is its resolver's). */
static void *defined_here(const struct dl_phdr_info *info, const struct dyn_tables *t, uint32_t i, const char *sym) {
	const ElfW(Sym) *e = &t->symtab[i];
	int type = ELF64_ST_TYPE(e->st_info), bind = ELF64_ST_BIND(e->st_info);
	if (e->st_shndx == SHN_UNDEF || (type != STT_FUNC && type != STT_OBJECT) || (bind != STB_GLOBAL && bind != STB_WEAK) ||
	    (t->versym && (t->versym[i] & 0x8000)) || strcmp(t->strtab + e->st_name, sym) != 0)
		return NULL;
	return (void *)(info->dlpi_addr + e->st_value);
}

/* elf_symbol is where the object of info defines sym itself (not a reference to another's), or NULL: the
 * lookup the dynamic linker makes in one object, by its GNU or SysV hash table. */
static void *elf_symbol(const struct dl_phdr_info *info, const char *sym) {
	struct dyn_tables t;
	if (!dyn_tables(info, &t)) return NULL;
	if (t.gnu) {
		uint32_t nbuckets = t.gnu[0], symoffset = t.gnu[1], bloom_size = t.gnu[2], shift = t.gnu[3];
		if (!nbuckets || !bloom_size) return NULL;
		const ElfW(Addr) *bloom = (const ElfW(Addr) *)&t.gnu[4];
		const uint32_t *buckets = (const uint32_t *)&bloom[bloom_size], *chain = &buckets[nbuckets];
		const unsigned bits = sizeof(ElfW(Addr)) * 8;
		uint32_t h = gnu_hash(sym);
		ElfW(Addr) word = bloom[(h / bits) % bloom_size], mask = ((ElfW(Addr))1 << (h % bits)) | ((ElfW(Addr))1 << ((h >> shift) % bits));
		if ((word & mask) != mask) return NULL;
		for (uint32_t i = buckets[h % nbuckets]; i >= symoffset; i++) {
			uint32_t h2 = chain[i - symoffset];
			void *fn = (h | 1) == (h2 | 1) ? defined_here(info, &t, i, sym) : NULL;
			if (fn) return fn;
			if (h2 & 1) break;
		}
		return NULL;
	}
	uint32_t nbucket = t.sysv[0];
	const uint32_t *bucket = &t.sysv[2], *chain = &bucket[nbucket];
	if (!nbucket) return NULL;
	for (uint32_t i = bucket[sysv_hash(sym) % nbucket]; i != 0; i = chain[i]) {
		void *fn = defined_here(info, &t, i, sym);
		if (fn) return fn;
	}
	return NULL;
}

/* is_self says whether info is this library: its own exports are never the real entry points. */
static int is_self(const struct dl_phdr_info *info) {
	uintptr_t me = (uintptr_t)&is_self;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && me >= lo && me < lo + ph->p_memsz) return 1;
	}
	return 0;
}

/* library_kind is what an object is to OpenCL: a loader (clGetPlatformIDs), a runtime (an ICD: the ICD
 * entry, or only clGetExtensionFunctionAddress, through which loaders find the ICD entry of PoCL, say), or
 * neither (0). A runtime that exports the whole API besides (Intel's) is a runtime. */
static uint32_t library_kind(const struct dl_phdr_info *info) {
	if (elf_symbol(info, "clIcdGetPlatformIDsKHR")) return L_RUNTIME;
	if (elf_symbol(info, "clGetPlatformIDs")) return L_LOADER;
	return elf_symbol(info, "clGetExtensionFunctionAddress") ? L_RUNTIME : 0;
}

static void add_library(struct tr_header *h, const char *path, uint32_t kind) {
	for (uint32_t i = 0; i < TR_LIBS; i++) {
		struct tr_library *l = &h->libraries[i];
		uint32_t st = __atomic_load_n(&l->state, __ATOMIC_ACQUIRE);
		if (st == 2 && strncmp(l->name, path, TR_LIB_NAME - 1) == 0) return;
		if (st != 0) continue;
		uint32_t zero = 0;
		if (!__atomic_compare_exchange_n(&l->state, &zero, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			i--; /* taken under us: look at it again */
			continue;
		}
		l->kind = kind;
		snprintf(l->name, TR_LIB_NAME, "%s", path);
		__atomic_store_n(&l->state, 2, __ATOMIC_RELEASE);
		return;
	}
	__atomic_add_fetch(&h->libraries_more, 1, __ATOMIC_RELAXED);
}

static int note_one(struct dl_phdr_info *info, size_t size, void *data) {
	(void)size;
	if (!info->dlpi_name || !*info->dlpi_name || is_self(info)) return 0; /* the program itself, or this library */
	uint32_t kind = library_kind(info);
	if (kind) add_library(data, info->dlpi_name, kind);
	return 0;
}

/* note_libraries writes the OpenCL libraries this process has mapped into the channel's table. */
static void note_libraries(struct tr_header *h) {
	if (h) dl_iterate_phdr(note_one, h);
}

/* At the end of every process that had the layer, its libraries are noted: one that mapped an OpenCL library
 * whose calls never reached the layer is seen by the tool all the same. */
__attribute__((destructor)) static void noted_at_exit(void) {
	note_libraries(mapped());
}

struct entry_search {
	const char *sym;
	void *loader, *runtime; /* the first loader's definition, the first runtime's */
	const char *loader_name;
};

static int search_one(struct dl_phdr_info *info, size_t size, void *data) {
	(void)size;
	struct entry_search *e = data;
	if (!info->dlpi_name || !*info->dlpi_name || is_self(info)) return 0;
	void *def = elf_symbol(info, e->sym);
	if (!def) return 0;
	if (library_kind(info) == L_LOADER) {
		e->loader = def, e->loader_name = info->dlpi_name;
		return 1;
	}
	if (!e->runtime) e->runtime = def;
	return 0;
}

/* pin keeps the loader whose definition real_entry hands out mapped for the life of the process: the
 * pointer is kept, and the plugin that brought the loader may be closed and opened again. The object is
 * mapped and initialised (a call into it reached here), so this dlopen loads and runs nothing. */
static void pin(const char *path) {
	void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
	(void)h; /* the reference is the pin: never closed */
}

/* real_entry is where an exported call goes on when the layer is preloaded: the next definition after this
 * library (RTLD_NEXT), else, where that finds none (the program's OpenCL library is in a local scope: an
 * extension module, a JNI library, a plugin opened with RTLD_LOCAL, whose calls the global scope still sends
 * here), the definition of a loader mapped in the process (pinned), else of a runtime mapped in it, else of
 * the loader the program would have linked (libOpenCL.so.1, opened here: the runtime's own answer rather than
 * one made up). NULL only where none of those exists: no OpenCL library is in the process or on the library
 * path, which a program can only meet by looking the entry up in the global scope itself. */
static void *real_entry(const char *sym) {
	void *fn = dlsym(RTLD_NEXT, sym); /* the objects after this one: never this library's own */
	if (fn) return fn;
	struct entry_search e = {.sym = sym};
	dl_iterate_phdr(search_one, &e);
	fn = e.loader ? e.loader : e.runtime;
	if (e.loader) pin(e.loader_name);
	if (!fn) {
		void *loader = dlopen("libOpenCL.so.1", RTLD_LAZY | RTLD_LOCAL);
		if (loader) fn = dlsym(loader, sym);
	}
	struct tr_header *h = mapped();
	if (h) __atomic_add_fetch(fn ? &h->resolved_by_map : &h->unresolved, 1, __ATOMIC_RELAXED);
	return fn;
}

/* put writes a record into its reserved slot, with its count, and commits it. The slots ahead were last read
 * by the tool, on another core: fetching them for writing now, while the runtime works, keeps that transfer
 * off a later call. */
static void put(struct tr_record *ring_of, uint64_t pos, const struct tr_record *r) {
	struct tr_record *slot = &ring_of[pos & ring_mask];
	__atomic_store_n(&slot->count, 1, __ATOMIC_RELAXED); /* a thread of the shared ring may read an older lap's */
	slot->size = r->size;
	slot->flags = r->flags;
	slot->after = r->after;
	slot->after_count = r->after_count;
	slot->context = r->context;
	slot->kind = r->kind;
	slot->code = r->code;
	slot->aux = r->aux;
	__atomic_store_n(&slot->commit, pos + 1, __ATOMIC_RELEASE);
	__builtin_prefetch(&ring_of[(pos + PREFETCH_AHEAD) & ring_mask], 1, 3);
}

/* counted says whether the fast thread's call continues its open run, and counts it there: the same call,
 * context, size, flags, result and aux (a context is never a run: each is its own). One more in the count is
 * a store into a line the thread already holds. */
static inline __attribute__((always_inline)) int counted(uint32_t kind, uint32_t context, int32_t code, uint64_t size,
                                                         uint64_t flags, uint32_t aux) {
	struct tr_record *slot = fast_open;
	if (!slot || slot->kind != kind || kind == K_CONTEXT || slot->context != context || slot->code != code ||
	    slot->size != size || slot->flags != flags || slot->aux != aux)
		return 0;
	/* Release: whoever reads this count sees every record this thread saw committed before the call. */
	__atomic_store_n(&slot->count, slot->count + 1, __ATOMIC_RELEASE);
	return 1;
}

/* emit_fast is emit for the fast thread, the fast ring's only writer: no locked instruction. A call like the
 * last is counted in the open run; a different one ends the run (the head moves past it) and opens the next. */
static inline __attribute__((always_inline)) void emit_fast(const struct tr_record *r) {
	if (counted(r->kind, r->context, r->code, r->size, r->flags, r->aux)) return;
	if (fast_open) {
		fast_pos++;
		fast_open = NULL;
		__atomic_store_n(&hdr->fast_head, fast_pos, __ATOMIC_RELEASE);
	}
	if (fast_pos >= fast_room) {
		fast_room = __atomic_load_n(&hdr->fast_tail, __ATOMIC_ACQUIRE) + ring_mask + 1;
		if (fast_pos >= fast_room) {
			__atomic_store_n(&hdr->fast_dropped, __atomic_load_n(&hdr->fast_dropped, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
			return;
		}
	}
	put(fast_ring, fast_pos, r);
	fast_open = &fast_ring[fast_pos & ring_mask];
}

/* emit_as puts a record into the calling thread's ring, or counts it dropped when the tool has not read far
 * enough. Inlined into the create path, the fast thread's run is compared with the call's own values. */
static inline __attribute__((always_inline)) void emit_as(int fast, struct tr_record *r) {
	if (fast) {
		emit_fast(r);
		return;
	}
	/* What the fast thread had written when this thread's call returned, read before the place in the ring
	 * is taken (so a record later in the ring never saw less of a call that came after an earlier one): the
	 * tool puts this record after those calls and before any the fast thread makes later, so a record one
	 * thread made after seeing another's result always comes after it. The open run's slot may hold an
	 * older lap's record, or be half written: its count is taken only where its commit says it is that run's. */
	uint64_t head = __atomic_load_n(&hdr->fast_head, __ATOMIC_ACQUIRE);
	const struct tr_record *open = &fast_ring[head & ring_mask];
	r->after = head;
	r->after_count = __atomic_load_n(&open->commit, __ATOMIC_ACQUIRE) == head + 1 ? __atomic_load_n(&open->count, __ATOMIC_ACQUIRE) : 0;
	uint64_t pos = __atomic_load_n(&hdr->head, __ATOMIC_RELAXED);
	for (;;) {
		if (pos - __atomic_load_n(&hdr->tail, __ATOMIC_ACQUIRE) > ring_mask) {
			__atomic_add_fetch(&hdr->dropped, 1, __ATOMIC_RELAXED);
			return;
		}
		if (__atomic_compare_exchange_n(&hdr->head, &pos, pos + 1, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) break;
	}
	put(ring, pos, r);
}

static void emit(struct tr_record *r) { emit_as(is_fast(), r); }

/* has says whether an object's runtime implements a call: objects start with their runtime's dispatch table
 * (the ICD rule), and a runtime may leave entries empty, which the loader would call anyway. */
#define has(obj, entry) ((obj) && (*(cl_icd_dispatch *const *)(obj)) && (*(cl_icd_dispatch *const *)(obj))->entry)

/* has_extension says whether the device lists ext; an extension string longer than the buffer (on the
 * stack: the layer allocates nothing) counts as not listing it. */
static int has_extension(const struct next_fns *n, cl_device_id d, const char *ext) {
	char exts[8192];
	size_t got = 0;
	if (n->get_device_info(d, CL_DEVICE_EXTENSIONS, sizeof exts - 1, exts, &got) != CL_SUCCESS || got >= sizeof exts) return 0;
	exts[got] = 0;
	size_t len = strlen(ext);
	for (const char *p = strstr(exts, ext); p; p = strstr(p + 1, ext))
		if ((p == exts || p[-1] == ' ') && (p[len] == ' ' || p[len] == 0)) return 1;
	return 0;
}

/* pci_bus_id writes the device's PCI address as the probe's binding does (probe/internal/cl/device.go):
 * cl_khr_pci_bus_info, else NVIDIA's and AMD's vendor queries, each only where the device lists its
 * extension (a vendor's parameter number means nothing to another runtime); "" when none answers. Asked
 * once per device, when its slot is made, never on the create path. */
static void pci_bus_id(const struct next_fns *n, cl_device_id d, char out[TR_PCI]) {
	out[0] = 0;
	if (has_extension(n, d, "cl_khr_pci_bus_info")) {
		cl_uint b[4] = {0}; /* cl_device_pci_bus_info_khr: domain, bus, device, function */
		if (n->get_device_info(d, 0x410F, sizeof b, b, NULL) == CL_SUCCESS) {
			snprintf(out, TR_PCI, "%04x:%02x:%02x.%x", b[0] & 0xffff, b[1] & 0xff, b[2] & 0x1f, b[3] & 7);
			return;
		}
	}
	if (has_extension(n, d, "cl_nv_device_attribute_query")) {
		cl_uint bus = 0, slot = 0, domain = 0;
		if (n->get_device_info(d, 0x4008, sizeof bus, &bus, NULL) == CL_SUCCESS &&
		    n->get_device_info(d, 0x4009, sizeof slot, &slot, NULL) == CL_SUCCESS) {
			n->get_device_info(d, 0x400A, sizeof domain, &domain, NULL);
			/* NVIDIA packs device and function into the slot id: device = slot >> 3, function = slot & 7. */
			snprintf(out, TR_PCI, "%04x:%02x:%02x.%x", domain & 0xffff, bus & 0xff, (slot >> 3) & 0x1f, slot & 7);
			return;
		}
	}
	if (has_extension(n, d, "cl_amd_device_attribute_query")) {
		unsigned char t[24] = {0}; /* cl_device_topology_amd: type at 0, bus, device, function at 21..23 */
		if (n->get_device_info(d, 0x4037, sizeof t, t, NULL) == CL_SUCCESS && t[0] == 1)
			snprintf(out, TR_PCI, "0000:%02x:%02x.%x", t[21], t[22] & 0x1f, t[23] & 7);
	}
}

/* device_slot finds or adds a device, with its name and memory sizes read once. */
static uint32_t device_slot(const struct next_fns *n, cl_device_id d) {
	for (uint32_t i = 0; i < TR_MAX_DEVICES; i++) {
		struct tr_device *s = &hdr->devices[i];
		uint32_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
		if (st == 2 && s->handle == (uint64_t)(uintptr_t)d) return i + 1;
		if (st != 0) continue;
		uint32_t zero = 0;
		if (!__atomic_compare_exchange_n(&s->state, &zero, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			i--; /* someone took it: look at it again */
			continue;
		}
		s->handle = (uint64_t)(uintptr_t)d;
		if (n->get_device_info && has(d, clGetDeviceInfo)) {
			cl_device_type t = 0;
			cl_ulong g = 0, m = 0;
			n->get_device_info(d, CL_DEVICE_TYPE, sizeof t, &t, NULL);
			n->get_device_info(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof g, &g, NULL);
			n->get_device_info(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof m, &m, NULL);
			s->type = t, s->global_mem = g, s->max_alloc = m;
			char name[TR_NAME] = {0};
			if (n->get_device_info(d, CL_DEVICE_NAME, sizeof name - 1, name, NULL) == CL_SUCCESS) memcpy(s->name, name, TR_NAME);
			pci_bus_id(n, d, s->pci_bus_id);
		}
		__atomic_store_n(&s->state, 2, __ATOMIC_RELEASE);
		return i + 1;
	}
	__atomic_add_fetch(&hdr->devices_untracked, 1, __ATOMIC_RELAXED);
	return 0;
}

/* find_context is the live slot of a context handle, or 0. A released context's handle may be reused by a
 * new context: the released slot is skipped. */
static uint32_t find_context(cl_context c) {
	for (uint32_t i = 0; i < TR_MAX_CONTEXTS; i++) {
		struct tr_context *s = &hdr->contexts[i];
		uint32_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
		if (st == 0) return 0;
		if (st == 2 && s->handle == (uint64_t)(uintptr_t)c && !__atomic_load_n(&s->released_ns, __ATOMIC_RELAXED)) return i + 1;
	}
	return 0;
}

/* add_context claims the next free slot for a new context and lists its devices. */
static uint32_t add_context(const struct next_fns *n, cl_context c, cl_uint ndev, const cl_device_id *devs) {
	for (uint32_t i = 0; i < TR_MAX_CONTEXTS; i++) {
		struct tr_context *s = &hdr->contexts[i];
		uint32_t zero = 0;
		if (!__atomic_compare_exchange_n(&s->state, &zero, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) continue;
		s->handle = (uint64_t)(uintptr_t)c;
		s->ndev = ndev;
		for (cl_uint d = 0; d < ndev && d < TR_CTX_DEVICES; d++) s->devices[d] = device_slot(n, devs[d]);
		s->created_index = calls();
		s->created_ns = now_ns();
		__atomic_store_n(&s->state, 2, __ATOMIC_RELEASE);
		return i + 1;
	}
	__atomic_add_fetch(&hdr->contexts_untracked, 1, __ATOMIC_RELAXED);
	return 0;
}

/* context_devices registers a context from its own device list: for clCreateContextFromType, and for a
 * context the layer first meets at a buffer (made before the channel was attached). */
/* A context record's flags say which call made it: 0 clCreateContext, CTX_FROM_TYPE clCreateContextFromType. */
#define CTX_FROM_TYPE 1

/* register_context tracks a context; kind_record 1 records its create, 2 its create by clCreateContextFromType. */
static uint32_t register_context(const struct next_fns *n, cl_context c, int kind_record) {
	cl_device_id devs[TR_CTX_DEVICES];
	cl_uint ndev = 0;
	if (n->get_context_info && has(c, clGetContextInfo)) {
		size_t bytes = 0;
		if (n->get_context_info(c, CL_CONTEXT_DEVICES, 0, NULL, &bytes) == CL_SUCCESS) {
			ndev = (cl_uint)(bytes / sizeof(cl_device_id));
			if (bytes > sizeof devs) bytes = sizeof devs;
			if (n->get_context_info(c, CL_CONTEXT_DEVICES, bytes, devs, NULL) != CL_SUCCESS) ndev = 0;
		}
	}
	uint32_t slot = add_context(n, c, ndev, devs);
	if (kind_record) {
		struct tr_record r = {.context = slot, .kind = K_CONTEXT, .aux = ndev, .flags = kind_record == 2 ? CTX_FROM_TYPE : 0};
		emit(&r);
	}
	return slot;
}

static uint32_t context_of(const struct next_fns *n, cl_context c) {
	uint32_t slot = find_context(c);
	return slot || !c ? slot : register_context(n, c, 1);
}

/* fast_context_of is context_of for the fast thread, which keeps the last context it met and its slot: a
 * loop over one context then reads one word of it (whether it was released) instead of the slots. */
static cl_context fast_ctx;
static uint32_t fast_ctx_slot;
static uint32_t fast_context_of(const struct next_fns *n, cl_context c) {
	if (c && c == fast_ctx && !__atomic_load_n(&hdr->contexts[fast_ctx_slot - 1].released_ns, __ATOMIC_RELAXED)) return fast_ctx_slot;
	uint32_t slot = context_of(n, c);
	if (slot) fast_ctx = c, fast_ctx_slot = slot;
	return slot;
}

/* ---- the ledger: each buffer's call site in the program (header.ledger) ----
 *
 * A buffer of ledger_whole bytes or more is attributed one by one; a smaller one is sampled by bytes, as Go's
 * and tcmalloc's heap profilers sample: each thread counts down an interval drawn from an exponential
 * distribution of mean ledger_rate bytes, and the buffer that crosses it is attributed, standing for
 * 1 / (1 - e^(-size/rate)) buffers of its size (the chance a buffer of that size is sampled). A loop of small
 * buffers pays one subtraction per create; the contexts' own counters stay exact whatever is sampled.
 *
 * A stack is read once by the unwinder (libgcc's, from the frames' unwind tables: no frame pointers needed)
 * and kept in a cache keyed by the layer's entry frame (its return address, its CFA and the context): a
 * later create from the same place is known by reading the return addresses where the unwinder found them
 * and comparing them with the kept ones, a few loads. Every frame whose stack frame has a fixed size at its
 * call (the compilers' usual code) is then the same frame; the cache is the fast thread's, whose stack it is.
 * Other threads read their stacks whole each time. */

#define UNWIND_MAX 64
#define VERIFY_MAX (TR_FRAMES + 8) /* slots verified per cached stack: the kept frames and those skipped below them */
#define STACK_CACHE 256
#define LIVE_SLOTS (1u << 18) /* attributed buffers live at once: 256 Ki (an 80 GB device holds 80,550 of 1 MiB) */

/* The frame of the layer's entry point a create came through: its return address and canonical frame
 * address, taken there (the hooks may be inlined or not). */
struct entry {
	uintptr_t ra, cfa;
};
#define ENTRY_HERE ((struct entry){(uintptr_t)__builtin_return_address(0), (uintptr_t)__builtin_dwarf_cfa()})

/* One lock for the sites' figures and the table of live attributed buffers: held for a few stores, never
 * across a call into the runtime, the unwinder or the dynamic linker. */
static int ledger_word;
static void ledger_lock(void) {
	while (__atomic_exchange_n(&ledger_word, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&ledger_word, __ATOMIC_RELAXED)) {
		}
}
static void ledger_unlock(void) { __atomic_store_n(&ledger_word, 0, __ATOMIC_RELEASE); }

/* xorshift64, seeded once per thread: the sampling intervals need no more than that. */
static uint64_t rng_next(uint64_t *s) {
	if (!*s) *s = (now_ns() ^ ((uint64_t)(uintptr_t)s << 17) ^ ((uint64_t)getpid() << 40)) | 1;
	uint64_t x = *s;
	x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return *s = x;
}

static int64_t draw_interval(uint64_t *s) {
	double u = (double)((rng_next(s) >> 11) + 1) * (1.0 / 9007199254740992.0); /* (0, 1] */
	return (int64_t)(-log(u) * (double)ledger_rate) + 1;
}

static uint64_t fast_rng;
static int64_t fast_left = -1; /* -1: no interval drawn yet */
static __thread uint64_t my_rng;
static __thread int64_t my_left = -1;

/* weight_of is the allocations an attributed one of size bytes stands for: 1 from ledger_whole up (or with
 * every allocation attributed), else one over the chance that an allocation of that size is sampled. */
static double weight_of(uint64_t size) {
	if (size >= ledger_whole || !ledger_rate) return 1;
	return 1.0 / (1.0 - exp(-(double)size / (double)ledger_rate));
}

/* ledger_weight is the allocations an attributed one stands for, or 0 where this one is not attributed. */
static inline __attribute__((always_inline)) double ledger_weight(int fast, size_t size) {
	if (size >= ledger_whole || !ledger_rate) return 1;
	int64_t *left = fast ? &fast_left : &my_left;
	uint64_t *rng = fast ? &fast_rng : &my_rng;
	if (*left < 0) *left = draw_interval(rng);
	*left -= (int64_t)size;
	if (*left > 0) return 0;
	*left = draw_interval(rng);
	return weight_of(size);
}

/* ---- objects: which object a frame is in ---- */

static uint16_t object_at(uintptr_t pc) {
	for (uint32_t i = 0; i < TR_OBJECTS; i++) {
		struct tr_object *o = &hdr->objects[i];
		uint32_t st = __atomic_load_n(&o->state, __ATOMIC_ACQUIRE);
		if (st == 0) return 0;
		if (st == 2 && pc >= o->lo && pc < o->hi) return (uint16_t)(i + 1);
	}
	return 0;
}

/* mapped_build_id copies an object's GNU build ID from its notes as mapped (NT_GNU_BUILD_ID); 0: none. */
static uint32_t mapped_build_id(const struct dl_phdr_info *info, uint8_t out[TR_BUILD_ID]) {
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE) continue;
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
		while (p + 12 <= end) {
			const uint32_t *n = (const uint32_t *)p;
			size_t name = (n[0] + 3u) & ~3u, desc = (n[1] + 3u) & ~3u;
			if ((size_t)(end - p) < 12 + name + desc) break;
			if (n[2] == 3 && n[0] == 4 && memcmp(p + 12, "GNU", 4) == 0 && n[1] > 0 && n[1] <= TR_BUILD_ID) {
				memcpy(out, p + 12 + name, n[1]);
				return n[1];
			}
			p += 12 + name + desc;
		}
	}
	return 0;
}

static uint16_t add_object(const struct dl_phdr_info *info, uintptr_t lo, uintptr_t hi) {
	for (uint32_t i = 0; i < TR_OBJECTS; i++) {
		struct tr_object *o = &hdr->objects[i];
		uint32_t zero = 0;
		if (!__atomic_compare_exchange_n(&o->state, &zero, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			if (zero == 2 && o->lo == lo && o->hi == hi) return (uint16_t)(i + 1);
			continue;
		}
		o->base = info->dlpi_addr, o->lo = lo, o->hi = hi;
		o->kind = is_self(info) ? O_SELF : library_kind(info);
		o->build_id_len = mapped_build_id(info, o->build_id);
		if (info->dlpi_name && *info->dlpi_name) {
			snprintf(o->name, TR_OBJ_NAME, "%s", info->dlpi_name);
		} else {
			ssize_t n = readlink("/proc/self/exe", o->name, TR_OBJ_NAME - 1);
			o->name[n > 0 ? n : 0] = 0;
		}
		__atomic_store_n(&o->state, 2, __ATOMIC_RELEASE);
		return (uint16_t)(i + 1);
	}
	__atomic_add_fetch(&hdr->objects_more, 1, __ATOMIC_RELAXED);
	return 0;
}

struct object_search {
	const uintptr_t *pc;
	uint16_t *obj;
	int n;
};

/* find_objects is dl_iterate_phdr's callback: the object of every frame not found yet, added to the table. */
static int find_objects(struct dl_phdr_info *info, size_t size, void *data) {
	(void)size;
	struct object_search *s = data;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD) continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		lo = a < lo ? a : lo, hi = a + ph->p_memsz > hi ? a + ph->p_memsz : hi;
	}
	uint16_t slot = 0;
	for (int k = 0; k < s->n; k++) {
		if (s->obj[k] || s->pc[k] - 1 < lo || s->pc[k] - 1 >= hi) continue;
		if (!slot) slot = add_object(info, lo, hi);
		s->obj[k] = slot;
	}
	return 0;
}

/* objects_of finds the object of each return address: from the table, else from the link map (a cold path:
 * once per object). */
static void objects_of(const uintptr_t *pc, uint16_t *obj, int n) {
	int missing = 0;
	for (int k = 0; k < n; k++) missing |= !(obj[k] = object_at(pc[k] - 1));
	if (missing) {
		struct object_search s = {pc, obj, n};
		dl_iterate_phdr(find_objects, &s);
	}
}

/* ---- stacks ---- */

/* A stack as the unwinder reads it: each frame's return address, and the CFA its context holds, which is the
 * CFA of the frame below it (the callee's): the stack pointer of this frame at its call, plus the return
 * address's word. */
struct unwound {
	uintptr_t pc[UNWIND_MAX], cfa[UNWIND_MAX];
	int n;
};

static _Unwind_Reason_Code unwind_one(struct _Unwind_Context *c, void *arg) {
	struct unwound *u = arg;
	if (u->n >= UNWIND_MAX || !_Unwind_GetIP(c)) return _URC_END_OF_STACK;
	u->pc[u->n] = (uintptr_t)_Unwind_GetIP(c);
	u->cfa[u->n] = (uintptr_t)_Unwind_GetCFA(c);
	u->n++;
	return _URC_NO_REASON;
}

/* A stack as read: the program's frames kept (after the OpenCL libraries' and this layer's below them) and,
 * for the cache, where each return address from the entry frame up was found. */
struct stack {
	uint32_t depth, flags;
	uint64_t pcs[TR_FRAMES];
	uint16_t objects[TR_FRAMES];
	int nslots; /* 0: not cacheable */
	intptr_t slot_off[VERIFY_MAX];
	uintptr_t slot_val[VERIFY_MAX];
};

static int is_opencl_object(uint16_t obj) {
	if (!obj) return 0;
	uint32_t kind = hdr->objects[obj - 1].kind;
	return kind == O_SELF || kind == L_LOADER || kind == L_RUNTIME;
}

/* read_stack unwinds from here, finds the entry frame by its CFA, skips the OpenCL libraries' frames above it
 * and keeps the program's. A stack the unwinder cannot take past the entry frame keeps no frame. */
static void read_stack(const struct entry *at, struct stack *st) {
	struct unwound u;
	u.n = 0;
	memset(st, 0, sizeof *st);
	_Unwind_Backtrace(unwind_one, &u);
	__atomic_add_fetch(&hdr->stacks_unwound, 1, __ATOMIC_RELAXED);
	int first = 0; /* the entry's caller: its context holds the entry's CFA */
	while (first < u.n && u.cfa[first] != at->cfa) first++;
	if (first >= u.n || u.pc[first] != at->ra) return;
	int n = u.n - first;
	uint16_t obj[UNWIND_MAX];
	objects_of(&u.pc[first], obj, n);
	int skip = 0;
	while (skip < n && is_opencl_object(obj[skip])) skip++;
	int keep = n - skip < TR_FRAMES ? n - skip : TR_FRAMES;
	st->flags = S_UNWOUND | (n - skip > TR_FRAMES ? S_TRUNCATED : 0);
	st->depth = (uint32_t)keep;
	for (int k = 0; k < keep; k++) st->pcs[k] = u.pc[first + skip + k], st->objects[k] = obj[skip + k];
	/* A frame's return address sits just below the CFA of the frame it called (x86-64's call pushes it there);
	 * where that does not hold, the stack is not cached and is read whole each time. */
	int slots = skip + keep;
	if (slots > VERIFY_MAX) return;
	for (int k = 0; k < slots; k++) {
		uintptr_t where = u.cfa[first + k] - sizeof(uintptr_t);
		if (*(const uintptr_t *)where != u.pc[first + k]) return;
		st->slot_off[k] = (intptr_t)(where - at->cfa), st->slot_val[k] = u.pc[first + k];
	}
	st->nslots = slots;
}

/* ---- sites ---- */

static uint64_t site_hash(const struct stack *st, uint32_t context, uint32_t alloc) {
	uint64_t h = 1469598103934665603ull ^ context ^ ((uint64_t)alloc << 32);
	for (uint32_t k = 0; k < st->depth; k++) h = (h ^ st->pcs[k]) * 1099511628211ull;
	return h | 1;
}

/* site_of is the site of a stack in a context, for what it allocates: found, or added (0: the table is full). */
static uint32_t site_of(const struct stack *st, uint32_t context, uint32_t alloc) {
	uint64_t h = site_hash(st, context, alloc);
	for (uint32_t n = 0, i = (uint32_t)(h % TR_SITES); n < TR_SITES; n++, i = (i + 1) % TR_SITES) {
		struct tr_site *s = &hdr->sites[i];
		uint32_t state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
		if (state == 0) {
			uint32_t zero = 0;
			if (!__atomic_compare_exchange_n(&s->state, &zero, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				state = zero;
			} else {
				s->hash = h, s->context = context, s->depth = st->depth, s->flags = st->flags, s->alloc = alloc;
				memcpy(s->pcs, st->pcs, sizeof s->pcs);
				memcpy(s->objects, st->objects, sizeof s->objects);
				__atomic_store_n(&s->state, 2, __ATOMIC_RELEASE);
				return i + 1;
			}
		}
		while (state == 1) state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE); /* another thread writes it */
		if (s->hash == h && s->context == context && s->alloc == alloc && s->depth == st->depth &&
		    memcmp(s->pcs, st->pcs, st->depth * sizeof(uint64_t)) == 0)
			return i + 1;
	}
	return 0;
}

/* The fast thread's cache of stacks it has read, by entry frame and context. */
struct cached_stack {
	uintptr_t ra, cfa;
	uint32_t context, site; /* site slot + 1; 0: free */
	int nslots;
	intptr_t slot_off[VERIFY_MAX];
	uintptr_t slot_val[VERIFY_MAX];
};
static struct cached_stack stack_cache[STACK_CACHE];

static struct cached_stack *cache_slot(const struct entry *at, uint32_t context) {
	uint64_t k = (at->ra ^ (at->cfa << 7) ^ ((uint64_t)context << 29)) * 0x9E3779B97F4A7C15ull;
	return &stack_cache[k >> 56];
}

/* cached_site is the site a cached stack names, where every return address it kept is where it was. */
static uint32_t cached_site(const struct cached_stack *c, const struct entry *at, uint32_t context) {
	if (!c->site || c->ra != at->ra || c->cfa != at->cfa || c->context != context) return 0;
	for (int k = 0; k < c->nslots; k++)
		if (*(const uintptr_t *)(at->cfa + c->slot_off[k]) != c->slot_val[k]) return 0;
	return c->site;
}

/* site_here is the site of the create in progress. A cached stack's site allocates what the cached call did:
 * its entry frame's return address is the place of one call. */
static uint32_t site_here(int fast, const struct entry *at, uint32_t context, uint32_t alloc) {
	struct cached_stack *c = fast ? cache_slot(at, context) : NULL;
	uint32_t site = c ? cached_site(c, at, context) : 0;
	if (site) {
		__atomic_store_n(&hdr->stacks_cached, hdr->stacks_cached + 1, __ATOMIC_RELAXED);
		return site;
	}
	struct stack st;
	read_stack(at, &st);
	site = site_of(&st, context, alloc);
	if (c && site && st.nslots) {
		c->ra = at->ra, c->cfa = at->cfa, c->context = context, c->site = site, c->nslots = st.nslots;
		memcpy(c->slot_off, st.slot_off, sizeof c->slot_off);
		memcpy(c->slot_val, st.slot_val, sizeof c->slot_val);
	}
	return site;
}

/* ---- the live attributed buffers: open addressing by handle, deletion by backward shift ---- */

/* 16 bytes: the table's pages are touched as it fills, and a first touch costs more than the lookups. The
 * size and the site share a word (a site slot needs 11 bits); the weight follows from the size. */
#define SITE_BITS 11
_Static_assert(TR_SITES < (1 << SITE_BITS), "site bits");
struct live_buffer {
	uint64_t mem;       /* the handle (cl_mem) or the SVM pointer */
	uint64_t size_site; /* size << SITE_BITS | site slot + 1 */
};
/* Mapped at the first attributed buffer, not in the layer's own data: a program traced with no ledger, or
 * one that attributes none, has not a byte more of address space (a program under ulimit -v near its limit
 * stays as it was). */
static struct live_buffer *live_table;
static int live_unmapped; /* the mapping failed: no buffer is attributed */

static struct live_buffer *live_table_mapped(void) {
	struct live_buffer *t = __atomic_load_n(&live_table, __ATOMIC_ACQUIRE);
	if (t || __atomic_load_n(&live_unmapped, __ATOMIC_RELAXED)) return t;
	size_t bytes = LIVE_SLOTS * sizeof(struct live_buffer);
	void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		__atomic_store_n(&live_unmapped, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	struct live_buffer *none = NULL;
	if (!__atomic_compare_exchange_n(&live_table, &none, (struct live_buffer *)m, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		munmap(m, bytes); /* another thread mapped it first */
		return none;
	}
	return m;
}
static uint32_t live_count; /* in the table and pending */

/* A buffer just made waits among the pending until PENDING have come (or a release looks one up): they go
 * into the table together, their slots fetched first, so that their cache misses overlap instead of adding
 * up on every create (a slot of the 4 MiB table is a miss: 80% of the layer's time per create of 1 MiB on
 * PoCL went to that one load). */
#define PENDING 32
static struct live_buffer pending[PENDING];
static uint32_t npending;

static uint32_t live_home(uint64_t mem) { return (uint32_t)((mem * 0x9E3779B97F4A7C15ull) >> 46) & (LIVE_SLOTS - 1); }

/* The table's pages written once: a page's first access by a read (the probe) maps the zero page and the
 * write after it faults again; a write first faults once. */
#define LIVE_PAGE_SLOTS (4096 / sizeof(struct live_buffer))
static uint64_t live_written[LIVE_SLOTS / LIVE_PAGE_SLOTS / 64];

/* retire takes a live entry out of its site's live figures, as released (under the ledger lock). */
static void retire(const struct live_buffer *e) {
	uint64_t size = e->size_site >> SITE_BITS;
	struct tr_site *s = &hdr->sites[(e->size_site & ((1u << SITE_BITS) - 1)) - 1];
	double w = weight_of(size);
	s->released += w, s->released_bytes += w * (double)size;
	s->live -= w, s->live_bytes -= w * (double)size;
	s->released_attributed++;
	__atomic_store_n(&live_count, live_count - 1, __ATOMIC_RELAXED);
}

/* live_insert and flush_pending run under the ledger lock. A handle already in the table belongs to an
 * object the runtime has destroyed without a release the layer saw as the last (one a sub-buffer or the
 * runtime itself still held): it handed the handle out again, so the old one is retired here. */
static void live_insert(struct live_buffer b) {
	uint32_t i = live_home(b.mem), page = i / LIVE_PAGE_SLOTS;
	if (!(live_written[page / 64] & (1ull << (page % 64)))) {
		/* Never written, so all zeros (an entry only moves into a slot that held one): storing a zero
		 * changes nothing but maps the page for writing. */
		__atomic_store_n(&live_table[page * LIVE_PAGE_SLOTS].size_site, 0, __ATOMIC_RELAXED);
		live_written[page / 64] |= 1ull << (page % 64);
	}
	for (; live_table[i].mem; i = (i + 1) & (LIVE_SLOTS - 1)) {
		if (live_table[i].mem == b.mem) {
			retire(&live_table[i]);
			break;
		}
	}
	live_table[i] = b;
}

static void flush_pending(void) {
	for (uint32_t k = 0; k < npending; k++) __builtin_prefetch(&live_table[live_home(pending[k].mem)], 1, 3);
	for (uint32_t k = 0; k < npending; k++) live_insert(pending[k]);
	npending = 0;
}

static void site_add(struct tr_site *s, double w, double bytes) {
	s->created += w, s->created_bytes += w * bytes;
	s->live += w, s->live_bytes += w * bytes;
	if (s->live_bytes > s->peak_bytes) s->peak_bytes = s->live_bytes;
}

/* ledger_created attributes an allocation just made (key: its handle or SVM pointer) to the site of the call
 * in progress. */
static void ledger_created(int fast, const struct entry *at, uint32_t context, uint32_t alloc, uint64_t key, size_t size, double w) {
	uint32_t site = site_here(fast, at, context, alloc);
	if (!site) {
		__atomic_add_fetch(&hdr->sites_full, 1, __ATOMIC_RELAXED);
		return;
	}
	if (!live_table_mapped()) {
		__atomic_add_fetch(&hdr->live_full, 1, __ATOMIC_RELAXED);
		return;
	}
	ledger_lock();
	if (live_count >= LIVE_SLOTS / 8 * 7) {
		ledger_unlock();
		__atomic_add_fetch(&hdr->live_full, 1, __ATOMIC_RELAXED);
		return;
	}
	pending[npending++] = (struct live_buffer){key, (uint64_t)size << SITE_BITS | site};
	if (npending == PENDING) flush_pending();
	__atomic_store_n(&live_count, live_count + 1, __ATOMIC_RELAXED);
	struct tr_site *s = &hdr->sites[site - 1];
	site_add(s, w, (double)size);
	s->attributed++;
	if (w > 1) s->scaled++;
	ledger_unlock();
}

/* ledger_released takes a destroyed allocation (key: its handle or SVM pointer) out of its site's live
 * figures, where it was attributed. */
static void ledger_released(uint64_t key) {
	if (!__atomic_load_n(&live_count, __ATOMIC_RELAXED)) return;
	ledger_lock();
	flush_pending();
	uint32_t i = live_home(key);
	while (live_table[i].mem && live_table[i].mem != key) i = (i + 1) & (LIVE_SLOTS - 1);
	if (!live_table[i].mem) {
		ledger_unlock();
		return;
	}
	retire(&live_table[i]);
	live_table[i].mem = 0;
	for (uint32_t j = i;;) {
		j = (j + 1) & (LIVE_SLOTS - 1);
		if (!live_table[j].mem) break;
		uint32_t home = live_home(live_table[j].mem);
		if (((j - home) & (LIVE_SLOTS - 1)) < ((j - i) & (LIVE_SLOTS - 1))) continue; /* home lies in (i, j]: stays */
		live_table[i] = live_table[j];
		live_table[j].mem = 0;
		i = j;
	}
	ledger_unlock();
}

/* ledger_at_failure keeps every site's live figures at the program's first failure. */
static void ledger_at_failure(void) {
	if (!ledger_on) return;
	ledger_lock();
	for (uint32_t i = 0; i < TR_SITES; i++) {
		struct tr_site *s = &hdr->sites[i];
		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == 2) s->first_live = s->live, s->first_live_bytes = s->live_bytes;
	}
	ledger_unlock();
}

/* first_failure keeps the program's first failed allocation call, and every context's live buffers and bytes
 * at that moment, exactly: only the first claims it, whatever the ring does. */
static void first_failure(const struct tr_record *r, uint64_t index, uint32_t buffer, uint64_t buffer_bytes) {
	uint32_t zero = 0;
	if (__atomic_load_n(&hdr->first_state, __ATOMIC_RELAXED) != 0 ||
	    !__atomic_compare_exchange_n(&hdr->first_state, &zero, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	hdr->first = *r;
	hdr->first.count = 1;
	hdr->first_index = index;
	hdr->first_time_ns = now_ns();
	hdr->first_buffer = buffer;
	hdr->first_buffer_bytes = buffer_bytes;
	uint32_t n = 0;
	for (uint32_t i = 0; i < TR_MAX_CONTEXTS; i++) {
		struct tr_context *s = &hdr->contexts[i];
		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == 0) break;
		uint64_t buffers = 0, bytes = 0;
		for (int k = 0; k < TR_SHARDS; k++) {
			buffers += __atomic_load_n(&hdr->shards[k].live_buffers[i], __ATOMIC_RELAXED);
			bytes += __atomic_load_n(&hdr->shards[k].live_bytes[i], __ATOMIC_RELAXED);
		}
		hdr->first_live_buffers[i] = buffers;
		hdr->first_live_bytes[i] = bytes;
		n = i + 1;
	}
	hdr->first_context_count = n;
	ledger_at_failure();
	__atomic_store_n(&hdr->first_state, 2, __ATOMIC_RELEASE);
}

/* created records one buffer or sub-buffer create, after the runtime answered; at is the entry frame it came
 * through (NULL for a sub-buffer, whose bytes are its parent's: it has no site). */
static void created(const struct next_fns *n, const struct entry *at, uint32_t kind, cl_context c, cl_mem_flags flags, size_t size, cl_mem m, cl_int code, uint32_t props) {
	int fast = is_fast(), shared;
	struct tr_shard *sh = shard(fast, &shared);
	struct tr_record r = {.size = size, .flags = flags, .context = fast ? fast_context_of(n, c) : context_of(n, c),
		.kind = kind, .code = m ? CL_SUCCESS : (code ? code : CL_INVALID_VALUE), .aux = props};
	struct tr_context *s = r.context ? &hdr->contexts[r.context - 1] : NULL;
	/* No locked instruction on a successful create of the fast thread (one, the shared ring's head, for any
	 * other), and no clock read: the counters are the thread's own, and the sequence keeps the order of
	 * creates, not their times. A failure, rare, takes the exact count of calls and the time. */
	if (m) {
		if (fast) fast_last_mem = m;
		else my_last_mem = m;
		bump(&sh->seq, 1, shared);
		if (s && kind == K_SUB_BUFFER) __atomic_add_fetch(&s->sub_buffers, 1, __ATOMIC_RELAXED);
		if (s && kind != K_SUB_BUFFER) {
			bump(&sh->live_buffers[r.context - 1], 1, shared);
			bump(&sh->live_bytes[r.context - 1], size, shared);
			double w = ledger_on && at ? ledger_weight(fast, size) : 0;
			if (w > 0) ledger_created(fast, at, r.context, A_BUFFER, (uint64_t)(uintptr_t)m, size, w);
		}
	} else {
		uint64_t index = calls();
		bump(&sh->seq, 1, shared);
		__atomic_add_fetch(&hdr->creates_failed, 1, __ATOMIC_RELAXED);
		if (s) __atomic_add_fetch(&s->failures, 1, __ATOMIC_RELAXED);
		first_failure(&r, index, 0, 0);
	}
	emit_as(fast, &r);
}

/* ---- the hooks: each forwards first, then records; preload says the call came through LD_PRELOAD ---- */

#define PRELOAD_DONE(preload) ((preload) && __atomic_load_n(&layer_active, __ATOMIC_ACQUIRE))

/* mark says which way the calls came, once per way: the create path reads only the process's own copy. */
static uint32_t marked;
static void mark(int preload) {
	uint32_t bit = preload ? M_PRELOAD : M_LAYER;
	if (__atomic_load_n(&marked, __ATOMIC_RELAXED) & bit) return;
	__atomic_or_fetch(&hdr->mechanism, bit, __ATOMIC_RELAXED);
	__atomic_or_fetch(&marked, bit, __ATOMIC_RELAXED);
}

static cl_mem hook_create_buffer(const struct next_fns *n, const struct entry *at, int preload, __typeof__(&clCreateBuffer) next, cl_context c,
                                 cl_mem_flags flags, size_t size, void *host, cl_int *err) {
	cl_int local = CL_SUCCESS;
	cl_int *e = err ? err : &local;
	cl_mem m = next(c, flags, size, host, e);
	if (PRELOAD_DONE(preload) || !channel()) return m;
	mark(preload);
	created(n, at, K_BUFFER, c, flags, size, m, *e, 0);
	return m;
}

static cl_mem hook_create_buffer_props(const struct next_fns *n, const struct entry *at, int preload, __typeof__(&clCreateBufferWithProperties) next,
                                       cl_context c, const cl_mem_properties *props, cl_mem_flags flags, size_t size,
                                       void *host, cl_int *err) {
	cl_int local = CL_SUCCESS;
	cl_int *e = err ? err : &local;
	cl_mem m = next(c, props, flags, size, host, e);
	if (PRELOAD_DONE(preload) || !channel()) return m;
	mark(preload);
	uint32_t np = 0;
	while (props && props[2 * np] != 0 && np < 64) np++;
	created(n, at, K_BUFFER_PROPS, c, flags, size, m, *e, np);
	return m;
}

static cl_mem hook_create_sub_buffer(const struct next_fns *n, int preload, __typeof__(&clCreateSubBuffer) next, cl_mem parent,
                                     cl_mem_flags flags, cl_buffer_create_type type, const void *info, cl_int *err) {
	cl_int local = CL_SUCCESS;
	cl_int *e = err ? err : &local;
	cl_mem m = next(parent, flags, type, info, e);
	if (PRELOAD_DONE(preload) || !channel()) return m;
	mark(preload);
	cl_context c = NULL;
	if (n->get_mem_info && has(parent, clGetMemObjectInfo)) n->get_mem_info(parent, CL_MEM_CONTEXT, sizeof c, &c, NULL);
	size_t size = type == CL_BUFFER_CREATE_TYPE_REGION && info ? ((const cl_buffer_region *)info)->size : 0;
	created(n, NULL, K_SUB_BUFFER, c, flags, size, m, *e, 0);
	return m;
}

/* destroyed is the runtime's word that a memory object is gone (clSetMemObjectDestructorCallback). */
static void CL_CALLBACK destroyed(cl_mem m, void *user) {
	(void)user;
	ledger_released((uint64_t)(uintptr_t)m);
}

/* hook_release_mem reads the buffer's size, context and reference count before the release: at count 1 the
 * release destroys it, and its bytes leave its context's live bytes. */
static cl_int hook_release_mem(const struct next_fns *n, int preload, __typeof__(&clReleaseMemObject) next, cl_mem m) {
	if (PRELOAD_DONE(preload) || !channel() || !n->get_mem_info || !has(m, clGetMemObjectInfo)) return next(m);
	cl_uint refs = 0;
	size_t size = 0;
	cl_context c = NULL;
	cl_mem parent = NULL;
	int known = n->get_mem_info(m, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, NULL) == CL_SUCCESS &&
	            n->get_mem_info(m, CL_MEM_SIZE, sizeof size, &size, NULL) == CL_SUCCESS &&
	            n->get_mem_info(m, CL_MEM_CONTEXT, sizeof c, &c, NULL) == CL_SUCCESS;
	if (n->get_mem_info(m, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, NULL) != CL_SUCCESS) parent = NULL;
	cl_mem_object_type type = CL_MEM_OBJECT_BUFFER;
	n->get_mem_info(m, CL_MEM_TYPE, sizeof type, &type, NULL);
	/* A release that is not the last may still be the last the layer sees: a sub-buffer, or the runtime
	 * itself, can hold the object's last reference. Where the ledger may have attributed it, the runtime
	 * tells the ledger when it destroys it (the callback only takes out what is still in the table). */
	if (known && refs > 1 && ledger_on && __atomic_load_n(&live_count, __ATOMIC_RELAXED) && n->set_destructor && has(m, clSetMemObjectDestructorCallback))
		n->set_destructor(m, destroyed, NULL);
	cl_int rc = next(m);
	mark(preload);
	int fast = is_fast();
	struct tr_record r = {.size = size, .kind = K_RELEASE_MEM, .code = rc, .aux = known && refs == 1 && rc == CL_SUCCESS};
	r.context = known ? find_context(c) : 0;
	__atomic_add_fetch(&hdr->releases, 1, __ATOMIC_RELAXED);
	if (r.aux && type != CL_MEM_OBJECT_BUFFER) {
		/* An image: the contexts' figures are of buffers, and never counted it; the ledger did, where it
		 * attributed it. */
		r.flags = 2;
		if (ledger_on) ledger_released((uint64_t)(uintptr_t)m);
	} else if (r.aux && r.context) {
		struct tr_context *s = &hdr->contexts[r.context - 1];
		if (parent) {
			__atomic_sub_fetch(&s->sub_buffers, 1, __ATOMIC_RELAXED);
			r.flags = 1; /* a sub-buffer: its bytes are its parent's */
		} else {
			int shared;
			struct tr_shard *sh = shard(fast, &shared);
			bump(&sh->live_buffers[r.context - 1], (uint64_t)-1, shared);
			bump(&sh->live_bytes[r.context - 1], (uint64_t)0 - size, shared);
			if (ledger_on) ledger_released((uint64_t)(uintptr_t)m);
		}
	}
	emit_as(fast, &r);
	return rc;
}

static cl_context hook_create_context(const struct next_fns *n, int preload, __typeof__(&clCreateContext) next,
                                      const cl_context_properties *props, cl_uint ndev, const cl_device_id *devs,
                                      void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *), void *user,
                                      cl_int *err) {
	cl_int local = CL_SUCCESS;
	cl_int *e = err ? err : &local;
	cl_context c = next(props, ndev, devs, notify, user, e);
	if (PRELOAD_DONE(preload) || !channel()) return c;
	mark(preload);
	struct tr_record r = {.kind = K_CONTEXT, .code = c ? CL_SUCCESS : *e, .aux = ndev};
	if (c) r.context = add_context(n, c, ndev, devs);
	emit(&r);
	return c;
}

static cl_context hook_create_context_from_type(const struct next_fns *n, int preload, __typeof__(&clCreateContextFromType) next,
                                                const cl_context_properties *props, cl_device_type type,
                                                void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                                void *user, cl_int *err) {
	cl_int local = CL_SUCCESS;
	cl_int *e = err ? err : &local;
	cl_context c = next(props, type, notify, user, e);
	if (PRELOAD_DONE(preload) || !channel()) return c;
	mark(preload);
	if (c) {
		register_context(n, c, 2);
	} else {
		struct tr_record r = {.kind = K_CONTEXT, .code = *e, .flags = CTX_FROM_TYPE};
		emit(&r);
	}
	return c;
}

static cl_int hook_release_context(const struct next_fns *n, int preload, __typeof__(&clReleaseContext) next, cl_context c) {
	if (PRELOAD_DONE(preload) || !channel()) return next(c);
	cl_uint refs = 0;
	int known = n->get_context_info && has(c, clGetContextInfo) &&
	            n->get_context_info(c, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs, NULL) == CL_SUCCESS;
	uint32_t slot = find_context(c);
	cl_int rc = next(c);
	mark(preload);
	struct tr_record r = {.context = slot, .kind = K_RELEASE_CONTEXT, .code = rc,
		.aux = known && refs == 1 && rc == CL_SUCCESS};
	if (r.aux && slot) __atomic_store_n(&hdr->contexts[slot - 1].released_ns, now_ns(), __ATOMIC_RELAXED);
	emit(&r);
	return rc;
}

/* enqueue_failed records a failed command, with its queue's context where the runtime says it, and for the
 * program's first failure, the command's buffer (target; NULL for a command without one): its size, and
 * whether it was the newest its thread had made. */
static void enqueue_failed(const struct next_fns *n, int preload, cl_command_queue q, uint32_t cmd, cl_int code, cl_mem target) {
	if (code == CL_SUCCESS || PRELOAD_DONE(preload) || !channel()) return;
	mark(preload);
	cl_context c = NULL;
	if (n->get_queue_info && has(q, clGetCommandQueueInfo)) n->get_queue_info(q, CL_QUEUE_CONTEXT, sizeof c, &c, NULL);
	struct tr_record r = {.kind = K_ENQUEUE, .code = code, .aux = cmd};
	r.context = c ? context_of(n, c) : 0;
	__atomic_add_fetch(&hdr->enqueues_failed, 1, __ATOMIC_RELAXED);
	if (code == CL_MEM_OBJECT_ALLOCATION_FAILURE || code == CL_OUT_OF_RESOURCES || code == CL_OUT_OF_HOST_MEMORY) {
		uint32_t buffer = 0;
		size_t bytes = 0;
		if (target) {
			buffer = target == (is_fast() ? fast_last_mem : my_last_mem) ? B_NEWEST : B_OLDER;
			if (n->get_mem_info && has(target, clGetMemObjectInfo)) n->get_mem_info(target, CL_MEM_SIZE, sizeof bytes, &bytes, NULL);
		}
		first_failure(&r, calls(), buffer, bytes);
	}
	emit(&r);
}

/* issued records a command as the program makes it, before the runtime has it, where the tool keeps a call
 * log: a program the kernel kills inside the call (an OOM kill in a fill that touches new memory) has it as
 * its last call. It holds no result: a failure is a record of its own after it (enqueue_failed). size is
 * the bytes the command names (0 where it names none, or only behind a pointer, which the layer does not
 * read: a bad pointer is the runtime's to answer). Nothing is recorded without a call log: the default
 * trace pays one load for it. */
static void issued(const struct next_fns *n, int preload, cl_command_queue q, uint32_t cmd, size_t size) {
	if (PRELOAD_DONE(preload) || !channel() || !__atomic_load_n(&hdr->log_calls, __ATOMIC_RELAXED)) return;
	mark(preload);
	cl_context c = NULL;
	if (n->get_queue_info && has(q, clGetCommandQueueInfo)) n->get_queue_info(q, CL_QUEUE_CONTEXT, sizeof c, &c, NULL);
	struct tr_record r = {.kind = K_ISSUE, .size = size, .aux = cmd};
	r.context = c ? context_of(n, c) : 0;
	emit(&r);
}

/* ledger_only attributes an allocation the contexts' figures do not count (an image, an SVM allocation) to
 * its call site, where the ledger is kept and its context is tracked. */
static void ledger_only(const struct next_fns *n, const struct entry *at, uint32_t alloc, cl_context c, uint64_t key, size_t size) {
	if (!ledger_on || !key || !size) return;
	int fast = is_fast();
	uint32_t context = fast ? fast_context_of(n, c) : context_of(n, c);
	double w = context ? ledger_weight(fast, size) : 0;
	if (w > 0) ledger_created(fast, at, context, alloc, key, size, w);
}

/* image_made attributes an image the runtime made, by the size it says the image has. */
static void image_made(const struct next_fns *n, const struct entry *at, int preload, cl_context c, cl_mem m) {
	if (!m || PRELOAD_DONE(preload) || !channel() || !n->get_mem_info || !has(m, clGetMemObjectInfo)) return;
	mark(preload);
	size_t size = 0;
	if (n->get_mem_info(m, CL_MEM_SIZE, sizeof size, &size, NULL) == CL_SUCCESS) ledger_only(n, at, A_IMAGE, c, (uint64_t)(uintptr_t)m, size);
}

static void svm_made(const struct next_fns *n, const struct entry *at, int preload, cl_context c, void *p, size_t size) {
	if (!p || PRELOAD_DONE(preload) || !channel()) return;
	mark(preload);
	ledger_only(n, at, A_SVM, c, (uint64_t)(uintptr_t)p, size);
}

static void svm_freed(int preload, void *p) {
	if (!p || PRELOAD_DONE(preload) || !channel() || !ledger_on) return;
	ledger_released((uint64_t)(uintptr_t)p);
}

/* ---- the two entry points into the hooks ---- */

/* RESOLVE finds the real definition of an exported call once (real_entry: the loader's, or the runtime's
 * own). A call that finds none anywhere is answered NO_ENTRY's way and counted (header.unresolved): the one
 * answer the layer gives itself, to a program that could not have made the call untraced either. */
#define RESOLVE(type, name)                                                                   \
	static type real;                                                                     \
	type fn = __atomic_load_n(&real, __ATOMIC_ACQUIRE);                                   \
	if (!fn) {                                                                            \
		fn = (type)real_entry(#name);                                                 \
		__atomic_store_n(&real, fn, __ATOMIC_RELEASE);                                \
	}
#define NO_ENTRY_ERR(e) if (!fn) { if (e) *(e) = CL_INVALID_OPERATION; return NULL; }
#define NO_ENTRY if (!fn) return CL_INVALID_OPERATION;

/* FORWARD_IF_LAYER: where the loader runs this library as its layer too (both ways in, the tool's default),
 * the layer records and the export only passes the call on, at the cost of one load and a jump. */
#define FORWARD_IF_LAYER(call) \
	if (fn && __atomic_load_n(&layer_active, __ATOMIC_ACQUIRE)) return call;

/* pn is the query entry points of the preloaded side, found once. Two threads that find them at once find
 * the same ones and store them twice: no once-lock, which a thread inside dlopen (holding the dynamic
 * linker's lock, its constructor calling OpenCL) could wait on while the other waits for that lock. */
static int preload_ready;
static const struct next_fns *pn(void) {
	if (!__atomic_load_n(&preload_ready, __ATOMIC_ACQUIRE)) {
		struct next_fns n = {
			.get_context_info = (__typeof__(&clGetContextInfo))real_entry("clGetContextInfo"),
			.get_device_info = (__typeof__(&clGetDeviceInfo))real_entry("clGetDeviceInfo"),
			.get_mem_info = (__typeof__(&clGetMemObjectInfo))real_entry("clGetMemObjectInfo"),
			.get_queue_info = (__typeof__(&clGetCommandQueueInfo))real_entry("clGetCommandQueueInfo"),
			.set_destructor = (__typeof__(&clSetMemObjectDestructorCallback))real_entry("clSetMemObjectDestructorCallback"),
		};
		__atomic_store_n(&preload_next.get_context_info, n.get_context_info, __ATOMIC_RELAXED);
		__atomic_store_n(&preload_next.get_device_info, n.get_device_info, __ATOMIC_RELAXED);
		__atomic_store_n(&preload_next.get_mem_info, n.get_mem_info, __ATOMIC_RELAXED);
		__atomic_store_n(&preload_next.get_queue_info, n.get_queue_info, __ATOMIC_RELAXED);
		__atomic_store_n(&preload_next.set_destructor, n.set_destructor, __ATOMIC_RELAXED);
		__atomic_store_n(&preload_ready, 1, __ATOMIC_RELEASE);
	}
	return &preload_next;
}

#define CTX_NOTIFY void(CL_CALLBACK * notify)(const char *, const void *, size_t, void *)

/* Each watched call twice: layer_X through the next dispatch table, X exported for LD_PRELOAD. */
static cl_context CL_API_CALL layer_clCreateContext(const cl_context_properties *p, cl_uint n, const cl_device_id *d, CTX_NOTIFY, void *u, cl_int *e) {
	return hook_create_context(&layer_next, 0, next_dispatch.clCreateContext, p, n, d, notify, u, e);
}
EXPORT cl_context CL_API_CALL clCreateContext(const cl_context_properties *p, cl_uint n, const cl_device_id *d, CTX_NOTIFY, void *u, cl_int *e) {
	RESOLVE(__typeof__(&clCreateContext), clCreateContext)
	FORWARD_IF_LAYER(fn(p, n, d, notify, u, e))
	NO_ENTRY_ERR(e)
	return hook_create_context(pn(), 1, fn, p, n, d, notify, u, e);
}
static cl_context CL_API_CALL layer_clCreateContextFromType(const cl_context_properties *p, cl_device_type t, CTX_NOTIFY, void *u, cl_int *e) {
	return hook_create_context_from_type(&layer_next, 0, next_dispatch.clCreateContextFromType, p, t, notify, u, e);
}
EXPORT cl_context CL_API_CALL clCreateContextFromType(const cl_context_properties *p, cl_device_type t, CTX_NOTIFY, void *u, cl_int *e) {
	RESOLVE(__typeof__(&clCreateContextFromType), clCreateContextFromType)
	FORWARD_IF_LAYER(fn(p, t, notify, u, e))
	NO_ENTRY_ERR(e)
	return hook_create_context_from_type(pn(), 1, fn, p, t, notify, u, e);
}
static cl_int CL_API_CALL layer_clReleaseContext(cl_context c) {
	return hook_release_context(&layer_next, 0, next_dispatch.clReleaseContext, c);
}
EXPORT cl_int CL_API_CALL clReleaseContext(cl_context c) {
	RESOLVE(__typeof__(&clReleaseContext), clReleaseContext)
	FORWARD_IF_LAYER(fn(c))
	NO_ENTRY
	return hook_release_context(pn(), 1, fn, c);
}
static cl_mem CL_API_CALL layer_clCreateBuffer(cl_context c, cl_mem_flags f, size_t s, void *h, cl_int *e) {
	struct entry at = ENTRY_HERE;
	return hook_create_buffer(&layer_next, &at, 0, next_dispatch.clCreateBuffer, c, f, s, h, e);
}
EXPORT cl_mem CL_API_CALL clCreateBuffer(cl_context c, cl_mem_flags f, size_t s, void *h, cl_int *e) {
	RESOLVE(__typeof__(&clCreateBuffer), clCreateBuffer)
	FORWARD_IF_LAYER(fn(c, f, s, h, e))
	NO_ENTRY_ERR(e)
	struct entry at = ENTRY_HERE;
	return hook_create_buffer(pn(), &at, 1, fn, c, f, s, h, e);
}
static cl_mem CL_API_CALL layer_clCreateBufferWithProperties(cl_context c, const cl_mem_properties *p, cl_mem_flags f, size_t s, void *h, cl_int *e) {
	struct entry at = ENTRY_HERE;
	return hook_create_buffer_props(&layer_next, &at, 0, next_dispatch.clCreateBufferWithProperties, c, p, f, s, h, e);
}
EXPORT cl_mem CL_API_CALL clCreateBufferWithProperties(cl_context c, const cl_mem_properties *p, cl_mem_flags f, size_t s, void *h, cl_int *e) {
	RESOLVE(__typeof__(&clCreateBufferWithProperties), clCreateBufferWithProperties)
	FORWARD_IF_LAYER(fn(c, p, f, s, h, e))
	NO_ENTRY_ERR(e)
	struct entry at = ENTRY_HERE;
	return hook_create_buffer_props(pn(), &at, 1, fn, c, p, f, s, h, e);
}
static cl_mem CL_API_CALL layer_clCreateSubBuffer(cl_mem m, cl_mem_flags f, cl_buffer_create_type t, const void *i, cl_int *e) {
	return hook_create_sub_buffer(&layer_next, 0, next_dispatch.clCreateSubBuffer, m, f, t, i, e);
}
EXPORT cl_mem CL_API_CALL clCreateSubBuffer(cl_mem m, cl_mem_flags f, cl_buffer_create_type t, const void *i, cl_int *e) {
	RESOLVE(__typeof__(&clCreateSubBuffer), clCreateSubBuffer)
	FORWARD_IF_LAYER(fn(m, f, t, i, e))
	NO_ENTRY_ERR(e)
	return hook_create_sub_buffer(pn(), 1, fn, m, f, t, i, e);
}
static cl_int CL_API_CALL layer_clReleaseMemObject(cl_mem m) {
	return hook_release_mem(&layer_next, 0, next_dispatch.clReleaseMemObject, m);
}
EXPORT cl_int CL_API_CALL clReleaseMemObject(cl_mem m) {
	RESOLVE(__typeof__(&clReleaseMemObject), clReleaseMemObject)
	FORWARD_IF_LAYER(fn(m))
	NO_ENTRY
	return hook_release_mem(pn(), 1, fn, m);
}

/* Images and SVM allocations, for the ledger alone: each forwards first, then attributes what was made. */
#define IMG_FMT const cl_image_format *fmt
static cl_mem CL_API_CALL layer_clCreateImage(cl_context c, cl_mem_flags f, IMG_FMT, const cl_image_desc *d, void *h, cl_int *e) {
	struct entry at = ENTRY_HERE;
	cl_mem m = next_dispatch.clCreateImage(c, f, fmt, d, h, e);
	image_made(&layer_next, &at, 0, c, m);
	return m;
}
EXPORT cl_mem CL_API_CALL clCreateImage(cl_context c, cl_mem_flags f, IMG_FMT, const cl_image_desc *d, void *h, cl_int *e) {
	RESOLVE(__typeof__(&clCreateImage), clCreateImage)
	FORWARD_IF_LAYER(fn(c, f, fmt, d, h, e))
	NO_ENTRY_ERR(e)
	struct entry at = ENTRY_HERE;
	cl_mem m = fn(c, f, fmt, d, h, e);
	image_made(pn(), &at, 1, c, m);
	return m;
}
static cl_mem CL_API_CALL layer_clCreateImageWithProperties(cl_context c, const cl_mem_properties *p, cl_mem_flags f, IMG_FMT, const cl_image_desc *d, void *h, cl_int *e) {
	struct entry at = ENTRY_HERE;
	cl_mem m = next_dispatch.clCreateImageWithProperties(c, p, f, fmt, d, h, e);
	image_made(&layer_next, &at, 0, c, m);
	return m;
}
EXPORT cl_mem CL_API_CALL clCreateImageWithProperties(cl_context c, const cl_mem_properties *p, cl_mem_flags f, IMG_FMT, const cl_image_desc *d, void *h, cl_int *e) {
	RESOLVE(__typeof__(&clCreateImageWithProperties), clCreateImageWithProperties)
	FORWARD_IF_LAYER(fn(c, p, f, fmt, d, h, e))
	NO_ENTRY_ERR(e)
	struct entry at = ENTRY_HERE;
	cl_mem m = fn(c, p, f, fmt, d, h, e);
	image_made(pn(), &at, 1, c, m);
	return m;
}
static cl_mem CL_API_CALL layer_clCreateImage2D(cl_context c, cl_mem_flags f, IMG_FMT, size_t w, size_t ht, size_t rp, void *h, cl_int *e) {
	struct entry at = ENTRY_HERE;
	cl_mem m = next_dispatch.clCreateImage2D(c, f, fmt, w, ht, rp, h, e);
	image_made(&layer_next, &at, 0, c, m);
	return m;
}
EXPORT cl_mem CL_API_CALL clCreateImage2D(cl_context c, cl_mem_flags f, IMG_FMT, size_t w, size_t ht, size_t rp, void *h, cl_int *e) {
	RESOLVE(__typeof__(&clCreateImage2D), clCreateImage2D)
	FORWARD_IF_LAYER(fn(c, f, fmt, w, ht, rp, h, e))
	NO_ENTRY_ERR(e)
	struct entry at = ENTRY_HERE;
	cl_mem m = fn(c, f, fmt, w, ht, rp, h, e);
	image_made(pn(), &at, 1, c, m);
	return m;
}
static cl_mem CL_API_CALL layer_clCreateImage3D(cl_context c, cl_mem_flags f, IMG_FMT, size_t w, size_t ht, size_t dp, size_t rp, size_t sp, void *h, cl_int *e) {
	struct entry at = ENTRY_HERE;
	cl_mem m = next_dispatch.clCreateImage3D(c, f, fmt, w, ht, dp, rp, sp, h, e);
	image_made(&layer_next, &at, 0, c, m);
	return m;
}
EXPORT cl_mem CL_API_CALL clCreateImage3D(cl_context c, cl_mem_flags f, IMG_FMT, size_t w, size_t ht, size_t dp, size_t rp, size_t sp, void *h, cl_int *e) {
	RESOLVE(__typeof__(&clCreateImage3D), clCreateImage3D)
	FORWARD_IF_LAYER(fn(c, f, fmt, w, ht, dp, rp, sp, h, e))
	NO_ENTRY_ERR(e)
	struct entry at = ENTRY_HERE;
	cl_mem m = fn(c, f, fmt, w, ht, dp, rp, sp, h, e);
	image_made(pn(), &at, 1, c, m);
	return m;
}
static void *CL_API_CALL layer_clSVMAlloc(cl_context c, cl_svm_mem_flags f, size_t size, cl_uint align) {
	struct entry at = ENTRY_HERE;
	void *p = next_dispatch.clSVMAlloc(c, f, size, align);
	svm_made(&layer_next, &at, 0, c, p, size);
	return p;
}
EXPORT void *CL_API_CALL clSVMAlloc(cl_context c, cl_svm_mem_flags f, size_t size, cl_uint align) {
	RESOLVE(__typeof__(&clSVMAlloc), clSVMAlloc)
	FORWARD_IF_LAYER(fn(c, f, size, align))
	if (!fn) return NULL;
	struct entry at = ENTRY_HERE;
	void *p = fn(c, f, size, align);
	svm_made(pn(), &at, 1, c, p, size);
	return p;
}
static void CL_API_CALL layer_clSVMFree(cl_context c, void *p) {
	next_dispatch.clSVMFree(c, p);
	svm_freed(0, p);
}
EXPORT void CL_API_CALL clSVMFree(cl_context c, void *p) {
	RESOLVE(__typeof__(&clSVMFree), clSVMFree)
	if (fn && __atomic_load_n(&layer_active, __ATOMIC_ACQUIRE)) {
		fn(c, p);
		return;
	}
	if (!fn) return;
	fn(c, p);
	svm_freed(1, p);
}

/* ENQUEUE makes both entry points of a command that returns a status, q being its queue, target the buffer
 * it is about (its destination; NULL where it has none, or several) and size the bytes it names (0: none).
 * The arguments go on as they came; the layer reads none behind a pointer. */
#define ENQUEUE(name, cmd, target, size, params, args)                                        \
	static cl_int CL_API_CALL layer_##name params {                                       \
		issued(&layer_next, 0, q, cmd, size);                                         \
		cl_int rc = next_dispatch.name args;                                          \
		enqueue_failed(&layer_next, 0, q, cmd, rc, target);                           \
		return rc;                                                                    \
	}                                                                                     \
	EXPORT cl_int CL_API_CALL name params {                                               \
		RESOLVE(__typeof__(&name), name)                                                  \
		FORWARD_IF_LAYER(fn args)                                                     \
		NO_ENTRY                                                                      \
		issued(pn(), 1, q, cmd, size);                                                \
		cl_int rc = fn args;                                                          \
		enqueue_failed(pn(), 1, q, cmd, rc, target);                                  \
		return rc;                                                                    \
	}

#define EVS cl_uint ne, const cl_event *wl, cl_event *ev

/* clEnqueueSVMFree releases SVM allocations as a command: the ledger takes them out when the runtime took the
 * command (the program has let them go; the command frees them in the queue's order). */
#define SVM_FREE_FN void(CL_CALLBACK * free_fn)(cl_command_queue, cl_uint, void *[], void *)
static void svm_enqueue_freed(int preload, cl_int rc, cl_uint np, void *ptrs[]) {
	if (rc != CL_SUCCESS || !ptrs) return;
	for (cl_uint i = 0; i < np; i++) svm_freed(preload, ptrs[i]);
}
static cl_int CL_API_CALL layer_clEnqueueSVMFree(cl_command_queue q, cl_uint np, void *ptrs[], SVM_FREE_FN, void *u, EVS) {
	cl_int rc = next_dispatch.clEnqueueSVMFree(q, np, ptrs, free_fn, u, ne, wl, ev);
	svm_enqueue_freed(0, rc, np, ptrs);
	return rc;
}
EXPORT cl_int CL_API_CALL clEnqueueSVMFree(cl_command_queue q, cl_uint np, void *ptrs[], SVM_FREE_FN, void *u, EVS) {
	RESOLVE(__typeof__(&clEnqueueSVMFree), clEnqueueSVMFree)
	FORWARD_IF_LAYER(fn(q, np, ptrs, free_fn, u, ne, wl, ev))
	NO_ENTRY
	cl_int rc = fn(q, np, ptrs, free_fn, u, ne, wl, ev);
	svm_enqueue_freed(1, rc, np, ptrs);
	return rc;
}

ENQUEUE(clEnqueueReadBuffer, C_READ, b, s, (cl_command_queue q, cl_mem b, cl_bool bl, size_t o, size_t s, void *p, EVS), (q, b, bl, o, s, p, ne, wl, ev))
ENQUEUE(clEnqueueWriteBuffer, C_WRITE, b, s, (cl_command_queue q, cl_mem b, cl_bool bl, size_t o, size_t s, const void *p, EVS), (q, b, bl, o, s, p, ne, wl, ev))
ENQUEUE(clEnqueueCopyBuffer, C_COPY, b, s, (cl_command_queue q, cl_mem a, cl_mem b, size_t oa, size_t ob, size_t s, EVS), (q, a, b, oa, ob, s, ne, wl, ev))
ENQUEUE(clEnqueueFillBuffer, C_FILL, b, s, (cl_command_queue q, cl_mem b, const void *pat, size_t ps, size_t o, size_t s, EVS), (q, b, pat, ps, o, s, ne, wl, ev))
ENQUEUE(clEnqueueMigrateMemObjects, C_MIGRATE, (n == 1 && m ? m[0] : NULL), 0, (cl_command_queue q, cl_uint n, const cl_mem *m, cl_mem_migration_flags f, EVS), (q, n, m, f, ne, wl, ev))
ENQUEUE(clEnqueueNDRangeKernel, C_NDRANGE, NULL, 0, (cl_command_queue q, cl_kernel k, cl_uint d, const size_t *go, const size_t *gs, const size_t *ls, EVS), (q, k, d, go, gs, ls, ne, wl, ev))
ENQUEUE(clEnqueueTask, C_TASK, NULL, 0, (cl_command_queue q, cl_kernel k, EVS), (q, k, ne, wl, ev))
ENQUEUE(clEnqueueReadBufferRect, C_READ_RECT, b, 0, (cl_command_queue q, cl_mem b, cl_bool bl, const size_t *bo, const size_t *ho, const size_t *r, size_t brp, size_t bsp, size_t hrp, size_t hsp, void *p, EVS), (q, b, bl, bo, ho, r, brp, bsp, hrp, hsp, p, ne, wl, ev))
ENQUEUE(clEnqueueWriteBufferRect, C_WRITE_RECT, b, 0, (cl_command_queue q, cl_mem b, cl_bool bl, const size_t *bo, const size_t *ho, const size_t *r, size_t brp, size_t bsp, size_t hrp, size_t hsp, const void *p, EVS), (q, b, bl, bo, ho, r, brp, bsp, hrp, hsp, p, ne, wl, ev))
ENQUEUE(clEnqueueCopyBufferRect, C_COPY_RECT, b, 0, (cl_command_queue q, cl_mem a, cl_mem b, const size_t *ao, const size_t *bo, const size_t *r, size_t arp, size_t asp, size_t brp, size_t bsp, EVS), (q, a, b, ao, bo, r, arp, asp, brp, bsp, ne, wl, ev))
ENQUEUE(clEnqueueUnmapMemObject, C_UNMAP, m, 0, (cl_command_queue q, cl_mem m, void *p, EVS), (q, m, p, ne, wl, ev))
ENQUEUE(clFinish, C_FINISH, NULL, 0, (cl_command_queue q), (q))

static void *CL_API_CALL layer_clEnqueueMapBuffer(cl_command_queue q, cl_mem b, cl_bool bl, cl_map_flags f, size_t o, size_t s, EVS, cl_int *e) {
	cl_int local = CL_SUCCESS;
	cl_int *err = e ? e : &local;
	issued(&layer_next, 0, q, C_MAP, s);
	void *p = next_dispatch.clEnqueueMapBuffer(q, b, bl, f, o, s, ne, wl, ev, err);
	enqueue_failed(&layer_next, 0, q, C_MAP, p ? CL_SUCCESS : *err, b);
	return p;
}
EXPORT void *CL_API_CALL clEnqueueMapBuffer(cl_command_queue q, cl_mem b, cl_bool bl, cl_map_flags f, size_t o, size_t s, EVS, cl_int *e) {
	RESOLVE(__typeof__(&clEnqueueMapBuffer), clEnqueueMapBuffer)
	FORWARD_IF_LAYER(fn(q, b, bl, f, o, s, ne, wl, ev, e))
	NO_ENTRY_ERR(e)
	cl_int local = CL_SUCCESS;
	cl_int *err = e ? e : &local;
	issued(pn(), 1, q, C_MAP, s);
	void *p = fn(q, b, bl, f, o, s, ne, wl, ev, err);
	enqueue_failed(pn(), 1, q, C_MAP, p ? CL_SUCCESS : *err, b);
	return p;
}

/* ---- the layer interface of the ICD loader (CL/cl_layer.h) ---- */

EXPORT cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param, size_t size, void *value, size_t *size_ret) {
	static const char name[] = "clmemprobe trace layer";
	const void *src;
	size_t n;
	cl_layer_api_version v = CL_LAYER_API_VERSION_100;
	switch (param) {
	case CL_LAYER_API_VERSION: src = &v, n = sizeof v; break;
	case CL_LAYER_NAME: src = name, n = sizeof name; break;
	default: return CL_INVALID_VALUE;
	}
	if (value && size < n) return CL_INVALID_VALUE;
	if (value) memcpy(value, src, n);
	if (size_ret) *size_ret = n;
	return CL_SUCCESS;
}

/* clInitLayer keeps the next table and answers a copy of it with the watched entries replaced, so every call
 * the layer does not watch goes on unchanged (also with a loader that does not fill empty entries itself).
 * It counts the init in the channel (the tool asks a loader whether it loads layers this way) and notes the
 * process's OpenCL libraries; neither makes this process the one that records. A second loader in the same
 * process (a copy under another name, as a Python wheel bundles one) gets its own table back: its calls go
 * on untraced rather than into the first loader's next table, and the channel counts it. */
static const cl_icd_dispatch *first_target;

EXPORT cl_int CL_API_CALL clInitLayer(cl_uint num_entries, const cl_icd_dispatch *target, cl_uint *num_entries_ret,
                                      const cl_icd_dispatch **layer_ret) {
	const size_t all = sizeof(cl_icd_dispatch) / sizeof(void *);
	if (!target || !num_entries_ret || !layer_ret) return CL_INVALID_VALUE;
	struct tr_header *h = mapped();
	note_libraries(h);
	const cl_icd_dispatch *none = NULL;
	if (!__atomic_compare_exchange_n(&first_target, &none, target, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) && none != target) {
		if (h) __atomic_add_fetch(&h->loaders_untraced, 1, __ATOMIC_RELAXED);
		*num_entries_ret = num_entries < all ? num_entries : (cl_uint)all;
		*layer_ret = target;
		return CL_SUCCESS;
	}
	if (h) __atomic_add_fetch(&h->layer_inits, 1, __ATOMIC_RELAXED);
	memset(&next_dispatch, 0, sizeof next_dispatch);
	memcpy(&next_dispatch, target, (num_entries < all ? num_entries : all) * sizeof(void *));
	layer_dispatch = next_dispatch;
	layer_next.get_context_info = next_dispatch.clGetContextInfo;
	layer_next.get_device_info = next_dispatch.clGetDeviceInfo;
	layer_next.get_mem_info = next_dispatch.clGetMemObjectInfo;
	layer_next.get_queue_info = next_dispatch.clGetCommandQueueInfo;
	layer_next.set_destructor = next_dispatch.clSetMemObjectDestructorCallback;
#define WATCH(name) if (next_dispatch.name) layer_dispatch.name = layer_##name
	WATCH(clCreateContext);
	WATCH(clCreateContextFromType);
	WATCH(clReleaseContext);
	WATCH(clCreateBuffer);
	WATCH(clCreateBufferWithProperties);
	WATCH(clCreateSubBuffer);
	WATCH(clReleaseMemObject);
	WATCH(clCreateImage);
	WATCH(clCreateImageWithProperties);
	WATCH(clCreateImage2D);
	WATCH(clCreateImage3D);
	WATCH(clSVMAlloc);
	WATCH(clSVMFree);
	WATCH(clEnqueueSVMFree);
	WATCH(clEnqueueReadBuffer);
	WATCH(clEnqueueWriteBuffer);
	WATCH(clEnqueueCopyBuffer);
	WATCH(clEnqueueFillBuffer);
	WATCH(clEnqueueMigrateMemObjects);
	WATCH(clEnqueueNDRangeKernel);
	WATCH(clEnqueueTask);
	WATCH(clEnqueueReadBufferRect);
	WATCH(clEnqueueWriteBufferRect);
	WATCH(clEnqueueCopyBufferRect);
	WATCH(clEnqueueUnmapMemObject);
	WATCH(clFinish);
	WATCH(clEnqueueMapBuffer);
#undef WATCH
	*num_entries_ret = (cl_uint)all;
	*layer_ret = &layer_dispatch;
	__atomic_store_n(&layer_active, 1, __ATOMIC_RELEASE);
	return CL_SUCCESS;
}
