//go:build !amd64

package cl

import "github.com/ebitengine/purego"

// hotCall calls fn with the block's first n arguments through purego (see hotcall_amd64.go for the
// trampoline amd64 uses instead).
func hotCall(b *hotBlock, fn uintptr, n int) uintptr {
	r, _, _ := purego.SyscallN(fn, b.args[:n]...)
	return r
}
