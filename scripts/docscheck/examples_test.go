// Package docscheck tests that the commands docs/examples shows are ones a user can type in a clone of the
// repository: each docs/examples/*/*.sh names no machine path or private harness, parses with
// bash -n, and names only repository paths (scripts/..., docs/...) that exist; and no command line shown in
// a Markdown or text file there (a line starting with "$ ") names the private bundle or a machine path.
package docscheck

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// module is the main module's path, as go.mod declares it.
const module = "github.com/clmemprobe/clmemprobe"

// forbidden are the substrings a command in docs/examples may not hold: the private bundle the commands
// were first run through (.device/...), the output folder its harness provided ($OUT), and paths of one
// machine (scratch files, home and work folders).
var forbidden = []string{".device", "/tmp/", "/root/", "/work/", "$OUT", "${OUT"}

// pathToken finds a repository-relative path: a run of [A-Za-z0-9._/-] that starts with scripts/ or docs/
// where no other such character precedes it (so "$R/docs/x" or "a/scripts/b" is not one).
var pathToken = regexp.MustCompile(`(?:^|[^A-Za-z0-9._/-])((?:scripts|docs)/[A-Za-z0-9._/-]*)`)

// root is the repository's top folder: the first folder at or above the test's working directory that holds
// the main module's go.mod (scripts/kubernetes, for one, is a module of its own).
func root(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("working directory: %v", err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module "+module+"\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod of module %s at or above the working directory: run go test inside the repository", module)
		}
		dir = parent
	}
}

// lines returns a file's lines.
func lines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v", err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), len(data)+1)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

// pathTokens returns the repository-relative paths a line names, trailing punctuation taken off.
func pathTokens(line string) []string {
	var out []string
	for _, m := range pathToken.FindAllStringSubmatch(line, -1) {
		if tok := strings.TrimRight(m[1], ".,;:"); tok != "" {
			out = append(out, tok)
		}
	}
	return out
}

func TestExampleCommands(t *testing.T) {
	top := root(t)
	files, err := filepath.Glob(filepath.Join(top, "docs", "examples", "*", "*.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no docs/examples/*/*.sh under %s: the examples' commands are gone or moved; keep each example's commands beside its results", top)
	}
	for _, file := range files {
		rel, _ := filepath.Rel(top, file)
		t.Run(filepath.ToSlash(rel), func(t *testing.T) { checkScript(t, top, file, filepath.ToSlash(rel)) })
	}
}

// checkScript holds one script of docs/examples to what a user can run from a clone.
func checkScript(t *testing.T, top, file, rel string) {
	ls := lines(t, file)
	if len(ls) == 0 || ls[0] != "#!/bin/bash" {
		t.Errorf("%s:1: does not start with #!/bin/bash: make its first line #!/bin/bash, as docs/examples/h200-verdict/commands.sh has", rel)
	}
	if !strings.Contains(strings.Join(ls, "\n"), "bash "+rel) {
		t.Errorf("%s: no comment says how to run it from a clone: add one such as\n#   bash %s OUTDIR", rel, rel)
	}
	for i, line := range ls {
		for _, bad := range forbidden {
			if strings.Contains(line, bad) {
				t.Errorf("%s:%d: names %q, a machine path or the private harness the commands were first run through, which a user of a clone cannot type: %s\n"+
					"\tuse the clone's paths instead (B=${CLMEMPROBE:-bin/clmemprobe}, programs built into bin/, \"$R\" from R=${1:-NAME}, $(mktemp -d) for scratch files)",
					rel, i+1, bad, strings.TrimSpace(line))
			}
		}
		for _, tok := range pathTokens(line) {
			if _, err := os.Stat(filepath.Join(top, filepath.FromSlash(tok))); err != nil {
				t.Errorf("%s:%d: names %s, which is not in the repository: correct the path, or add what it names", rel, i+1, tok)
			}
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Errorf("%s: no bash to check its syntax (bash -n): install bash", rel)
		return
	}
	if out, err := exec.Command(bash, "-n", file).CombinedOutput(); err != nil {
		t.Errorf("%s: bash -n fails (%v): fix the syntax error it reports:\n%s", rel, err, out)
	}
}

func TestExampleTranscripts(t *testing.T) {
	top := root(t)
	dir := filepath.Join(top, "docs", "examples")
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		ext := filepath.Ext(path)
		if d.IsDir() || (ext != ".md" && ext != ".txt") {
			return nil
		}
		n++
		rel, _ := filepath.Rel(top, path)
		for i, line := range lines(t, path) {
			if !strings.HasPrefix(strings.TrimLeft(line, " \t"), "$ ") {
				continue
			}
			for _, bad := range []string{".device", "/work/"} {
				if strings.Contains(line, bad) {
					t.Errorf("%s:%d: a command shown to the reader names %q, a path of the machine it ran on, which a user of a clone cannot type: %s\n"+
						"\tshow it as typed in a clone (bin/clmemprobe, programs built into bin/, a folder of the reader's)", filepath.ToSlash(rel), i+1, bad, strings.TrimSpace(line))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", dir, err)
	}
	if n == 0 {
		t.Fatalf("no .md or .txt file under docs/examples: the examples are gone or moved")
	}
}
