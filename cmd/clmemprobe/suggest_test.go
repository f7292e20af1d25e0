package main

import (
	"path/filepath"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/result"
)

// swapped is name with its second and third letters swapped ("run" -> "rnu"), a slip of one key.
func swapped(name string) string {
	r := []rune(name)
	r[1], r[2] = r[2], r[1]
	return string(r)
}

// dropped is name without its last letter ("fill" -> "fil").
func dropped(name string) string { return name[:len(name)-1] }

// A mistyped command or value of any flag with a fixed set of values is answered with one line, exit 2,
// naming the closest value: short words (where Jaro-Winkler sees nothing) as well as long ones.
func TestMistypedNamesGetTheClosest(t *testing.T) {
	file := filepath.Join(t.TempDir(), "run.json")
	for _, c := range []struct {
		want string
		args []string
	}{
		{"run", []string{swapped("run")}},
		{"run", []string{"help", swapped("run")}},
		{string(result.TouchFill), []string{"run", "--dry-run", "--touch", dropped(string(result.TouchFill))}},
		{"markdown", []string{"run", "--dry-run", "--format", swapped("markdown")}},
		{"markdown", []string{"report", "--format", dropped("markdown"), file}},
		{"markdown", []string{"compare", "--format", dropped("markdown"), file, file}},
		{"csv", []string{"merge", "--format", swapped("csv"), file}},
		{"json", []string{"check", "--format", dropped("json"), "--expect", file}},
		{"json", []string{"devices", "--format", swapped("json")}},
		{string(result.Shared), []string{"run", "--dry-run", "--strategies", swapped(string(result.Shared))}},
		{probe.AttributionPerBuffer, []string{"run", "--dry-run", "--attribution", dropped(probe.AttributionPerBuffer)}},
		{probe.Presets[0].Name, []string{"run", "--dry-run", "--variant-preset", dropped(probe.Presets[0].Name)}},
		{"bash", []string{"completion", swapped("bash")}},
	} {
		res := inProcess(t, Env(), c.args...)
		oneLineError(t, res, exitUsage, "(did you mean "+c.want+"?)")
	}
	if _, err := report.Lookup("markdown", report.KindRun); err != nil {
		t.Fatal(err) // the names above are formats this build has
	}
}
