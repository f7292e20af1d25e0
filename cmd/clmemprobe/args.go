package main

import (
	"strings"

	"github.com/urfave/cli/v2"
	"github.com/xrash/smetrics"
)

// flagsFirst moves a command's flags in front of its other arguments, so that flags may follow file
// arguments as users type them (clmemprobe report RUN.json --format markdown): the flag parser stops at
// the first argument that is not a flag. A flag that takes a value keeps the argument after it; "--" ends
// the flags, and everything after it stays an argument.
func flagsFirst(app *cli.App, args []string) []string {
	// A completion request must keep its last word last.
	if len(args) < 3 || args[len(args)-1] == "--generate-bash-completion" {
		return args
	}
	cmd := app.Command(args[1])
	if cmd == nil {
		return args
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		dg, ok := f.(cli.DocGenerationFlag)
		for _, n := range f.Names() {
			takesValue[n] = ok && dg.TakesValue()
		}
	}
	var flags, rest []string
	in := args[2:]
	for i := 0; i < len(in); i++ {
		a := in[i]
		if a == "--" {
			rest = append(rest, in[i:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			rest = append(rest, a)
			continue
		}
		flags = append(flags, a)
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if takesValue[name] && !hasValue && i+1 < len(in) {
			i++
			flags = append(flags, in[i])
		}
	}
	out := append([]string{args[0], args[1]}, flags...)
	return append(out, rest...)
}

// suggestion returns " (did you mean X?)" for the closest of names to what was typed, or "" when none is
// close.
func suggestion(typed string, names []string) string {
	best, score := "", 0.0
	for _, n := range names {
		if s := smetrics.JaroWinkler(typed, n, 0.7, 4); s > score {
			best, score = n, s
		}
	}
	if score < 0.8 {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// flagError says what Go's flag package says of a flag, with the flag written as it is typed: "--tuch", not
// "-tuch".
func flagError(err error) string {
	msg := err.Error()
	const undefined = "flag provided but not defined: -"
	if i := strings.Index(msg, undefined); i >= 0 {
		name := strings.TrimLeft(msg[i+len(undefined):], "-")
		if len(name) > 1 {
			return msg[:i] + "flag provided but not defined: --" + name
		}
	}
	return msg
}

// flagSuggestion suggests a flag of the command for an "flag provided but not defined: -X" error.
func flagSuggestion(cmd *cli.Command, err error) string {
	const undefined = "flag provided but not defined: -"
	msg := err.Error()
	i := strings.Index(msg, undefined)
	if i < 0 || cmd == nil {
		return ""
	}
	typed := strings.TrimLeft(msg[i+len(undefined):], "-")
	var names []string
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if len(n) > 1 {
				names = append(names, n)
			}
		}
	}
	s := suggestion(typed, names)
	if s == "" {
		return ""
	}
	return strings.Replace(s, "mean ", "mean --", 1)
}
