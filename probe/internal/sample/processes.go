package sample

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"

	"github.com/clmemprobe/clmemprobe/probe/internal/nvml"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// ProcessLister is a device sampler that can also name the processes holding each device's memory.
type ProcessLister interface {
	// Processes returns the processes on each device, keyed by the device's number in the run, largest
	// first. A device whose list could not be read is absent, and the error says why.
	Processes() (map[int][]result.DeviceProcess, error)
}

// NVML is the one sampler that sees other processes' memory.
var _ ProcessLister = (*nvmlSampler)(nil)

// Processes lists NVML's compute and graphics processes of every sampled device, named from the root's
// /proc, this process marked Own. One device's failure (MIG without the privilege to aggregate, say) does
// not hide the others: their lists come back beside the joined errors.
func (s *nvmlSampler) Processes() (map[int][]result.DeviceProcess, error) {
	root := s.root
	if root.Proc == "" {
		root = System // a sampler made without a root reads the host, as the other readers do
	}
	own := ownIn(OwnPIDs(root))
	out := make(map[int][]result.DeviceProcess, len(s.order))
	var errs []error
	for k, i := range s.order {
		infos, err := s.n.Processes(s.devs[k])
		if err != nil {
			errs = append(errs, fmt.Errorf("device %d: %w", i, err))
			continue
		}
		out[i] = processesOf(infos, root, own)
	}
	return out, errors.Join(errs...)
}

// OwnPIDs returns this process's ids: os.Getpid() and, where the kernel tells (Linux 4.1 and later), its
// id in every PID namespace the root's procfs can see, from the NStgid line of /proc/self/status (NSpid
// where NStgid is absent): the id in the namespace that mounted that procfs first, then each nested one,
// the last being os.Getpid()'s. NVML may name processes in an outer namespace than this process's own, so
// a match with any of these ids is this process. A container whose /proc was mounted inside its own
// namespace sees only the innermost id, and a PID that NVML gives from further out cannot be matched.
func OwnPIDs(root Root) []uint32 { return pidsIn(root, "self", uint32(os.Getpid())) }

// PIDsOf is process pid's ids in every PID namespace the root's procfs can see, as OwnPIDs is this
// process's: `trace` matches the traced program in NVML's process lists by any of them.
func PIDsOf(root Root, pid int) []uint32 {
	return pidsIn(root, strconv.Itoa(pid), uint32(pid))
}

// pidsIn is pid and the ids the NStgid (else NSpid) line of <proc>/dir/status adds.
func pidsIn(root Root, dir string, pid uint32) []uint32 {
	pids := []uint32{pid}
	b, err := os.ReadFile(filepath.Join(root.Proc, dir, "status"))
	if err != nil {
		return pids
	}
	line := statusLine(b, "NStgid")
	if line == nil {
		line = statusLine(b, "NSpid")
	}
	for _, f := range bytes.Fields(line) {
		v, err := strconv.ParseUint(string(f), 10, 32)
		if err != nil {
			continue
		}
		if !slices.Contains(pids, uint32(v)) {
			pids = append(pids, uint32(v))
		}
	}
	return pids
}

// statusLine returns what follows "name:" on its line of a /proc status file, nil where there is none.
func statusLine(b []byte, name string) []byte {
	var found []byte
	eachField(b, func(k, v []byte) bool {
		if string(k) == name {
			found = v
			return false
		}
		return true
	})
	return found
}

// ownIn says whether a pid is one of pids.
func ownIn(pids []uint32) func(uint32) bool {
	return func(pid uint32) bool { return slices.Contains(pids, pid) }
}

// processesOf turns NVML's list of one device into the report's: each process named from
// <root.Proc>/<pid>/comm ("" where this machine does not see the process, as from another PID namespace),
// own marked, largest memory first, then those whose memory NVML could not tell (UsedBytes 0, since the
// report has no field for unknown), ties in pid order.
func processesOf(infos []nvml.Process, root Root, own func(uint32) bool) []result.DeviceProcess {
	type entry struct {
		p     result.DeviceProcess
		known bool
	}
	es := make([]entry, len(infos))
	for i, in := range infos {
		es[i].p = result.DeviceProcess{PID: in.PID, Name: ReadTrim(filepath.Join(root.Proc, strconv.FormatUint(uint64(in.PID), 10), "comm")),
			Own: own != nil && own(in.PID)}
		if in.UsedKnown {
			es[i].p.UsedBytes, es[i].known = in.UsedBytes, true
		}
	}
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.known != b.known {
			return a.known
		}
		if a.p.UsedBytes != b.p.UsedBytes {
			return a.p.UsedBytes > b.p.UsedBytes
		}
		return a.p.PID < b.p.PID
	})
	out := make([]result.DeviceProcess, len(es))
	for i, e := range es {
		out[i] = e.p
	}
	return out
}
