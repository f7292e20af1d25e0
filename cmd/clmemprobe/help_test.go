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
