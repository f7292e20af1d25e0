//go:build tools

// Package tools pins the versions of the checkers scripts/test.sh runs (staticcheck, deadcode). It is a
// module of its own so that their dependencies stay out of clmemprobe's go.mod.
package tools

import (
	_ "golang.org/x/tools/cmd/deadcode"
	_ "honnef.co/go/tools/cmd/staticcheck"
)
