// Package repro writes the C reproducers: a run's first failure (or loop) of one job, and a traced
// program's calls up to its failure.
package repro

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/clmemprobe/clmemprobe/kernels"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// The reproducer: one self-contained C file that repeats one job of a run (the same platform by name, the
// same devices, context layout, buffer size, touch and order, and the variant's settings) with nothing but
// the OpenCL headers and loader, and prints the first failure in the tool's words. It waits for the device
// after every buffer, so the index it prints is exact on any runtime.

// ErrNothingToReproduce: the run has no job a reproducer could repeat.
var ErrNothingToReproduce = errors.New("nothing to reproduce")

// ReproJob picks the job a reproducer repeats: the named strategy (variant, flags) where given, else the job
// the verdict's headline names, else the most informative one: the earliest failure, else a crash or a
// hang, else the first job that ran.
func ReproJob(j findings.Judged, strategy, variant, flag string) (*result.JobResult, error) {
	r := j.Run()
	var best *result.JobResult
	rank := func(s *result.JobResult) int {
		switch s.Outcome {
		case result.OutcomeFailed:
			return 0
		case result.OutcomeCrashed, result.OutcomeHung:
			return 1
		case result.OutcomeUnsupported:
			return 3
		}
		return 2
	}
	if strategy == "" && variant == "" && flag == "" {
		// The reproducer repeats the job the verdict's headline names, so the two tell one story.
		if s := headlineJob(j); s != nil {
			return s, nil
		}
	}
	for i := range r.Jobs {
		s := &r.Jobs[i]
		if strategy != "" && string(s.Strategy) != strategy || variant != "" && result.VariantName(s.Variant) != variant ||
			flag != "" && result.FlagsName(s.Flags) != flag {
			continue
		}
		if best == nil || rank(s) < rank(best) || rank(s) == rank(best) && rank(s) == 0 && s.AllocationsOK < best.AllocationsOK {
			best = s
		}
	}
	switch {
	case best == nil && (strategy != "" || variant != "" || flag != ""):
		return nil, fmt.Errorf("%w: the run has no job of %s; its jobs: %s", ErrNothingToReproduce, pickText(strategy, variant, flag), jobList(r))
	case best == nil:
		return nil, fmt.Errorf("%w: the run has no job", ErrNothingToReproduce)
	case best.Outcome == result.OutcomeUnsupported:
		return nil, fmt.Errorf("%w: %s was not supported on this runtime", ErrNothingToReproduce, best.Strategy)
	case len(best.Devices) == 0:
		return nil, fmt.Errorf("%w: the job names no device", ErrNothingToReproduce)
	}
	return best, nil
}

// headlineJob is the job the headline finding names (its first strategy, at its size, variant and flags), when
// it names one that ran on devices; nil otherwise.
func headlineJob(j findings.Judged) *result.JobResult {
	r := j.Run()
	h, ok := j.Headline()
	if !ok || len(h.Strategies) == 0 {
		return nil
	}
	for i := range r.Jobs {
		s := &r.Jobs[i]
		if s.Strategy != h.Strategies[0] || s.Variant != h.Variant && len(r.VariantNames()) > 1 || len(h.Sizes) > 0 && s.SizeBytes != h.Sizes[0] ||
			s.Flags != h.Flags && len(r.FlagNames()) > 1 {
			continue
		}
		if s.Outcome != result.OutcomeUnsupported && len(s.Devices) > 0 {
			return s
		}
	}
	return nil
}

// reproCodes are the codes the reproducer names; any other is printed by number.
var reproCodes = []int32{-4, -5, -6, -14, -30, -34, -36, -38, -48, -59, -61, -64}

type reproData struct {
	Version, Started, Command, Summary, Recorded string
	Platform                                     string
	Devices                                      []int
	Size, Budget                                 uint64
	Every                                        uint64 // a progress line every Every buffers
	EverySize                                    string // what Every buffers hold
	Shared, Migrate, DeviceList, Fill, Kernel    bool
	Pattern                                      []byte
	KernelSource                                 string
	Settings                                     [][2]string
	Limits                                       [][3]string // the variant's RLIMIT_ settings: name, C value, as given
	Launch                                       string      // the variant's LD_ settings, which only the shell can set
	RunEnv                                       [][2]string // the run's runtime variables, set unless already set
	Codes                                        [][2]string
	RecIndex                                     uint64
	RecCode                                      int32
	RecStage                                     string
	HasRecord                                    bool
	Flags                                        string // the buffers' cl_mem_flags as a C expression
	UseHostPtr, CopyHostPtr                      bool   // a host block per buffer, or one source for all
}

