package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/urfave/cli/v2"
)

// Completion scripts ask the program itself what comes next: they pass the words before the cursor and the
// word being completed (empty after a space), then --generate-bash-completion, and the program answers with
// one candidate a line: commands, flags, or the values of the flag before the word. A first line of
// completeFiles or completeDirs asks the shell to complete names of files or folders instead, with what
// follows that line (a flag's "--name=" written as one word) left before them. Only the request flag and
// the callbacks are urfave/cli's: its own answer (DefaultCompleteWithFlags) names commands and flags, no
// flag's values, lists or file names, and its scripts are files of its repository, not Go values to print.
const bashCompletion = `# clmemprobe completion for bash: eval "$(clmemprobe completion bash)", or save it in
# /etc/bash_completion.d/clmemprobe.
_clmemprobe_complete() {
	local word=${COMP_WORDS[COMP_CWORD]} lead= n=$COMP_CWORD
	local -a lines
	# bash splits "--touch=fill" into --touch, = and fill: the program is asked about the whole word.
	if [[ $word == = && $n -gt 1 ]]; then
		lead=${COMP_WORDS[n-1]}= word= n=$((n-1))
	elif [[ $n -gt 2 && ${COMP_WORDS[n-1]} == = ]]; then
		lead=${COMP_WORDS[n-2]}= n=$((n-2))
	fi
	mapfile -t lines < <("${COMP_WORDS[@]:0:n}" "$lead$word" --generate-bash-completion 2>/dev/null)
	case ${lines[0]} in
	` + completeFiles + `) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$word") ;;
	` + completeDirs + `) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- "$word") ;;
	*)
		COMPREPLY=()
		local line
		for line in "${lines[@]}"; do
			[[ -n $line && $line == "$lead$word"* ]] && COMPREPLY+=("${line#"$lead"}")
		done
		;;
	esac
	return 0
}
complete -F _clmemprobe_complete clmemprobe
`

const zshCompletion = `#compdef clmemprobe
# clmemprobe completion for zsh: eval "$(clmemprobe completion zsh)", or save it as _clmemprobe in a folder
# of $fpath.
_clmemprobe() {
	local word=${words[CURRENT]}
	local -a lines
	lines=("${(@f)$(${words[1,CURRENT-1]} "$word" --generate-bash-completion 2>/dev/null)}")
	case ${lines[1]} in
	` + completeFiles + `) compset -P "${lines[2]}"; _files ;;
	` + completeDirs + `) compset -P "${lines[2]}"; _files -/ ;;
	*)
		compadd -Q -- ${lines:#}
		;;
	esac
}
compdef _clmemprobe clmemprobe
`

// The first lines of an answer that asks the shell for names of files or of folders.
const (
	completeFiles = "__clmemprobe_files__"
	completeDirs  = "__clmemprobe_dirs__"
)

// completionCommand prints the completion script of a shell.
func completionCommand(stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash or zsh",
		ArgsUsage: "bash|zsh",
		Description: "Prints a script that completes clmemprobe's commands, flags and their values. Load it with\n" +
			`   eval "$(clmemprobe completion bash)"   (in ~/.bashrc)` + "\n" +
			`   eval "$(clmemprobe completion zsh)"    (in ~/.zshrc, after compinit)` + "\n\n" + exitCodes(exitOK, exitUsage, exitOutput),
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			script := map[string]string{"bash": bashCompletion, "zsh": zshCompletion}[c.Args().First()]
			switch {
			case c.NArg() != 1:
				return usageErr("completion needs one argument, bash or zsh")
			case script == "":
				// One argument that is no shell it writes for: saying "needs one argument" would be wrong.
				return usageErr("completion %q%s: that shell is not supported; clmemprobe writes completion for bash and zsh",
					c.Args().First(), suggestion(c.Args().First(), []string{"bash", "zsh"}))
			}
			if _, err := fmt.Fprint(stdout, script); err != nil {
				return outputErr("cannot write the output: %v", err)
			}
			return nil
		},
	}
}

// completeFrom makes the program and each command answer a completion request from the command line they
// were given (urfave/cli's own answer reads os.Args, and takes the word after a flag for that flag's value).
// Every callback gives the same answer, worked out from the words alone, so which one urfave/cli calls
// does not matter.
func completeFrom(app *cli.App, args []string, out io.Writer) {
	answer := func(*cli.Context) {
		for _, l := range completion(app, args) {
			fmt.Fprintln(out, l)
		}
	}
	app.BashComplete = answer
	for _, cmd := range app.Commands {
		cmd.BashComplete = answer
	}
}

