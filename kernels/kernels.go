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
