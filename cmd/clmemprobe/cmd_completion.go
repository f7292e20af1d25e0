package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// Completion scripts ask the program itself what comes next: urfave/cli answers a command line that ends
// in --generate-bash-completion with the commands, or with the flags that start as the last word does.
const bashCompletion = `# clmemprobe completion for bash: eval "$(clmemprobe completion bash)", or save it in
# /etc/bash_completion.d/clmemprobe.
_clmemprobe_complete() {
	local word=${COMP_WORDS[COMP_CWORD]} words
	if [[ $word == -* ]]; then
		words=$("${COMP_WORDS[@]:0:COMP_CWORD}" "$word" --generate-bash-completion 2>/dev/null)
	else
		words=$("${COMP_WORDS[@]:0:COMP_CWORD}" --generate-bash-completion 2>/dev/null)
	fi
	COMPREPLY=($(compgen -W "$words" -- "$word"))
}
complete -o default -F _clmemprobe_complete clmemprobe
`

const zshCompletion = `#compdef clmemprobe
# clmemprobe completion for zsh: eval "$(clmemprobe completion zsh)", or save it as _clmemprobe in a folder
# of $fpath.
_clmemprobe() {
	local word=${words[CURRENT]}
	local -a candidates
	if [[ $word == -* ]]; then
		candidates=(${(f)"$(${words[1,CURRENT-1]} $word --generate-bash-completion 2>/dev/null)"})
	else
		candidates=(${(f)"$(${words[1,CURRENT-1]} --generate-bash-completion 2>/dev/null)"})
	fi
	compadd -a candidates
}
compdef _clmemprobe clmemprobe
`

// completionCommand prints the completion script of a shell.
func completionCommand(stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash or zsh",
		ArgsUsage: "bash|zsh",
		Description: "Prints a script that completes clmemprobe's commands and flags. Load it with\n" +
			`   eval "$(clmemprobe completion bash)"   (in ~/.bashrc)` + "\n" +
			`   eval "$(clmemprobe completion zsh)"    (in ~/.zshrc, after compinit)` + "\n\n" + exitCodes(exitOK, exitUsage, exitOutput),
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			script := map[string]string{"bash": bashCompletion, "zsh": zshCompletion}[c.Args().First()]
			if c.NArg() != 1 || script == "" {
				return usageErr("completion needs one argument, bash or zsh")
			}
			if _, err := fmt.Fprint(stdout, script); err != nil {
				return outputErr("cannot write the output: %v", err)
			}
			return nil
		},
	}
}

// completeFrom makes the program and each command answer a completion request from the command line they
// were given (urfave/cli's own answer reads os.Args): the flags that start as the word being completed does,
// or else the commands.
func completeFrom(app *cli.App, args []string, out io.Writer) {
	word := ""
	if n := len(args); n >= 2 && args[n-1] == "--generate-bash-completion" && n >= 3 {
		word = args[n-2]
	}
	flagsLike := func(flags []cli.Flag) {
		for _, f := range flags {
			for _, name := range f.Names() {
				if opt := "--" + name; len(name) > 1 && strings.HasPrefix(opt, word) {
					fmt.Fprintln(out, opt)
				}
			}
		}
	}
	app.BashComplete = func(c *cli.Context) {
		if strings.HasPrefix(word, "-") {
			flagsLike(c.App.Flags)
			return
		}
		for _, cmd := range c.App.Commands {
			if !cmd.Hidden {
				fmt.Fprintln(out, cmd.Name)
			}
		}
	}
	for _, cmd := range app.Commands {
		flags := cmd.Flags
		cmd.BashComplete = func(c *cli.Context) {
			if strings.HasPrefix(word, "-") {
				flagsLike(append(flags, cli.HelpFlag))
			}
		}
	}
}
