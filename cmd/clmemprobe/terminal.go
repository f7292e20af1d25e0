package main

import (
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/clmemprobe/clmemprobe/report"
	"github.com/mattn/go-isatty"
	"golang.org/x/sys/unix"
)

// textOptions shapes text output for where stdout goes: as wide as the terminal (or $COLUMNS) unless wide,
// and with ASCII borders where the locale is not UTF-8, or NO_COLOR or TERM=dumb asks for plain output.
func textOptions(out io.Writer, wide bool) report.Options {
	opts := report.Options{Wide: wide, ASCII: plainTerminal()}
	if c, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && c > 0 {
		opts.Width = c
	} else if f, ok := out.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
			opts.Width = int(ws.Col)
		}
	}
	return opts
}

// plainTerminal says whether box drawing would show as garbage or is not wanted.
func plainTerminal() bool {
	if _, ok := os.LookupEnv("NO_COLOR"); ok || os.Getenv("TERM") == "dumb" {
		return true
	}
	locale := os.Getenv("LC_ALL")
	if locale == "" {
		locale = os.Getenv("LC_CTYPE")
	}
	if locale == "" {
		locale = os.Getenv("LANG")
	}
	l := strings.ToLower(locale)
	return !strings.Contains(l, "utf-8") && !strings.Contains(l, "utf8")
}
