package main

import (
	"os"
	"testing"
)

// Tables use ASCII borders where the locale is not UTF-8, or NO_COLOR or TERM=dumb asks for it.
func TestPlainTerminals(t *testing.T) {
	for _, c := range []struct {
		env   map[string]string
		plain bool
	}{
		{map[string]string{"LANG": "C.UTF-8"}, false},
		{map[string]string{"LANG": "en_US.utf8"}, false},
		{map[string]string{"LANG": "C"}, true},
		{map[string]string{"LANG": "C.UTF-8", "LC_ALL": "POSIX"}, true},
		{map[string]string{"LANG": "C.UTF-8", "NO_COLOR": "1"}, true},
		{map[string]string{"LANG": "C.UTF-8", "TERM": "dumb"}, true},
	} {
		for _, k := range []string{"LANG", "LC_ALL", "LC_CTYPE", "NO_COLOR", "TERM"} {
			t.Setenv(k, c.env[k])
			if _, ok := c.env[k]; !ok {
				os.Unsetenv(k)
			}
		}
		if got := plainTerminal(); got != c.plain {
			t.Errorf("%v: plain %v, want %v", c.env, got, c.plain)
		}
	}
}
