package report

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A variant's LD_ settings are read by the dynamic loader before main runs, so the reproducer cannot set
// them itself: they go on the command that runs it, and the other settings are set inside.
func TestReproPutsLoaderSettingsOnItsCommandLine(t *testing.T) {
	r := loadFixture(t)
	s := &r.Jobs[0]
	s.Variant = "driver-b"
	s.VariantSettings = map[string]string{"LD_LIBRARY_PATH": "/opt/driver b/lib", "POCL_MEMORY_LIMIT": "1"}
	var b bytes.Buffer
	if err := RenderWith(&b, "repro", judged(r), Options{Strategy: string(s.Strategy), Variant: "driver-b"}); err != nil {
		t.Fatal(err)
	}
	// The run line carries LD_LIBRARY_PATH, quoted; POCL_MEMORY_LIMIT is set inside, LD_ settings never.
	golden(t, "repro-loader-settings", b.Bytes())
}

// An argument with control or bidirectional characters is quoted as $'...': the report shows plain text,
// and bash, given it back, makes the same bytes.
func TestShellQuoteRoundTripsThroughBash(t *testing.T) {
	args := []string{"plain", "with space", "it's", `back\slash`, "esc\x1b[31m", "cr\rlf\n", "rtl\u202eexe", "c1\u0085", "bad\xffbyte", "tab\t'q'\\"}
	quoted := ShellQuote(args)
	for _, c := range []string{"\x1b", "\r", "\n", "\u202e", "\u0085", "\xff"} {
		if strings.Contains(quoted, c) {
			t.Errorf("%q left in the quoted line: %q", c, quoted)
		}
	}
	// In the C locale too: the escapes are bytes, not characters the shell must know how to encode.
	cmd := exec.Command("bash", "-c", `printf '%s\0' `+quoted)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(got) != len(args) {
		t.Fatalf("bash saw %d arguments, want %d: %q", len(got), len(args), got)
	}
	for i := range args {
		if got[i] != args[i] {
			t.Errorf("argument %d came back as %q, want %q", i, got[i], args[i])
		}
	}
}
