package worker

import (
	"os"
	"path/filepath"
	"testing"
)

// The loader's file is read from the child's own maps: the one file named libOpenCL.so* mapped, in
// however many segments, and none where two different ones are (the parent then keeps no answer).
func TestMappedLoaderIsTheOneLoaderFile(t *testing.T) {
	const (
		loader = "/usr/lib/x86_64-linux-gnu/libOpenCL.so.1.0.0"
		other  = "/opt/vendor/lib/libOpenCL.so.1"
	)
	seg := func(path string) string {
		return "7f1c2a000000-7f1c2a004000 r--p 00000000 fe:00 15630366                   " + path + "\n"
	}
	cases := []struct {
		name, maps, want string
	}{
		{"one file in segments", seg("/usr/lib/x86_64-linux-gnu/libc.so.6") + seg(loader) + seg(loader) + "7ffd0000-7ffd1000 rw-p 00000000 00:00 0 [stack]\n", loader},
		{"two loaders", seg(loader) + seg(other), ""},
		{"no loader", seg("/usr/lib/x86_64-linux-gnu/libc.so.6"), ""},
		{"a path with a space", seg("/opt/my libs/libOpenCL.so.1"), "/opt/my libs/libOpenCL.so.1"},
	}
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), "maps")
		if err := os.WriteFile(path, []byte(c.maps), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := mappedLoader(path); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if got := mappedLoader(filepath.Join(t.TempDir(), "none")); got != "" {
		t.Errorf("no maps file: %q", got)
	}
}
