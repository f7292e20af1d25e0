package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/google/pprof/profile"
)

const leakFrames, leakCached = 300, 200 // leak's defaults: upload_frames' buffers, alloc_cache's

// leakProgram is scripts/traceprog's leak, built beside traceprog.
func leakProgram(t *testing.T) string {
	t.Helper()
	return filepath.Join(filepath.Dir(Traceprog(t)), "leak")
}

// siteOf is the ledger's site whose innermost frame is function fn.
func siteOf(t *testing.T, tr *result.Trace, fn string) *result.TraceSite {
	t.Helper()
	if tr.Ledger == nil {
		t.Fatal("the trace has no ledger")
	}
	for i, s := range tr.Ledger.Sites {
		if len(s.Frames) > 0 && s.Frames[0].Function == fn {
			return &tr.Ledger.Sites[i]
		}
	}
	t.Fatalf("no site in %s among %+v", fn, tr.Ledger.Sites)
	return nil
}

// liveByFunction reads a pprof profile and sums its bytes by each sample's innermost function.
func liveByFunction(t *testing.T, path string) map[string]int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	bytesAt := -1
	for i, st := range p.SampleType {
		if st.Type == "bytes" {
			bytesAt = i
		}
	}
	out := map[string]int64{}
	for _, s := range p.Sample {
		if bytesAt < 0 || len(s.Location) == 0 || len(s.Location[0].Line) == 0 {
			t.Fatalf("%s: sample types %v, sample %+v", path, p.SampleType, s)
		}
		out[s.Location[0].Line[0].Function.Name] += s.Value[bytesAt]
	}
	return out
}

// A program with two allocation paths, one that releases its buffers and one that keeps them, traced with
// the defaults on PoCL: the ledger names each path by its function and line, with what each created,
// released and kept; the verdict says the keeping function's buffers were never released and says
// nothing of the other; the pprof profile of what was live at the end, read by pprof's own parser and by
// `go tool pprof -top`, holds the keeping function with its bytes and not the other.
func TestLedgerNamesTheSiteThatNeverReleased(t *testing.T) {
	dir, tr, res := tracedInto(t, PoCLEnv(t), "--", leakProgram(t))
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	keep, churn := siteOf(t, tr, "alloc_cache"), siteOf(t, tr, "upload_frames")
	if keep.Created != leakCached || keep.Live != leakCached || keep.LiveB != leakCached*mib || keep.Released != 0 || keep.Sampled ||
		churn.Created != leakFrames || churn.Released != leakFrames || churn.Live != 0 || churn.PeakB != mib {
		t.Fatalf("alloc_cache %+v, upload_frames %+v", keep, churn)
	}
	for _, s := range []*result.TraceSite{keep, churn} {
		if f := s.Frames[0]; filepath.Base(f.File) != "leak.c" || f.Line <= 0 || len(s.Frames) < 2 || s.Frames[1].Function != "main" {
			t.Fatalf("site frames %+v", s.Frames)
		}
	}
	never := fmt.Sprintf("%d buffers (200 MiB) created in %s were never released.", leakCached, keep.Name())
	// The verdict: no failure, then the one site that kept its buffers; nothing of the other.
	if len(tr.Verdict) != 2 || tr.Verdict[1] != never {
		t.Fatalf("verdict %q; want the headline and only %q", tr.Verdict, never)
	}
	live := liveByFunction(t, filepath.Join(dir, "live-at-exit.pb.gz"))
	if live["alloc_cache"] != leakCached*mib || live["upload_frames"] != 0 || len(live) != 1 {
		t.Fatalf("live at exit by function: %v", live)
	}
	if _, err := os.Lstat(filepath.Join(dir, "live-at-failure.pb.gz")); !os.IsNotExist(err) {
		t.Fatalf("a profile at the failure of a program that had none: %v", err)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("go tool pprof reads the profile: no go on PATH")
	}
	top, err := exec.Command(goTool, "tool", "pprof", "-top", filepath.Join(dir, "live-at-exit.pb.gz")).Output()
	if flat, all := topFunctions(string(top)); err != nil || !slices.Equal(flat, []string{"alloc_cache"}) || slices.Contains(all, "upload_frames") {
		t.Fatalf("go tool pprof -top: %v: functions %q holding bytes themselves, %q in all; want alloc_cache alone, no upload_frames:\n%s", err, flat, all, top)
	}
}

