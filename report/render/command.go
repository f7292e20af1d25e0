package render

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// ReproduceCommand is the run's command line with the recorded environment variables in front of it (the
// ones that change what loaders and runtimes do, secrets left out), ready to paste into a shell.
func ReproduceCommand(r *result.Run) string {
	return strings.Join(append(EnvWords(r.Environment), ShellQuote(PortableCommand(withoutLike(r.Command, r.Config.Like)))), " ")
}

// FromClone is where a reproduce line runs when its program is the clone's bin/clmemprobe: "; in a clone of
// it, where scripts/probe.sh builds bin/clmemprobe", to follow the project's address; "" where the line
// calls clmemprobe from the PATH. A bundle's reader has no bin/ of the reporter's (the step failed with "bin/
// clmemprobe: No such file or directory" in the unpacked bundle).
func FromClone(r *result.Run) string {
	if argv := PortableCommand(r.Command); len(argv) > 0 && strings.HasPrefix(argv[0], "bin/") {
		return "; in a clone of it, where `scripts/probe.sh` builds `bin/clmemprobe`"
	}
	return ""
}

// withoutLike is a run's command line with --like TRACE written out as the flags it stood for: the trace
// is a file of the user's, which neither a ticket's reader nor a bundle has, and the run took from it only
// its sizes, flag sets and count of devices (run --like). argv as it is where the run had no --like.
func withoutLike(argv []string, like *result.Like) []string {
	if like == nil || len(argv) == 0 {
		return argv
	}
	out := []string{argv[0]}
	devicesGiven := false
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			out = append(out, argv[i:]...)
			break
		}
		name, _, joined := strings.Cut(strings.TrimLeft(a, "-"), "=")
		devicesGiven = devicesGiven || strings.HasPrefix(a, "-") && name == "devices"
		if !strings.HasPrefix(a, "-") || name != "like" {
			out = append(out, a)
			continue
		}
		if !joined {
			i++ // the trace's path is the next word
		}
		out = append(out, likeFlags(like)...)
	}
	if !devicesGiven && like.ContextDevices > 0 {
		out = append(out, "--devices", fmt.Sprintf("0-%d", like.ContextDevices-1))
	}
	return out
}

// likeFlags are the run flags a traced program's mix stands for: its sizes, and its flag sets where they
// are not the default read-write alone.
func likeFlags(like *result.Like) []string {
	sizes := make([]string, len(like.Sizes))
	for i, s := range like.Sizes {
		sizes[i] = units.SizeArg(s)
	}
	out := []string{"--size", strings.Join(sizes, ",")}
	if len(sizes) > 1 {
		out[0] = "--sizes"
	}
	switch {
	case len(like.Flags) > 1:
		out = append(out, "--flag-sets", strings.Join(like.Flags, ";"))
	case len(like.Flags) == 1 && like.Flags[0] != result.FlagsName(""):
		out = append(out, "--flags", like.Flags[0])
	}
	return out
}

// EnvWords are the recorded environment variables as a command line's assignments, secrets left out.
func EnvWords(e *result.Environment) []string {
	var words []string
	if e != nil {
		for _, k := range SortedKeys(e.EnvVars) {
			if v := e.EnvVars[k]; v != result.Redacted {
				words = append(words, k+"="+ShellQuote([]string{v})) // the value quoted, so the shell still sees an assignment
			}
		}
	}
	return words
}

// portableDrops are the flags a reproduce line leaves out, by name, with whether each takes a value: they
// do not change what is measured on another machine. Files of the user's own (--out, --prom, -o/--output)
// and --force, which goes with --out; what is printed and how (--format, --wide, -q/--quiet, -v/--verbose);
// and --host-reserve, an amount sized to the user's machine (the other machine's default suits it; only 0,
// the guard turned off, changes what a run may reach, and is kept).
var portableDrops = map[string]bool{"out": true, "prom": true, "output": true, "o": true, "format": true, "host-reserve": true,
	"force": false, "wide": false, "quiet": false, "q": false, "verbose": false, "v": false}

// PortableCommand is a recorded command line as another machine would type it: the program by its name in
// the clone (bin/clmemprobe) or on the PATH, not by where the user's copy lies, and without the flags that
// do not change what is measured there (portableDrops): the reader neither has the user's files nor needs
// the user's output settings.
func PortableCommand(argv []string) []string {
	if len(argv) == 0 {
		return nil
	}
	prog := filepath.Base(argv[0])
	if filepath.Base(filepath.Dir(argv[0])) == "bin" {
		prog = "bin/" + prog
	}
	out := []string{prog}
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			out = append(out, argv[i:]...)
			break
		}
		name, value, joined := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takesValue, drop := portableDrops[name]
		if !strings.HasPrefix(a, "-") || !drop {
			out = append(out, a)
			continue
		}
		if takesValue && !joined && i+1 < len(argv) {
			i++ // the flag's value is the next word
			value = argv[i]
		}
		if name == "host-reserve" && guardOff(value) {
			out = append(out, "--host-reserve", "0") // the guard off: that changes what the run may reach
		}
	}
	return out
}

// guardOff says a --host-reserve value turns the guard off: "0" or "off", as run's help says.
func guardOff(value string) bool { return value == "off" || value == "0" }

// ShellQuote joins a command line so it can be pasted into a POSIX shell.
func ShellQuote(args []string) string {
	var out []string
	for _, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=,:+%@", r))
		}) < 0 {
			out = append(out, a)
			continue
		}
		if strings.IndexFunc(a, isControl) >= 0 {
			out = append(out, ansiQuote(a))
			continue
		}
		out = append(out, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	return strings.Join(out, " ")
}

// ansiQuote writes a as $'...' with its control and bidirectional characters as escapes: what the report
// shows is then plain text, and pasted into bash, ksh or zsh it is the same argument again.
func ansiQuote(a string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(a); {
		r, size := utf8.DecodeRuneInString(a[i:])
		switch {
		case r == utf8.RuneError && size == 1: // a byte that is not UTF-8, given back as that byte
			fmt.Fprintf(&b, `\x%02x`, a[i])
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case isControl(r):
			// The character's UTF-8 bytes: \u would depend on the shell's locale.
			for _, c := range []byte(a[i : i+size]) {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		default:
			b.WriteRune(r)
		}
		i += size
	}
	b.WriteByte('\'')
	return b.String()
}
