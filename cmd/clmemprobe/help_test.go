package main

import (
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// exitSection is the EXIT CODES section of a help text, up to the next heading.
func exitSection(help string) string {
	_, s, _ := strings.Cut(help, "EXIT CODES:")
	if i := strings.Index(s, "\nOPTIONS:"); i >= 0 {
		s = s[:i]
	}
	return s
}

// Every flag a command's exit codes name is a flag of that command: check and devices have no --out, so
// their help does not speak of an --out folder; run's does.
func TestExitCodesNameOnlyTheCommandsFlags(t *testing.T) {
	flag := regexp.MustCompile(`--[a-z][a-z-]*`)
	for _, cmd := range newApp(io.Discard, io.Discard).Commands {
		var names []string
		for _, f := range cmd.Flags {
			names = append(names, f.Names()...)
		}
		res := inProcess(t, Env(), "help", cmd.Name)
		for _, used := range flag.FindAllString(exitSection(res.stdout), -1) {
			if !slices.Contains(names, strings.TrimPrefix(used, "--")) {
				t.Errorf("%s's exit codes name %s, which it does not have:\n%s", cmd.Name, used, exitSection(res.stdout))
			}
		}
		if slices.Contains(names, "out") && !strings.Contains(exitSection(res.stdout), "--out") {
			t.Errorf("%s has --out, and its exit code 2 does not say a folder in use is bad input", cmd.Name)
		}
		// Each code's text is about this command: run's meanings (failures are results, a partial result)
		// are run's alone, and no text speaks of another command.
		section := exitSection(res.stdout)
		for _, other := range commandNames() {
			if other != cmd.Name && regexp.MustCompile(`(^|[;,(]|\s{2})\s*`+other+`(:| writes)`).MatchString(section) {
				t.Errorf("%s's exit codes speak of %s:\n%s", cmd.Name, other, section)
			}
		}
		if cmd.Name != "run" && strings.Contains(section, "failed an allocation are results") {
			t.Errorf("%s's exit code 0 is run's:\n%s", cmd.Name, section)
		}
	}
	// check's 0 is a healthy node, and a check can be interrupted.
	check := exitSection(inProcess(t, Env(), "help", "check").stdout)
	if !regexp.MustCompile(`(?m)^\s*0\s+healthy`).MatchString(check) || !regexp.MustCompile(`(?m)^\s*130\s`).MatchString(check) {
		t.Errorf("check's exit codes should say 0 is healthy and list 130:\n%s", check)
	}
}

// Every command's help fits 80 columns: options, description and exit codes wrap there.
func TestHelpFits80Columns(t *testing.T) {
	for _, cmd := range append([]string{"--help"}, commandNames()...) {
		args := []string{"help", cmd}
		if cmd == "--help" {
			args = []string{cmd} // the program's own help
		}
		res := inProcess(t, Env(), args...)
		if res.code != 0 {
			t.Fatalf("help %s: exit %d: %s", cmd, res.code, res.stderr)
		}
		for _, l := range strings.Split(res.stdout, "\n") {
			if n := utf8.RuneCountInString(l); n > 80 {
				t.Errorf("help %s: a line is %d columns: %q", cmd, n, l)
			}
		}
	}
}

func commandNames() []string {
	var out []string
	for _, c := range newApp(io.Discard, io.Discard).Commands {
		out = append(out, c.Name)
	}
	return out
}
