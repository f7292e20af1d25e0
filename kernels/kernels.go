// Package kernels holds the OpenCL C sources clmemprobe runs, embedded into the binary so the tool needs no
// files beside it.
package kernels

import _ "embed"

// Touch is the source of the "touch" kernel: one work item per byte of the buffer (run --touch kernel).
//
//go:embed touch.cl
var Touch string

// TouchKernel is the kernel's name in Touch.
const TouchKernel = "touch"

// Halo is the source of the halo-exchange step kernel (clmemprobe exchange).
//
//go:embed halo.cl
var Halo string

// HaloKernel is the kernel's name in Halo.
const HaloKernel = "halo_step"

// FillPattern is the pattern clEnqueueFillBuffer writes over a buffer of the given size: the largest of 4, 2
// or 1 bytes that divides the size, since the size must be a multiple of the pattern's.
func FillPattern(size uint64) []byte {
	switch {
	case size%4 == 0:
		return []byte{0xA5, 0x5A, 0xC3, 0x3C}
	case size%2 == 0:
		return []byte{0xA5, 0x5A}
	}
	return []byte{0xA5}
}
