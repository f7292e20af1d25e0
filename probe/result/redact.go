package result

import (
	"regexp"
	"strings"
)

// Redacted is what a report shows instead of a secret.
const Redacted = "<redacted>"

// secretWords mark a variable whose value must never reach a report, whatever else says to record it.
var secretWords = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"}

// IsSecret reports whether a variable's name says its value is a secret: it contains one of KEY, TOKEN,
// SECRET, PASSWORD, PASSWD, CREDENTIAL or AUTH, in capitals or in lower case. (NEO's CamelCase debug keys,
// such as NEOReadDebugKeys, spell "Key" and are not secrets.)
func IsSecret(name string) bool {
	for _, w := range secretWords {
		if strings.Contains(name, w) || strings.Contains(name, strings.ToLower(w)) {
			return true
		}
	}
	return false
}

// envName is what a shell takes as a variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// IsEnvName reports whether name is a variable name a shell can assign. The environment may hold any
// string before its '='; a report's reproduce command and the C reproducer put names where only a real
// name is safe, so others are never recorded, and a result holding one is refused.
func IsEnvName(name string) bool { return len(name) <= 256 && envName.MatchString(name) }

// SelectsRuntimeOrTool reports whether a variable chooses which runtime loads (the ICD loader's OCL_ICD_
// variables) or how this tool behaves (CLMEMPROBE_), rather than setting a runtime: a variant may not set
// one, and a reproducer leaves them to the machine it runs on.
func SelectsRuntimeOrTool(name string) bool {
	return strings.HasPrefix(name, "OCL_ICD_") || strings.HasPrefix(name, "CLMEMPROBE_")
}

// assignment finds NAME=VALUE inside a command-line argument (VALUE ends at a comma).
var assignment = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)=([^,]*)`)

// RedactArgs returns args with the value of every NAME=VALUE whose name is a secret replaced by Redacted,
// for the command line a report records.
func RedactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = assignment.ReplaceAllStringFunc(a, func(m string) string {
			name, _, _ := strings.Cut(m, "=")
			if IsSecret(name) {
				return name + "=" + Redacted
			}
			return m
		})
	}
	return out
}
