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
// or 1 bytes that divides the size (the size must be a multiple of the pattern's), repeated to twice its
// length, up to 128 bytes (the most the specification allows), while the fill would have 2^31 elements or
// more: one driver miscounts such fills (it hung on an 8 GiB fill of 4-byte elements and left a 16 GiB one
// unwritten while reporting success).
func FillPattern(size uint64) []byte {
	var p []byte
	switch {
	case size%4 == 0:
		p = []byte{0xA5, 0x5A, 0xC3, 0x3C}
	case size%2 == 0:
		p = []byte{0xA5, 0x5A}
	default:
		p = []byte{0xA5}
	}
	for size/uint64(len(p)) >= MaxFillElements && len(p) < 128 && size%uint64(2*len(p)) == 0 {
		p = append(p, p...)
	}
	return p
}

// MaxFillElements is the element count a fill keeps under, where the size allows: 2^31.
const MaxFillElements = 1 << 31