// topFunctions are the functions of go tool pprof -top's rows, in order (the last field of each line under
// its "flat flat% sum% cum cum%" header): those that hold bytes themselves (flat), and all of them.
func topFunctions(top string) (flat, all []string) {
	rows := false
	for _, l := range strings.Split(top, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) > 0 && f[0] == "flat":
			rows = true
		case rows && len(f) >= 6:
			all = append(all, f[len(f)-1])
			if f[0] != "0" {
				flat = append(flat, f[len(f)-1])
			}
		}
	}
	return flat, all
}

// On the fault-injection runtime, the program's 600th create fails (in alloc_more, after upload_frames'
// 300 and alloc_cache's 200): the ledger has what each site held at that moment, the verdict names the site
// that held most of it with its share of the live bytes, and live-at-failure.pb.gz holds the same.
// alloc_more's creates are written in buffer, which the compiler inlined into it: the site is buffer's
// line, inlined into alloc_more at its call's line.
func TestLedgerAtTheFirstFailure(t *testing.T) {
	const at = 600
	more := uint64(at - 1 - leakFrames - leakCached) // alloc_more's buffers before its failed one
	dir, tr, res := tracedInto(t, FaultEnv(t, "FAULTCL_OOR_AT="+strconv.Itoa(at)), "--", leakProgram(t), "fail")
	if res.code != 0 || tr.FirstFailure == nil || tr.FirstFailure.Index != at-1 {
		t.Fatalf("exit %d, first failure %+v: %s", res.code, tr.FirstFailure, res.stderr)
	}
	keep, churn, grow := siteOf(t, tr, "alloc_cache"), siteOf(t, tr, "upload_frames"), siteOf(t, tr, "buffer")
	if in := grow.Frames[0].InlinedInto; len(in) != 1 || in[0].Function != "alloc_more" || filepath.Base(in[0].File) != "leak.c" || in[0].Line <= grow.Frames[0].Line {
		t.Fatalf("buffer's frame %+v: want it inlined into alloc_more, called below its own line", grow.Frames[0])
	}
	if keep.AtFailure != leakCached || keep.AtFailureB != leakCached*mib || churn.AtFailure != 0 || grow.AtFailure != more || grow.AtFailureB != more*mib {
		t.Fatalf("at the failure: alloc_cache %+v, upload_frames %+v, buffer in alloc_more %+v", keep, churn, grow)
	}
	share := fmt.Sprintf("At the failure, %s held %.0f%% of the live bytes (200 MiB in %d buffers).", keep.Name(),
		100*float64(leakCached)/float64(leakCached+more), leakCached)
	if !containsLine(tr.Verdict, share) {
		t.Fatalf("verdict %q; want %q", tr.Verdict, share)
	}
	live := liveByFunction(t, filepath.Join(dir, "live-at-failure.pb.gz"))
	if live["alloc_cache"] != int64(leakCached*mib) || live["buffer"] != int64(more*mib) || len(live) != 2 {
		t.Fatalf("live at the failure by function: %v", live)
	}
	// The ticket's bundle carries both profiles, made from the trace as the bundle scrubbed it.
	tgz := filepath.Join(t.TempDir(), "ticket.tgz")
	if r := runTool(t, nil, "bundle", "--output", tgz, filepath.Join(dir, "trace.json")); r.code != 0 {
		t.Fatalf("bundle: exit %d: %s", r.code, r.stderr)
	}
	files := untar(t, tgz)
	for name, want := range map[string]map[string]int64{"live-at-exit.pb.gz": {"alloc_cache": leakCached * mib, "buffer": int64(more * mib)},
		"live-at-failure.pb.gz": live} {
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, files[name], 0o600); err != nil {
			t.Fatal(err)
		}
		if got := liveByFunction(t, path); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("the bundle's %s by function: %v, want %v", name, got, want)
		}
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

