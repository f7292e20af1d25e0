// Package sample reads host and device memory while the probe runs. Each sampler fails alone: one that does
// not apply says why and never fails a run. Everything is read under a Root, so tests feed fixture trees.
package sample

import "github.com/clmemprobe/clmemprobe/report/result"

// Host reads the worker's own memory (VmRSS, VmSize, VmHWM), the system's available and committed memory
// and the number of memory mappings.
type Host struct {
	root Root
	buf  []byte
}

// NewHost returns a host sampler for the current process.
func NewHost(root Root) *Host { return &Host{root: root, buf: make([]byte, 64<<10)} }

// Read fills the host fields of s. withMappings also counts the mappings, which costs more (the kernel
// writes one line per mapping), so callers do it less often.
func (h *Host) Read(s *result.Sample, withMappings bool) error {
	pm, err := h.root.SelfMemory()
	if err != nil {
		return err
	}
	s.RSSBytes, s.VMSBytes, s.HWMBytes = pm.RSS, pm.VMS, pm.HWM
	if mi, err := h.root.Meminfo(); err == nil {
		s.AvailBytes, s.CommittedBytes = mi.Available, mi.Committed
	}
	if withMappings {
		if n, err := h.root.Mappings(h.buf); err == nil {
			s.Mappings = n
		}
	}
	return nil
}