// completion answers the request in args (the program, the words before the cursor, the word being
// completed, --generate-bash-completion): the values of the flag before the word, or that the shell should
// complete file or folder names, or the flags that start as the word does, or the commands.
func completion(app *cli.App, args []string) []string {
	words := slices.Clone(args[1:])
	if n := len(words); n > 0 && words[n-1] == "--generate-bash-completion" {
		words = words[:n-1]
	}
	cur := ""
	if n := len(words); n > 0 {
		cur, words = words[n-1], words[:n-1]
	}
	if len(words) > 0 && words[0] == "help" {
		if len(words) > 1 {
			return nil // help takes one command
		}
		words = nil // "help WORD": WORD is a command's name, completed as the first word is
	}
	var cmd *cli.Command
	flags := app.Flags
	for i, w := range words {
		if c := app.Command(w); c != nil && !strings.HasPrefix(w, "-") {
			cmd, flags, words = c, append(slices.Clone(c.Flags), cli.HelpFlag), words[i+1:]
			break
		}
	}
	if name, value, ok := strings.Cut(cur, "="); ok && strings.HasPrefix(name, "-") {
		if f := flagNamed(flags, name); f != nil {
			return prefixed(name+"=", flagValues(cmd, f, value))
		}
	}
	if n := len(words); n > 0 && strings.HasPrefix(words[n-1], "-") {
		if f := flagNamed(flags, words[n-1]); f != nil {
			return flagValues(cmd, f, cur)
		}
	}
	switch {
	case strings.HasPrefix(cur, "-"):
		var out []string
		for _, f := range flags {
			for _, name := range f.Names() {
				if opt := "--" + name; len(name) > 1 && strings.HasPrefix(opt, cur) {
					out = append(out, opt)
				}
			}
		}
		return out
	case cmd == nil:
		var out []string
		for _, c := range app.Commands {
			if !c.Hidden && strings.HasPrefix(c.Name, cur) {
				out = append(out, c.Name)
			}
		}
		return out
	}
	return argValues(cmd, cur)
}

// flagNamed is the flag of that name ("--touch" or "-o") that takes a value, or nil.
func flagNamed(flags []cli.Flag, name string) cli.Flag {
	name = strings.TrimLeft(name, "-")
	for _, f := range flags {
		if dg, ok := f.(cli.DocGenerationFlag); ok && dg.TakesValue() && slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// The flags whose values are files to write or read, and the one that names a folder.
var (
	fileFlags = []string{"opencl-lib", "output", "prom", "expect"}
	dirFlags  = []string{"out"}
)

// flagValues are the values of flag f of cmd (nil: the program's own flags) that start as cur does.
// Values without a fixed set (a size, a time) have no candidates, so that the shell inserts nothing.
func flagValues(cmd *cli.Command, f cli.Flag, cur string) []string {
	name := f.Names()[0]
	switch {
	case slices.Contains(fileFlags, name):
		return []string{completeFiles}
	case slices.Contains(dirFlags, name):
		return []string{completeDirs}
	}
	var choices []string
	switch name {
	case "touch":
		choices = toStrings(result.Touches)
	case "strategies":
		return listValues(append(toStrings(result.Strategies), "all"), cur)
	case "flags":
		return listValues(result.FlagNames(), cur)
	case "format":
		choices = formatChoices(cmd, f)
	case "variant-preset":
		for _, p := range probe.Presets {
			choices = append(choices, p.Name)
		}
		choices = append(choices, "list")
	case "attribution":
		choices = []string{probe.AttributionBatched, probe.AttributionPerBuffer}
	case "devices":
		choices = []string{"all"}
	case "sync":
		choices = []string{"events", "none"}
	}
	return matching(choices, cur)
}

// listValues completes the last item of a comma-separated list, each candidate the whole list so far with
// one more item that is not in it yet ("all" only as the whole list). Where items could follow, each comes
// also with a comma after it: the shell then stops after the item without a space, so the list can go on.
func listValues(items []string, cur string) []string {
	done, last := "", cur
	if i := strings.LastIndexByte(cur, ','); i >= 0 {
		done, last = cur[:i+1], cur[i+1:]
	}
	chosen := strings.Split(done, ",")
	left := 0
	for _, it := range items {
		if !slices.Contains(chosen, it) && it != "all" {
			left++
		}
	}
	var out []string
	for _, it := range items {
		if strings.HasPrefix(it, last) && !slices.Contains(chosen, it) && (it != "all" || done == "") {
			out = append(out, done+it)
			if it != "all" && left > 1 {
				out = append(out, done+it+",")
			}
		}
	}
	return out
}

// formatChoices are the formats the command's --format takes: run's own list, or the registered formats
// its flag's help names (each command's help lists the formats of the documents it prints).
func formatChoices(cmd *cli.Command, f cli.Flag) []string {
	if cmd != nil && cmd.Name == "run" {
		return runFormats
	}
	usage := ""
	if dg, ok := f.(cli.DocGenerationFlag); ok {
		usage = dg.GetUsage()
	}
	words := strings.FieldsFunc(usage, func(r rune) bool { return r == ',' || r == ' ' || r == '(' || r == ')' })
	var out []string
	for k := report.KindRun; k <= report.KindPresets; k++ {
		for _, name := range report.Names(k) {
			if slices.Contains(words, name) && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// argValues completes a command's arguments: file names where it reads results, or the words its usage
// lists as choices (completion's bash|zsh).
func argValues(cmd *cli.Command, cur string) []string {
	usage := cmd.ArgsUsage
	if strings.Contains(usage, ".json") || strings.Contains(usage, "DIR") {
		return []string{completeFiles}
	}
	if usage != "" && usage == strings.ToLower(usage) && !strings.ContainsAny(usage, " ()") {
		return matching(strings.Split(usage, "|"), cur)
	}
	return nil
}

func matching(choices []string, cur string) []string {
	var out []string
	for _, c := range choices {
		if strings.HasPrefix(c, cur) {
			out = append(out, c)
		}
	}
	return out
}

// prefixed puts p before each candidate; the shell's file and folder markers keep their line, followed by p
// (zsh sets it aside before it completes the name).
func prefixed(p string, lines []string) []string {
	if len(lines) == 1 && (lines[0] == completeFiles || lines[0] == completeDirs) {
		return []string{lines[0], p}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = p + l
	}
	return out
}