// Images and SVM allocations have sites of their own, with what each released; they are not buffers, so the
// contexts' buffer figures neither count them nor lose them at their release (an image's release once took
// one off its context's live buffers).
func TestLedgerOfImagesAndSVM(t *testing.T) {
	_, tr, res := tracedInto(t, PoCLEnv(t), "--", leakProgram(t), "images")
	if res.code != 0 || len(tr.Contexts) != 1 {
		t.Fatalf("exit %d, contexts %+v: %s", res.code, tr.Contexts, res.stderr)
	}
	images, svm := siteOf(t, tr, "make_images"), siteOf(t, tr, "svm_pool")
	const made, imagesReleased, allocated, freed = 5, 2, 10, 6 // leak.c's make_images and svm_pool
	if images.Allocates != result.AllocImages || images.Created != made || images.Released != imagesReleased || images.Live != made-imagesReleased ||
		images.LiveB != (made-imagesReleased)*mib || images.PeakB != made*mib {
		t.Fatalf("images' site %+v", images)
	}
	if svm.Allocates != result.AllocSVM || svm.Created != allocated || svm.Released != freed || svm.Live != allocated-freed || svm.PeakB != allocated*mib {
		t.Fatalf("SVM's site %+v", svm)
	}
	if c := tr.Contexts[0]; c.LiveBuffers != 0 || c.LiveBytes != 0 || c.BuffersCreated != 0 {
		t.Fatalf("the context's buffer figures %+v: it made no buffer", c)
	}
	for _, want := range []string{fmt.Sprintf("%d images (3 MiB) created in %s were never released.", made-imagesReleased, images.Name()),
		fmt.Sprintf("%d SVM allocations (4 MiB) created in %s were never released.", allocated-freed, svm.Name())} {
		if !containsLine(tr.Verdict, want) {
			t.Fatalf("verdict %q; want %q", tr.Verdict, want)
		}
	}
}

// Buffers under 1 MiB are sampled by bytes with the defaults: the bench loop's 100,000 creates of 1 KiB are
// attributed to its one site from far fewer samples, scaled to an estimate (said sampled) near the exact
// count; with --ledger-sample 0 every one is attributed and the figures are exact.
func TestLedgerSamplesSmallBuffers(t *testing.T) {
	const n = 100000
	env := PoCLEnv(t)
	_, sampled, _ := tracedInto(t, env, "--", Traceprog(t), "bench", strconv.Itoa(n), "1024")
	s := siteOf(t, sampled, "loop")
	// 100 MiB sampled every 512 KiB on average: about 200 samples, so an estimate off by 40% is over five
	// standard deviations away.
	if !s.Sampled || s.Attributed == 0 || s.Attributed >= n/100 || s.Created < n*6/10 || s.Created > n*14/10 || sampled.Contexts[0].BuffersCreated != n {
		t.Fatalf("sampled site %+v, context %+v", s, sampled.Contexts[0])
	}
	_, exact, _ := tracedInto(t, env, "--ledger-sample", "0", "--", Traceprog(t), "bench", strconv.Itoa(n), "1024")
	e := siteOf(t, exact, "loop")
	if e.Sampled || e.Attributed != n || e.Created != n || e.CreatedB != n*1024 || e.Live != exact.Contexts[0].LiveBuffers {
		t.Fatalf("site with every buffer attributed %+v, context %+v", e, exact.Contexts[0])
	}
	_, off, _ := tracedInto(t, env, "--ledger-sample", "off", "--", Traceprog(t), "bench", "10", "1024")
	if off.Ledger != nil {
		t.Fatalf("--ledger-sample off kept a ledger: %+v", off.Ledger)
	}
	oneLineError(t, runTool(t, traceEnv(env), "trace", "--ledger-sample", "lots", "--", "true"), exitUsage, "--ledger-sample")
}

