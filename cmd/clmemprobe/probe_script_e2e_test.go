package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// scripts/probe.sh gives PoCL two devices when PoCL is the only platform with devices, as the runtime lists
// them: a registered ICD without devices (Mesa's, here faultcl with FAULTCL_DEVICES=0) does not count, one
// with devices does. The script's own function decides, on this binary's real listing.
func TestProbeScriptGivesPoCLTwoDevicesWhenAloneByDevices(t *testing.T) {
	PoCLEnv(t) // skips (fails on CI) without PoCL
	pocl, _ := filepath.Glob("/etc/OpenCL/vendors/*pocl*.icd")
	vendors := t.TempDir()
	for _, f := range append(pocl, filepath.Join(FaultCL(t), "faultcl.icd")) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(vendors, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(Root(), "scripts", "probe.sh")
	for _, c := range []struct {
		name    string
		devices string // faultcl's devices beside PoCL
		alone   bool
	}{
		{"beside a platform without devices", "0", true},
		{"beside a platform with devices", "2", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command("bash", "-c", `. "$1" && pocl_alone "$2"`, "test", script, Binary(t))
			cmd.Env = Env("OCL_ICD_VENDORS="+vendors, "FAULTCL_DEVICES="+c.devices, "POCL_DEVICES=pthread")
			out, err := cmd.CombinedOutput()
			if alone := err == nil; alone != c.alone {
				t.Errorf("pocl_alone: %v (%v), want alone %v; output: %s", alone, err, c.alone, strings.TrimSpace(string(out)))
			}
		})
	}
}

// The quick start's probe with --format json writes run's JSON alone on stdout: the device list it shows
// first goes to stderr, so `scripts/probe.sh --format json > r.json` is a JSON file.
func TestProbeScriptJSONIsJSON(t *testing.T) {
	PoCLEnv(t)
	cmd := exec.Command("bash", filepath.Join(Root(), "scripts", "probe.sh"), "--format", "json", "--max-allocs", "5", "--strategies", "shared")
	cmd.Env = Env()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		skipOrFail(t, "scripts/probe.sh: %v: %s", err, stderr.String())
	}
	var r struct {
		SchemaVersion int `json:"schema_version"`
	}
	if err := json.Unmarshal(out, &r); err != nil || r.SchemaVersion != 1 {
		t.Fatalf("stdout is not run's JSON (%v): %.300s", err, out)
	}
	if !strings.Contains(stderr.String(), "platform") {
		t.Errorf("the device list is not on stderr: %.300s", stderr.String())
	}
}
