package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// completionScript writes the shell's completion script to a file and returns it with a PATH on which
// "clmemprobe" is the binary under test, as a user's shell would find it.
func completionScript(t *testing.T, shell string) (script string, path string) {
	t.Helper()
	if _, err := exec.LookPath(shell); err != nil {
		skipOrFail(t, "%s is not installed (apt-get install %s; scripts/setup.sh --tests installs it)", shell, shell)
	}
	res := inProcess(t, Env(), "completion", shell)
	if res.code != 0 {
		t.Fatalf("completion %s: exit %d: %s", shell, res.code, res.stderr)
	}
	script = filepath.Join(t.TempDir(), "clmemprobe."+shell)
	if err := os.WriteFile(script, []byte(res.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	return script, filepath.Dir(Binary(t)) + string(os.PathListSeparator) + os.Getenv("PATH")
}

// completionCase is a command line up to the cursor, the last word the one being completed, and the
// candidates the shell must offer (all of them, or with some among them).
type completionCase struct {
	words   []string
	want    []string
	exactly bool
}

// completionCases are shared by the shells: values of flags, lists, per-command formats, files, folders.
func completionCases(dir string) []completionCase {
	return []completionCase{
		{words: []string{"run", "--touch", ""}, want: []string{"none", "fill", "kernel"}, exactly: true},
		{words: []string{"run", "--touch", "f"}, want: []string{"fill"}, exactly: true},
		// A list item comes also with its comma, so that the shell stops after it without a space.
		{words: []string{"run", "--strategies", "shared,p"}, want: []string{"shared,per-device", "shared,per-device,", "shared,pool", "shared,pool,"}, exactly: true},
		{words: []string{"run", "--strategies", "shared,per-device,migrate-first,device-list,p"}, want: []string{"shared,per-device,migrate-first,device-list,pool"}, exactly: true},
		{words: []string{"run", "--strategies", ""}, want: []string{"shared", "per-device,", "migrate-first", "device-list", "all"}},
		{words: []string{"run", "--format", ""}, want: []string{"table", "json", "markdown"}, exactly: true},
		{words: []string{"report", "--format", ""}, want: []string{"table", "csv", "repro", "png"}},
		{words: []string{"merge", "--format", "c"}, want: []string{"csv"}, exactly: true},
		{words: []string{"run", "--variant-preset", ""}, want: []string{"neo-pool", "list"}},
		{words: []string{"run", "--attribution", ""}, want: []string{"batched", "per-buffer"}, exactly: true},
		{words: []string{"run", "--t"}, want: []string{"--touch", "--timeout"}},
		{words: []string{"completion", ""}, want: []string{"bash", "zsh"}, exactly: true},
		{words: []string{"me"}, want: []string{"merge"}, exactly: true},
		// help takes a command's name: completed as the first word is, and nothing after it.
		{words: []string{"help", ""}, want: commandNames()},
		{words: []string{"help", "me"}, want: []string{"merge"}, exactly: true},
		{words: []string{"report", filepath.Join(dir, "ru")}, want: []string{filepath.Join(dir, "run.json")}, exactly: true},
		{words: []string{"run", "--out", filepath.Join(dir, "r")}, want: []string{filepath.Join(dir, "results")}, exactly: true},
		{words: []string{"report", "--output", filepath.Join(dir, "ru")}, want: []string{filepath.Join(dir, "run.json")}, exactly: true},
	}
}

// completionDir holds a result file and a folder whose names start alike, so that file and folder
// completion can be told apart.
func completionDir(t *testing.T) string {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "results"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func checkCandidates(t *testing.T, c completionCase, got []string) {
	t.Helper()
	for _, w := range c.want {
		if !slices.Contains(got, w) {
			t.Errorf("%q: candidates %q lack %q", c.words, got, w)
		}
	}
	if c.exactly && len(got) != len(c.want) {
		t.Errorf("%q: candidates %q, want exactly %q", c.words, got, c.want)
	}
}

// shellLines runs a shell command and returns its output's non-empty lines.
func shellLines(t *testing.T, path string, argv ...string) []string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(Env(), "PATH="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v: %s", argv[0], err, out)
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// bashQuote writes s as one word of a bash or zsh command line.
func bashQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Bash's completion function, called as bash calls it (COMP_WORDS, COMP_CWORD), offers the values of the
// flag before the cursor, not the flag again, and names of files and folders where they are asked for.
func TestBashCompletesFlagValues(t *testing.T) {
	script, path := completionScript(t, "bash")
	dir := completionDir(t)
	cases := append(completionCases(dir),
		// bash splits --touch=f at the "=": COMP_WORDS holds --touch, = and f.
		completionCase{words: []string{"run", "--touch", "=", ""}, want: []string{"none", "fill", "kernel"}, exactly: true},
		completionCase{words: []string{"run", "--touch", "=", "k"}, want: []string{"kernel"}, exactly: true})
	for _, c := range cases {
		words := append([]string{"clmemprobe"}, c.words...)
		if n := len(c.words); n >= 2 && c.words[n-2] == "=" && c.words[n-1] == "" {
			words = words[:len(words)-1] // the cursor right after "=": the word being completed is "="
		}
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, bashQuote(w))
		}
		prog := "source " + bashQuote(script) + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" +
			strconv.Itoa(len(words)-1) + "\n_clmemprobe_complete\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		checkCandidates(t, c, shellLines(t, path, "bash", "--norc", "--noprofile", "-c", prog))
	}
}

// zsh's completion function, called with words and CURRENT set as the completion system sets them, hands
// compadd the values of the flag before the cursor, and asks _files for names of files and folders. The
// completion system's builtins are stood in for by functions that print what they were given, and _files
// by one that lists the names as zsh would.
func TestZshCompletesFlagValues(t *testing.T) {
	script, path := completionScript(t, "zsh")
	dir := completionDir(t)
	stubs := `compdef() { : }
compadd() {
	while [[ $1 == -* ]]; do
		case $1 in -S) shift 2 ;; --) shift; break ;; *) shift ;; esac
	done
	print -rl -- "$@"
}
compset() { [[ $1 == -P ]] && PREFIX=${PREFIX#$2} }
_files() {
	local -a names
	if [[ $1 == -/ ]]; then names=(${PREFIX}*(N/)); else names=(${PREFIX}*(N)); fi
	print -rl -- $names
}
`
	for _, c := range completionCases(dir) {
		var quoted []string
		for _, w := range append([]string{"clmemprobe"}, c.words...) {
			quoted = append(quoted, bashQuote(w))
		}
		prog := stubs + "source " + bashQuote(script) + "\nwords=(" + strings.Join(quoted, " ") + ")\nCURRENT=" +
			strconv.Itoa(len(quoted)) + "\nPREFIX=${words[CURRENT]}\n_clmemprobe\n"
		checkCandidates(t, c, shellLines(t, path, "zsh", "-f", "-c", prog))
	}
}