// WriteRepro writes the C reproducer of the job opts names (or the most informative one).
func WriteRepro(w io.Writer, j findings.Judged, opts render.Options) error {
	r := j.Run()
	s, err := ReproJob(j, opts.Strategy, opts.Variant, opts.Flags)
	if err != nil {
		return err
	}
	d := reproData{Version: comment(r.Tool.Version), Started: comment(r.Started), Command: comment(render.ShellQuote(render.PortableCommand(r.Command))),
		Platform: cString(r.Platform.Name), Devices: s.Devices, Size: s.SizeBytes, Budget: r.Config.Budget(s.SizeBytes),
		Shared: s.Strategy.SharesContext(), Migrate: s.Strategy == result.MigrateFirst, DeviceList: s.Strategy == result.DeviceList,
		Fill: r.Config.Touch == result.TouchFill, Kernel: r.Config.Touch == result.TouchKernel, Pattern: kernels.FillPattern(s.SizeBytes)}
	flags, err := result.JobFlags(s.Flags)
	if err != nil {
		return fmt.Errorf("the job's flags %q: %w", s.Flags, err)
	}
	d.Flags, d.UseHostPtr, d.CopyHostPtr = flags.C(), flags.HostPtr() == result.HostPtrUse, flags.HostPtr() == result.HostPtrCopy
	if d.Budget == 0 {
		d.Budget = s.AllocationsOK + 1
	}
	d.Every = progressEvery(s.SizeBytes, s.AllocationsOK)
	d.EverySize = units.Size(d.Every * s.SizeBytes)
	if d.Kernel {
		d.KernelSource = cString(kernels.Touch)
	}
	if err := d.variant(s.VariantSettings); err != nil {
		return err
	}
	// The variables the run had that a runtime reads (POCL_DEVICES, a NEO key), not where to find the
	// loader or libraries, which are the receiving machine's own.
	if r.Environment != nil {
		for _, k := range render.SortedKeys(r.Environment.EnvVars) {
			v := r.Environment.EnvVars[k]
			if v == result.Redacted || result.SelectsRuntimeOrTool(k) || strings.HasPrefix(k, "LD_") || strings.HasPrefix(k, "OPENCL_LAYER") ||
				s.VariantSettings[k] != "" {
				continue
			}
			d.RunEnv = append(d.RunEnv, [2]string{cString(k), cString(v)})
		}
	}
	codes := append([]int32{}, reproCodes...)
	if ff := s.FirstFailure; ff != nil && !slices.Contains(codes, ff.Code) && ff.Code != 0 {
		codes = append(codes, ff.Code)
	}
	for _, c := range codes {
		d.Codes = append(d.Codes, [2]string{strconv.Itoa(int(c)), result.CodeName(c)})
	}
	variant := ""
	if s.Variant != "" {
		variant = ", variant " + s.Variant
	}
	if s.Flags != "" {
		variant += ", flags " + s.Flags
	}
	d.Summary = comment(fmt.Sprintf("%s%s, %s buffers, touch %s, %d device(s) of %q, buffer i for device i mod %d, none released, up to %d buffers",
		s.Strategy, variant, units.Size(s.SizeBytes), r.Config.Touch, len(s.Devices), r.Platform.Name, max(1, len(s.Devices)), d.Budget))
	switch ff := s.FirstFailure; {
	case s.Outcome == result.OutcomeFailed && ff != nil:
		// The stage is one of the loader's known words; escaped all the same, as it sits in a C string.
		d.HasRecord, d.RecIndex, d.RecCode, d.RecStage = true, ff.Index, ff.Code, strings.ReplaceAll(cString(string(ff.Stage)), "%", "%%")
		d.Recorded = comment(fmt.Sprintf("buffer #%d failed with %s (%d) at %s (%s), meant for device %d", ff.Index, ff.Name, ff.Code, ff.Stage, ff.Call, ff.Device))
	case s.Reason != "":
		d.Recorded = comment(fmt.Sprintf("%s after %s buffers (%s)", s.Outcome, render.Made(s), s.Reason))
	default:
		d.Recorded = comment(fmt.Sprintf("%s after %s buffers", s.Outcome, render.Made(s)))
	}
	return reproTemplate.Execute(w, d)
}

// progressEvery is how many buffers the reproducer creates between two progress lines: a GiB of them, or
// one where a buffer is larger, and no more than a sixty-fourth of the buffers the job made. A step of bytes
// keeps the lines few for small buffers and frequent for large ones, where each buffer is a large part of
// what the machine has; the step of the job's own end keeps a reproducer that a limit kills near it (a
// 1 GiB cgroup: killed near buffer 980, where a GiB step had printed only "1 buffers done") telling how far
// it got, within a sixty-fourth.
func progressEvery(size, made uint64) uint64 {
	every := uint64(1)
	if size > 0 && size < 1<<30 {
		every = (1 << 30) / size
	}
	return max(1, min(every, made/64))
}

