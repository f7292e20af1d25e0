// Package system collects what a driver team's bug template asks of the machine and the environment block
// does not hold: the GPUs on the PCI bus (ids, kernel driver, BARs, link, firmware), the DRI nodes' PCI
// mapping, the distribution, the kernel's build and boot parameters, its GPU modules and their versions,
// and the installed driver packages. Each collector reads its files under a sample.Root, so tests feed it
// fixture trees, and fails alone: what it could not read goes into System.Unread with why.
package system

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// A collector fills its part of the System and returns why it could not, "" when it could or when the
// machine has nothing of its kind.
type collector struct {
	name string
	fill func(root sample.Root, libs []string, s *result.System) string
}

// collectors run in this order; each is independent of the others.
var collectors = []collector{
	{"distribution", collectDistribution},
	{"kernel", collectKernel},
	{"modules", collectModules},
	{"pci", collectPCI},
	{"dri", collectDRI},
	{"packages", collectPackages},
}

// Collect reads the machine under root. libs are the OpenCL libraries the run loads (the loader and the
// registered ICDs' libraries): the packages that own them are recorded with the vendors' usual ones.
func Collect(root sample.Root, libs []string) *result.System { return CollectKeeping(root, libs, "") }

// CollectKeeping is Collect with the package database's answer kept in dir, the user's cache folder
// ("" keeps nothing; see collectPackagesKept).
func CollectKeeping(root sample.Root, libs []string, dir string) *result.System {
	s := &result.System{}
	for _, c := range collectors {
		fill := c.fill
		if c.name == "packages" && dir != "" {
			fill = func(root sample.Root, libs []string, s *result.System) string {
				return collectPackagesKept(root, libs, dir, s)
			}
		}
		if why := fill(root, libs, s); why != "" {
			if s.Unread == nil {
				s.Unread = map[string]string{}
			}
			s.Unread[c.name] = why
		}
	}
	return s
}

// The bounds of what one file may give: a hostile or broken file costs no more than these.
const (
	maxFileBytes = 1 << 20
	maxField     = 512
	maxItems     = 128
)

// readSmall reads a file of at most maxFileBytes; the rest of a longer one is not read.
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxFileBytes))
}

// readField is a file's first line, cleaned, "" where it cannot be read.
func readField(path string) string {
	b, err := readSmall(path)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return clean(line)
}

// maxCmdline bounds the boot parameters: the kernel's own bound is 2048 bytes on x86, 4096 on some others.
const maxCmdline = 4096

// clean makes a string read from the machine safe to keep: printable runes only (others become '?'),
// trimmed, at most maxField bytes.
func clean(s string) string { return cleanLimit(s, maxField) }

// cleanLimit is clean with its own bound.
func cleanLimit(s string, limit int) string {
	s = strings.Map(func(r rune) rune {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, strings.TrimSpace(s))
	if len(s) > limit {
		s = strings.ToValidUTF8(s[:limit], "") + "..."
	}
	return s
}

// lines calls each for every line of the file at path, at most maxFileBytes of it, until each says stop.
func lines(path string, each func(line string) (stop bool)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, maxFileBytes))
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for sc.Scan() {
		if each(sc.Text()) {
			return nil
		}
	}
	return sc.Err()
}

// collectDistribution reads os-release's PRETTY_NAME.
func collectDistribution(root sample.Root, _ []string, s *result.System) string {
	path := filepath.Join(root.Etc, "os-release")
	err := lines(path, func(line string) bool {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			s.Distribution = clean(strings.Trim(v, `"'`))
			return true
		}
		return false
	})
	if err != nil {
		return "cannot read " + path + ": " + errText(err)
	}
	return ""
}

// collectKernel reads the kernel's build string and its boot parameters.
func collectKernel(root sample.Root, _ []string, s *result.System) string {
	s.KernelBuild = readField(filepath.Join(root.Proc, "sys/kernel/version"))
	b, err := readSmall(filepath.Join(root.Proc, "cmdline"))
	line := cleanLimit(strings.TrimRight(string(b), "\n\x00"), maxCmdline)
	s.BootParameters = redactBootParameters(line)
	if err != nil || line == "" {
		return "cannot read " + filepath.Join(root.Proc, "cmdline")
	}
	return ""
}

// redactBootParameters is the kernel's own parameters of a command line, with the values of secret-looking
// ones taken out (a password on the command line is rare, but a ticket is public): a parameter's name in
// any case, its value quoted or not, as the kernel splits its command line. The kernel stops at a "--"
// word (quoted or not, as its parser strips the quotes): what follows is init's arguments (a virtual
// machine's guest init, say), not the kernel's, and not the ticket's business.
func redactBootParameters(cmdline string) string {
	var out []string
	for _, w := range cmdlineWords(cmdline) {
		if w == "--" || w == `"--"` {
			break
		}
		if k, _, ok := strings.Cut(w, "="); ok && result.IsSecret(strings.ToUpper(k)) {
			w = k + "=" + result.Redacted
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// cmdlineWords splits a kernel command line at spaces outside double quotes.
func cmdlineWords(s string) []string {
	var words []string
	var cur strings.Builder
	quoted := false
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
			cur.WriteRune(r)
		case r == ' ' && !quoted:
			if cur.Len() > 0 {
				words = append(words, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		words = append(words, cur.String())
	}
	return words
}

// errText is an error's text without the path it repeats.
func errText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}
