// Package setuptest tests scripts/setup.sh's failures: each one line that says what failed and what to do,
// and a non-zero exit. (The fresh-machine test, scripts/fresh-machine-test.sh, proves the success path on a
// new Debian root.)
package setuptest

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func setupScript() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "setup.sh")
}

// toolsPath is a folder of links to the programs setup.sh uses, without go, and without apt-get unless
// withApt: a machine that lacks them.
func toolsPath(t *testing.T, withGo bool) string {
	t.Helper()
	dir := t.TempDir()
	tools := []string{"bash", "awk", "sort", "head", "sed", "mktemp", "rm", "mv", "mkdir", "chmod", "find", "curl", "sha256sum",
		"unzip", "tail", "cut", "uname", "id", "grep", "dirname", "cat", "ls", "tr"}
	if withGo {
		tools = append(tools, "go")
	}
	for _, tool := range tools {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s is not installed here", tool)
		}
		if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"/sbin/ldconfig", "/usr/sbin/ldconfig"} {
		if _, err := os.Stat(p); err == nil {
			_ = os.Symlink(p, filepath.Join(dir, "ldconfig"))
			break
		}
	}
	return dir
}

func runSetup(t *testing.T, env ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", setupScript())
	cmd.Env = append([]string{"HOME=" + t.TempDir(), "CLMEMPROBE_TOOLCHAIN=" + t.TempDir()}, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), code
}

// lastLine is the last line setup.sh printed: the one that must say what failed and what to do.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}

func TestChecksumMismatch(t *testing.T) {
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("this is not the Go toolchain"))
	}))
	defer proxy.Close()
	out, code := runSetup(t, "PATH="+toolsPath(t, false), "GOPROXY="+proxy.URL)
	if code == 0 || !strings.Contains(lastLine(out), "checksum mismatch") || !strings.Contains(lastLine(out), "install Go yourself") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
}

func TestProxyUnreachable(t *testing.T) {
	out, code := runSetup(t, "PATH="+toolsPath(t, false), "GOPROXY=http://127.0.0.1:1")
	if code == 0 || !strings.Contains(lastLine(out), "could not fetch") || !strings.Contains(lastLine(out), "set GOPROXY") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
}

func TestNoProxyInGOPROXY(t *testing.T) {
	out, code := runSetup(t, "PATH="+toolsPath(t, false), "GOPROXY=off")
	if code == 0 || !strings.HasPrefix(lastLine(out), "setup: GOPROXY=off names no proxy to fetch Go from: set GOPROXY to one (the default is https://proxy.golang.org), or install Go ") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
}

func TestNoAptGet(t *testing.T) {
	empty := t.TempDir() // no .icd file: PoCL must be installed, and there is no apt-get to do it
	out, code := runSetup(t, "PATH="+toolsPath(t, true), "OCL_ICD_VENDORS="+empty)
	if code == 0 || lastLine(out) != "setup: missing pocl-opencl-icd and there is no apt-get here: install them with this system's package manager, then run this again" {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
}