// A Python program's sites are its extension module's function (pyopencl's _cl module is stripped of its
// own symbols: named by the function's start, from its unwind table), and say that the interpreter's
// frames came next, where the stack was cut.
func TestLedgerOfAPythonProgram(t *testing.T) {
	requirePyOpenCL(t)
	script := filepath.Join(t.TempDir(), "keep.py")
	src := "import pyopencl as cl\nctx = cl.Context([cl.get_platforms()[0].get_devices()[0]])\n" +
		"keep = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 1 << 20) for _ in range(20)]\nprint(len(keep))\n"
	if err := os.WriteFile(script, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	_, tr, res := tracedInto(t, PoCLEnv(t), "--", debianPython, script)
	if res.code != 0 || tr.Ledger == nil || len(tr.Ledger.Sites) == 0 {
		t.Fatalf("exit %d, ledger %+v: %s", res.code, tr.Ledger, res.stderr)
	}
	var created uint64
	for _, s := range tr.Ledger.Sites {
		f := s.Frames
		if len(f) == 0 || !strings.HasPrefix(filepath.Base(f[0].Object), "_cl.") || (f[0].Function == "" && f[0].FunctionStart == 0) ||
			!strings.HasPrefix(s.StoppedAt, "python3") || !strings.Contains(s.StoppedAt, "the Python interpreter") {
			b, _ := json.Marshal(s)
			t.Fatalf("site %s", b)
		}
		created += s.Created
	}
	if created != 20 {
		t.Fatalf("the sites created %d buffers, the script 20", created)
	}
}

// One helper, make_one, makes the buffers of two callers whose frames are alike (path_a's 300, then
// path_b's 200): the stacks differ only in the return address into the caller, at the same place on the
// stack, so the layer's cache of the first stack must fail its check on the second. The two sites are told
// apart, with their own counts, and the sentences name each by its caller.
func TestLedgerTellsTwoPathsThroughOneHelperApart(t *testing.T) {
	_, tr, res := tracedInto(t, PoCLEnv(t), "--", leakProgram(t), "paths")
	if res.code != 0 || tr.Ledger == nil {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	want := map[string]uint64{"path_a": 300, "path_b": 200} // leak.c's two callers
	labels := tr.Ledger.Labels(", called from ")
	for i, s := range tr.Ledger.Sites {
		if len(s.Frames) < 2 || s.Frames[0].Function != "make_one" {
			t.Fatalf("site %+v", s)
		}
		caller := s.Frames[1].Function
		if n, ok := want[caller]; !ok || s.Created != n || s.Live != n {
			t.Fatalf("make_one called from %s: %+v; want %v", caller, s, want)
		}
		delete(want, caller)
		sentence := fmt.Sprintf("%d buffers (%d MiB) created in %s, were never released.", s.Live, s.Live, labels[i])
		if !regexp.MustCompile(`, called from `+caller+` \(leak\.c:[0-9]+\)$`).MatchString(labels[i]) || !containsLine(tr.Verdict, sentence) {
			t.Fatalf("verdict %q; want %q", tr.Verdict, sentence)
		}
	}
	if len(want) != 0 || tr.Ledger.StacksRead < 2 {
		t.Fatalf("sites %+v, stacks read %d: want one site per caller, each stack read", tr.Ledger.Sites, tr.Ledger.StacksRead)
	}
}

// A buffer whose last reference its sub-buffer held (PoCL counts one: the program's release of the parent
// finds 2) is released when the runtime destroys it, at the sub-buffer's release: the site made 10 and
// released 10, and none is said kept.
func TestLedgerSeesAParentGoWithItsSubBuffer(t *testing.T) {
	_, tr, res := tracedInto(t, PoCLEnv(t), "--", leakProgram(t), "subs")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	const made = 10 // leak.c's subs
	if s := siteOf(t, tr, "make_parent"); s.Created != made || s.Released != made || s.Live != 0 {
		t.Fatalf("make_parent's site %+v", s)
	}
	// Nothing kept, so the verdict is its headline alone: no sentence on a site.
	if len(tr.Verdict) != 1 {
		t.Fatalf("verdict %q: want the headline alone, no site that released all it made", tr.Verdict)
	}
}

// A program whose file is replaced before the tool reads it (rebuilt while it ran, say) is not named from
// the new file: the build ID the layer read from the mapped object differs from the file's, and the frames
// are left unnamed, said so, rather than named from another binary.
func TestLedgerNamesNoFrameFromAChangedFile(t *testing.T) {
	dir := t.TempDir()
	copyOf := filepath.Join(dir, "leak")
	b, err := os.ReadFile(leakProgram(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copyOf, b, 0o700); err != nil {
		t.Fatal(err)
	}
	script := `"$1" && cp "$2" "$1.new" && mv "$1.new" "$1"` // runs the copy, then puts another binary there
	_, tr, res := tracedInto(t, PoCLEnv(t), "--", "/bin/sh", "-c", script, "sh", copyOf, Traceprog(t))
	if res.code != 0 || tr.Ledger == nil || len(tr.Ledger.Sites) == 0 {
		t.Fatalf("exit %d, ledger %+v: %s", res.code, tr.Ledger, res.stderr)
	}
	for _, s := range tr.Ledger.Sites {
		f := s.Frames[0]
		if f.Object != copyOf || !f.ObjectChanged || f.Function != "" || f.File != "" || f.BuildID == "" {
			t.Fatalf("the copy's frame %+v", f)
		}
	}
	s := tr.Ledger.Sites[0]
	want := fmt.Sprintf("%d buffers (%s) created in leak+%#x (the file changed since the program ran) were never released.", s.Live, units.Bytes(s.LiveB), s.Frames[0].Address)
	if !containsLine(tr.Verdict, want) {
		t.Fatalf("verdict %q; want %q", tr.Verdict, want)
	}
}
