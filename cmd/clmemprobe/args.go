package main

import (
	"slices"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/report"
	edlib "github.com/hbollon/go-edlib"
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
	flags, rest := splitArgs(cmd, args[2:])
	out := append([]string{args[0], args[1]}, flags...)
	return append(out, rest...)
}

// splitArgs parts a command's arguments into its flags (with the values of those that take one) and the
// rest, in order; "--" and all after it are the rest.
func splitArgs(cmd *cli.Command, in []string) (flags, rest []string) {
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		dg, ok := f.(cli.DocGenerationFlag)
		for _, n := range f.Names() {
			takesValue[n] = ok && dg.TakesValue()
		}
	}
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
	return flags, rest
}

// helpArgs makes "clmemprobe help CMD" what "clmemprobe CMD --help" is, and "clmemprobe help" the program's
// help, as git, gh and kubectl have them. Help asked with arguments it cannot use is bad input, as any
// argument a command does not take is: otherwise the help library takes the argument for a help topic and
// fails with an exit code that means something else.
func helpArgs(app *cli.App, args []string) ([]string, error) {
	// A completion request for "help WORD" is answered by completion, not taken for a command to explain.
	if len(args) >= 2 && args[1] == "help" && args[len(args)-1] != "--generate-bash-completion" {
		switch {
		case len(args) == 2:
			return []string{args[0], "--help"}, nil
		case len(args) > 3:
			return nil, usageErr("help takes one command, got %q (clmemprobe help %s)", args[3], args[2])
		case app.Command(args[2]) == nil:
			var names []string
			for _, c := range app.Commands {
				names = append(names, c.Name)
			}
			return nil, usageErr("help: unknown command %q%s; the commands are %s", args[2], suggestion(args[2], names), strings.Join(names, ", "))
		}
		return []string{args[0], args[2], "--help"}, nil
	}
	if len(args) < 3 {
		return args, nil
	}
	cmd := app.Command(args[1])
	if cmd == nil {
		return args, nil
	}
	flags, rest := splitArgs(cmd, args[2:])
	if len(rest) > 0 && rest[0] != "--" && (slices.Contains(flags, "-h") || slices.Contains(flags, "--help")) {
		return nil, usageErr("%s --help takes no arguments, got %q (clmemprobe help %s)", cmd.Name, rest[0], cmd.Name)
	}
	if kept, help := withoutValues(cmd, flags); help {
		return append(append([]string{args[0], args[1]}, kept...), rest...), nil
	}
	return args, nil
}

// withoutValues are a command's flags less those given a value, and whether help is asked (-h or --help
// where a flag stands, not as another flag's value): help shows the same whatever a flag was given, and a
// value, parsed when it is set, must not stand in the way of the help asked for.
func withoutValues(cmd *cli.Command, flags []string) (kept []string, help bool) {
	for i := 0; i < len(flags); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(flags[i], "-"), "=")
		f := flagNamed(cmd.Flags, name)
		switch {
		case f != nil && hasValue:
		case f != nil && i+1 < len(flags):
			i++ // its value
		default:
			help = help || flags[i] == "-h" || flags[i] == "--help"
			kept = append(kept, flags[i])
		}
	}
	return kept, help
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
	// Jaro-Winkler matches letters only within a window of half the length, which for a short word is
	// none: "rnu" is far from "run" by it. A slip of one key (a letter left out, added, changed or two
	// swapped) is caught by the edit distance, which a longer word may have twice: the optimal string
	// alignment distance, where a swap of two adjacent letters counts one (smetrics's Levenshtein distances
	// count it two, more than the one slip a three-letter word may have: "rnu" would get no hint).
	if score < 0.8 {
		best = ""
		least := 1 + len(typed)/6
		for _, n := range names {
			if d := edlib.OSADamerauLevenshteinDistance(typed, n); d <= least {
				best, least = n, d-1
			}
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// lookupFormat is report.Lookup for a --format flag: bad input with the choices and, for a mistyped name,
// the closest of them.
func lookupFormat(name string, k report.Kind) (*report.Format, error) {
	f, err := report.Lookup(name, k)
	if err != nil {
		return nil, usageErr("--format: unknown format %q%s: choose %s", name, suggestion(name, report.Names(k)), strings.Join(report.Names(k), ", "))
	}
	return f, nil
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

// presetNames are the names --variant-preset takes, for a suggestion.
func presetNames() []string {
	names := []string{"list"}
	for _, p := range probe.Presets {
		names = append(names, p.Name)
	}
	return names
}