// variant places a variant's settings: RLIMIT_ keys as setrlimit calls, LD_ variables on the command line,
// the others as setenv calls.
func (d *reproData) variant(settings map[string]string) error {
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var launch []string
	for _, k := range keys {
		v := settings[k]
		switch {
		case result.IsLimitSetting(k):
			// A limit of the process, not a variable: the name is one of the few LimitValue knows (a C
			// identifier of <sys/resource.h>), the value a number it read.
			n, err := result.LimitValue(k, v)
			if err != nil {
				return err
			}
			value := "RLIM_INFINITY"
			switch n {
			case result.HardLimit:
				value = "HARD_LIMIT"
			case result.Unlimited:
			default:
				value = fmt.Sprintf("(rlim_t)%dULL", n)
			}
			d.Limits = append(d.Limits, [3]string{k, value, cString(v)})
		case strings.HasPrefix(k, "LD_"):
			// The dynamic loader reads LD_ variables when the program starts: setenv inside it changes
			// nothing, so these go on the command line that runs it.
			launch = append(launch, k+"="+render.ShellQuote([]string{v}))
		default:
			d.Settings = append(d.Settings, [2]string{cString(k), cString(v)})
		}
	}
	if len(launch) > 0 {
		d.Launch = comment(strings.Join(launch, " ")) + " "
	}
	return nil
}

// cString is s as the inside of a C string literal: printable ASCII as is (quotes and backslashes escaped),
// every other byte as an octal escape, so no foreign string can end the literal or the line.
func cString(s string) string {
	b := &strings.Builder{}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '?': // never a trigraph
			b.WriteString(`\?`)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			fmt.Fprintf(b, `\%03o`, c)
		}
	}
	return b.String()
}

