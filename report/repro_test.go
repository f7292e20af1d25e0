package report

import (
	"bytes"
	"strings"
	"testing"
)

// A variant's LD_ settings are read by the dynamic loader before main runs, so the reproducer cannot set
// them itself: they go on the command that runs it, and the other settings are set inside.
func TestReproPutsLoaderSettingsOnItsCommandLine(t *testing.T) {
	r := loadFixture(t)
	s := &r.Strategies[0]
	s.Variant = "driver-b"
	s.VariantSettings = map[string]string{"LD_LIBRARY_PATH": "/opt/driver b/lib", "POCL_MEMORY_LIMIT": "1"}
	var b bytes.Buffer
	if err := RenderWith(&b, "repro", r, Options{Strategy: string(s.Strategy), Variant: "driver-b"}); err != nil {
		t.Fatal(err)
	}
	c := b.String()
	if !strings.Contains(c, " * Run:   LD_LIBRARY_PATH='/opt/driver b/lib' ./repro\n") {
		t.Errorf("the run line should carry the loader setting, quoted:\n%s", c)
	}
	if strings.Contains(c, `setenv("LD_`) {
		t.Error("an LD_ setting is set inside the program, where it changes nothing")
	}
	if !strings.Contains(c, `setenv("POCL_MEMORY_LIMIT", "1", 1);`) {
		t.Error("the runtime setting should be set inside the program")
	}
}
