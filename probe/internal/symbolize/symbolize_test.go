package symbolize

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

const source = `#include <stdio.h>
static inline __attribute__((always_inline)) int helper(volatile int *x) {
	return *x * 3;
}
__attribute__((noinline)) int keeper(int n) {
	volatile int x = n;
	return helper(&x);
}
int main(int argc, char **argv) { (void)argv; return keeper(argc); }
`

// built compiles source with debug information and returns the binary and its copy stripped of every
// symbol table and of the debug information.
func built(t *testing.T) (string, string) {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Fatal("no C compiler: the symbolizer is tested on a binary it compiles (apt-get install gcc)")
	}
	dir := t.TempDir()
	src, bin, stripped := filepath.Join(dir, "prog.c"), filepath.Join(dir, "prog"), filepath.Join(dir, "prog-stripped")
	if err := os.WriteFile(src, []byte(source), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-O2", "-g", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if out, err := exec.Command("objcopy", "--strip-all", bin, stripped).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v: %s", err, out)
	}
	return bin, stripped
}

// keeperSymbol is where the binary's own symbol table puts keeper.
func keeperSymbol(t *testing.T, bin string) elf.Symbol {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == "keeper" {
			return s
		}
	}
	t.Fatal("no keeper in the symbol table")
	return elf.Symbol{}
}

// A return address inside a function is named by its symbol, with the source line of the instruction
// before it, and where that instruction is an inlined function's, by the inlined function, inlined into the
// symbol's at the call's line; in the stripped copy, with neither symbols nor debug information, it is
// named by the start of the function as the unwind table gives it, which is the symbol's own address.
func TestFrameNamesAFunctionWithAndWithoutSymbols(t *testing.T) {
	bin, stripped := built(t)
	keeper := keeperSymbol(t, bin)
	objs := New()
	inlined := 0
	for ret := keeper.Value + 1; ret <= keeper.Value+keeper.Size; ret++ {
		f := objs.Frame(bin, ret)
		switch {
		case f.Function == "keeper" && f.File != "" && f.Line >= 5 && f.Line <= 8 && len(f.InlinedInto) == 0:
		case f.Function == "helper" && f.Line == 3 && len(f.InlinedInto) == 1 && f.InlinedInto[0] == (Call{"keeper", f.File, 7}):
			inlined++
		default:
			t.Fatalf("with symbols, at %#x: %+v", ret, f)
		}
		if filepath.Base(f.File) != "prog.c" || f.Start != 0 {
			t.Fatalf("with symbols, at %#x: %+v", ret, f)
		}
	}
	if inlined == 0 {
		t.Fatal("no address of keeper is named as helper's inlined code")
	}
	ret := keeper.Value + keeper.Size/2 + 1
	if objs.BuildID(bin) == "" || objs.BuildID(bin) != objs.BuildID(stripped) {
		t.Fatalf("build ids %q and %q", objs.BuildID(bin), objs.BuildID(stripped))
	}
	g := objs.Frame(stripped, ret)
	if g.Function != "" || g.File != "" || g.Start != keeper.Value {
		t.Fatalf("stripped: %+v, keeper starts at %#x", g, keeper.Value)
	}
}

// A path that is no object file (missing, a folder, relative, not ELF) names nothing and panics nowhere.
func TestFrameOfNoObject(t *testing.T) {
	junk := filepath.Join(t.TempDir(), "junk.so")
	if err := os.WriteFile(junk, []byte("\x7fELF\x02\x01\x01not really an object file at all"), 0o600); err != nil {
		t.Fatal(err)
	}
	objs := New()
	for _, p := range []string{"", "relative.so", t.TempDir(), "/nonexistent/lib.so", junk} {
		if f := objs.Frame(p, 0x1234); f.Function != "" || f.Start != 0 || f.File != "" || f.InlinedInto != nil || objs.BuildID(p) != "" {
			t.Fatalf("%q: %+v", p, f)
		}
	}
}

// GCC's names for the specialised copies of a function are the function's own name.
func TestUnclone(t *testing.T) {
	for in, want := range map[string]string{"alloc.isra.0": "alloc", "alloc.constprop.0.isra.0": "alloc", "f.cold": "f", "f.part.3": "f", "x.y": "x.y", "main": "main"} {
		if got := unclone(in); got != want {
			t.Errorf("unclone(%q) = %q, want %q", in, got, want)
		}
	}
}