// comment is s made safe inside a C block comment: one line, printable, and unable to close the comment.
func comment(s string) string {
	s = render.Plain(s)
	s = strings.NewReplacer("*/", "* /", "/*", "/ *", "\n", " ", "\r", " ").Replace(s)
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

var reproTemplate = template.Must(template.New("repro").Parse(`/*
 * clmemprobe reproducer: {{.Summary}}.
 * clmemprobe recorded: {{.Recorded}}.
 * Generated by clmemprobe {{.Version}} from the run started {{.Started}}: {{.Command}}
 *
 * Build: cc repro.c -lOpenCL -o repro   (Debian, Ubuntu: apt-get install opencl-c-headers ocl-icd-opencl-dev)
 * Run:   {{.Launch}}./repro
 * Exit:  1 a call failed (the line before says which, in clmemprobe's words), 0 every buffer succeeded,
 *        2 the platform or a device is missing. After every buffer it waits for the device (clFinish), so the
 *        index is exact on runtimes that report a failure late.
 * Output: a progress line after the first buffer and every {{.Every}} ({{.EverySize}}), unbuffered, so that a
 *        reproducer the OOM killer ends has said how far it got.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, also under -std=c99 */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clCreateCommandQueue, as clmemprobe calls it: OpenCL 1.2 runtimes have no other */
#include <CL/cl.h>
{{- if .Limits}}
#include <errno.h>
#include <sys/resource.h>
{{- end}}
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CL_MEM_DEVICE_HANDLE_LIST_KHR
#define CL_MEM_DEVICE_HANDLE_LIST_KHR 0x2051 /* cl_khr_external_memory */
#endif

static const char platform_name[] = "{{.Platform}}";
static const unsigned device_index[] = { {{- range $i, $d := .Devices}}{{if $i}}, {{end}}{{$d}}{{end -}} };
#define NDEV {{len .Devices}}
static const size_t buffer_size = {{.Size}};
static const unsigned long long budget = {{.Budget}};
static const unsigned long long progress_every = {{.Every}};
{{- if .Fill}}
static const unsigned char pattern[] = { {{- range $i, $b := .Pattern}}{{if $i}}, {{end}}{{$b}}{{end -}} };
{{- end}}
{{- if .Kernel}}
static const char kernel_source[] = "{{.KernelSource}}";
{{- end}}

static const char *code_name(cl_int c) {
	switch (c) {
{{- range .Codes}}
	case {{index . 0}}: return "{{index . 1}}";
{{- end}}
	}
	return "CL_UNKNOWN_ERROR";
}

static void CL_CALLBACK notify(const char *msg, const void *info, size_t n, void *user) {
	(void)info; (void)n; (void)user;
	fprintf(stderr, "runtime: %s\n", msg);
}

{{- if .Limits}}

/* set_limit sets a soft limit as "ulimit -S" does, keeping the hard one (HARD_LIMIT: raised to it); where
 * it cannot, it says so in one line and the program goes on under the limit it has. */
#define HARD_LIMIT ((rlim_t)-2)
static void set_limit(int resource, const char *name, rlim_t value, const char *given) {
	struct rlimit rl;
	if (getrlimit(resource, &rl) != 0) {
		printf("cannot read %s: %s\n", name, strerror(errno));
		return;
	}
	rl.rlim_cur = value == HARD_LIMIT ? rl.rlim_max : value;
	if (setrlimit(resource, &rl) != 0)
		printf("cannot set %s to %s (the hard limit is %llu): %s\n", name, given, (unsigned long long)rl.rlim_max, strerror(errno));
}
{{- end}}

static int failed(unsigned long long i, unsigned dev, const char *stage, const char *call, cl_int err) {
	printf("failed at buffer #%llu: %s (%d) at %s (%s), meant for device %u\n", i, code_name(err), err, stage, call, dev);
{{- if .HasRecord}}
	printf("clmemprobe recorded: buffer #{{.RecIndex}}: %s ({{.RecCode}}) at {{.RecStage}}\n", code_name({{.RecCode}}));
{{- end}}
	return 1;
}

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0); /* every line out as it is printed: SIGKILL loses none */
{{- range .Limits}}
	set_limit({{index . 0}}, "{{index . 0}}", {{index . 1}}, "{{index . 2}}"); /* the variant's limit, before the runtime loads */
{{- end}}
{{- range .RunEnv}}
	setenv("{{index . 0}}", "{{index . 1}}", 0); /* as in the run, unless set here */
{{- end}}
{{- range .Settings}}
	setenv("{{index . 0}}", "{{index . 1}}", 1); /* the variant's setting, before the runtime loads */
{{- end}}
	cl_platform_id platforms[64];
	cl_uint np = 0;
	cl_int err = clGetPlatformIDs(64, platforms, &np);
	if (err != CL_SUCCESS) return failed(0, 0, "setup", "clGetPlatformIDs", err);
	cl_platform_id platform = NULL;
	for (cl_uint p = 0; p < np && p < 64 && !platform; p++) {
		char name[1024] = "";
		clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof name - 1, name, NULL);
		if (strstr(name, platform_name)) platform = platforms[p];
	}
	if (!platform) {
		fprintf(stderr, "no platform named \"%s\"\n", platform_name);
		return 2;
	}
	cl_device_id all[256], dev[NDEV];
	cl_uint nd = 0;
	err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 256, all, &nd);
	if (err != CL_SUCCESS) return failed(0, 0, "setup", "clGetDeviceIDs", err);
	for (int d = 0; d < NDEV; d++) {
		if (device_index[d] >= nd) {
			fprintf(stderr, "the platform has %u device(s); device %u is missing\n", nd, device_index[d]);
			return 2;
		}
		dev[d] = all[device_index[d]];
	}
	/* {{if .Shared}}One context over every device{{else}}One context per device{{end}}. */
	cl_context ctx[NDEV];
	for (int d = 0; d < NDEV; d++) {
		cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
{{- if .Shared}}
		ctx[d] = d == 0 ? clCreateContext(props, NDEV, dev, notify, NULL, &err) : ctx[0];
{{- else}}
		ctx[d] = clCreateContext(props, 1, &dev[d], notify, NULL, &err);
{{- end}}
		if (err != CL_SUCCESS) return failed(0, device_index[d], "setup", "clCreateContext", err);
	}
{{- if or .Fill .Kernel .Migrate}}
	cl_command_queue queue[NDEV];
	for (int d = 0; d < NDEV; d++) {
		queue[d] = clCreateCommandQueue(ctx[d], dev[d], 0, &err);
		if (err != CL_SUCCESS) return failed(0, device_index[d], "setup", "clCreateCommandQueue", err);
	}
{{- end}}
{{- if .Kernel}}
	cl_kernel kernel[NDEV];
	for (int d = 0; d < NDEV; d++) {
		const char *src = kernel_source;
		cl_program prog = clCreateProgramWithSource(ctx[d], 1, &src, NULL, &err);
		if (err == CL_SUCCESS) err = clBuildProgram(prog, 0, NULL, "", NULL, NULL);
		if (err != CL_SUCCESS) return failed(0, device_index[d], "setup", "clBuildProgram", err);
		kernel[d] = clCreateKernel(prog, "touch", &err);
		if (err != CL_SUCCESS) return failed(0, device_index[d], "setup", "clCreateKernel", err);
	}
{{- end}}
{{- if .CopyHostPtr}}
	/* One source every buffer copies (CL_MEM_COPY_HOST_PTR), as clmemprobe shares one. */
	void *copy_source = malloc(buffer_size);
	if (copy_source == NULL) {
		fprintf(stderr, "no host memory for the source block\n");
		return 1;
	}
	memset(copy_source, 0xA5, buffer_size);
{{- end}}
	printf("up to %llu buffers of %llu bytes, a progress line every %llu\n", budget, (unsigned long long)buffer_size, progress_every);
	for (unsigned long long i = 0; i < budget; i++) {
		int d = (int)(i % NDEV);
		cl_mem m; /* never released, as in the loop that fails */
{{- if .UseHostPtr}}
		void *host = NULL; /* the buffer's own storage (CL_MEM_USE_HOST_PTR), page-aligned, never freed */
		if (posix_memalign(&host, 4096, buffer_size) != 0) {
			fprintf(stderr, "buffer #%llu: no host memory for its storage\n", i);
			return 1;
		}
		memset(host, 0xA5, buffer_size);
{{- else if .CopyHostPtr}}
		void *host = copy_source;
{{- else}}
		void *host = NULL;
{{- end}}
{{- if .DeviceList}}
		cl_mem_properties mprops[] = {CL_MEM_DEVICE_HANDLE_LIST_KHR, (cl_mem_properties)dev[d], 0, 0};
		m = clCreateBufferWithProperties(ctx[d], mprops, {{.Flags}}, buffer_size, host, &err);
		if (err != CL_SUCCESS) return failed(i, device_index[d], "create", "clCreateBufferWithProperties", err);
{{- else}}
		m = clCreateBuffer(ctx[d], {{.Flags}}, buffer_size, host, &err);
		if (err != CL_SUCCESS) return failed(i, device_index[d], "create", "clCreateBuffer", err);
{{- end}}
{{- if .Migrate}}
		err = clEnqueueMigrateMemObjects(queue[d], 1, &m, 0, 0, NULL, NULL);
		if (err != CL_SUCCESS) return failed(i, device_index[d], "migrate", "clEnqueueMigrateMemObjects", err);
{{- end}}
{{- if .Fill}}
		err = clEnqueueFillBuffer(queue[d], m, pattern, sizeof pattern, 0, buffer_size, 0, NULL, NULL);
		if (err != CL_SUCCESS) return failed(i, device_index[d], "touch", "clEnqueueFillBuffer", err);
{{- end}}
{{- if .Kernel}}
		cl_uint seed = (cl_uint)i;
		size_t global = buffer_size;
		err = clSetKernelArg(kernel[d], 0, sizeof m, &m);
		if (err == CL_SUCCESS) err = clSetKernelArg(kernel[d], 1, sizeof seed, &seed);
		if (err != CL_SUCCESS) return failed(i, device_index[d], "touch", "clSetKernelArg", err);
		err = clEnqueueNDRangeKernel(queue[d], kernel[d], 1, NULL, &global, NULL, 0, NULL, NULL);
		if (err != CL_SUCCESS) return failed(i, device_index[d], "touch", "clEnqueueNDRangeKernel", err);
{{- end}}
{{- if or .Fill .Kernel .Migrate}}
		err = clFinish(queue[d]);
		if (err != CL_SUCCESS) return failed(i, device_index[d], "finish", "clFinish", err);
{{- else}}
		(void)m;
{{- end}}
		if (i == 0 || (i + 1) % progress_every == 0)
			printf("progress: %llu buffers done (%llu MiB)\n", i + 1, (i + 1) * (unsigned long long)buffer_size >> 20);
	}
	printf("no failure in %llu buffers\n", budget);
	return 0;
}
`))

// pickText says what a job was picked by: "strategy shared and flags 0x40", only the parts given.
func pickText(strategy, variant, flags string) string {
	var parts []string
	for _, p := range [][2]string{{"strategy", strategy}, {"variant", variant}, {"flags", flags}} {
		if p[1] != "" {
			parts = append(parts, p[0]+" "+p[1])
		}
	}
	return strings.Join(parts, " and ")
}

// jobList names the run's jobs as --strategy, --variant and --flags pick them, each once.
func jobList(r *result.Run) string {
	var names []string
	for _, s := range r.Jobs {
		name := fmt.Sprintf("%s (flags %s, variant %s)", s.Strategy, result.FlagsName(s.Flags), result.VariantName(s.Variant))
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}
