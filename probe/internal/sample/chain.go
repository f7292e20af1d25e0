package sample

import (
	"errors"
	"slices"

	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// The device-memory chain of run and trace: one ordered list of sources and one rule for which of them
// gives the figures. What tells the two apart is data, in a ChainSpec: whose memory (this process, or a
// traced program's), where NVML's readings come from (opened here, or streamed from a child of the tool),
// whether devices may appear after the first read (so the choice is made again at every read), and whether
// the process's own share is read.

// ErrNotYet says a source may still give figures: the sources after it wait for its answer rather than
// give figures of their own that the rest of the trace would then have to keep to.
var ErrNotYet = errors.New("the source has not answered yet")

// GPUSource is the GPUs' memory as read outside this process: NVML, loaded only in a child of the tool
// (trace's parent loads no vendor library). The readings are keyed by PCI bus id.
type GPUSource interface {
	// Latest is the newest reading; nil when none is current (none yet, or the source has ended).
	Latest() *wire.GPUReading
	// Unavailable is why the source gives nothing; "" while it gives readings or may yet.
	Unavailable() string
}

// ChainSpec is what a chain reads: the differences between run's chain and trace's.
type ChainSpec struct {
	Root Root
	// PID is the traced program whose memory is read (its DRM clients, its share of NVML's process lists); 0
	// is this process, whose chain also has the sources of the OpenCL runtime it has loaded and of sysfs.
	PID int
	// GPUs streams NVML's readings from a child. Nil opens NVML in this process where PID is 0, and leaves a
	// program's chain without NVML: the tool's parent loads no vendor library.
	GPUs GPUSource
	// Later says that devices may appear after the first read (a trace learns them as the program makes its
	// contexts): every Read chooses again (so it is for a program's chain, PID set: a source opened here,
	// such as NVML in this process, would be opened again at every read and never closed), and a source applies when it reads any of the devices seen so
	// far, not only when it reads every one.
	Later bool
	// Own reads the process's own share of each device with its figures, where the source tells it.
	Own bool
}

// source is one link of the chain: open returns the sampler that reads the targets, or why the source does
// not apply; idle is its reason before any read tried it, and end, where set, says it again at the end for
// the devices there were by then.
type source struct {
	open func(ts []Target) (DeviceSampler, error)
	idle error
	end  func(ts []Target, last error) error
}

// ownReader is a sampler that also tells the process's own share of the devices it read last.
type ownReader interface {
	own(got []result.DeviceSample) []result.TraceDeviceUse
}

// Chain chooses the first source that gives figures for the targets. Once one has given figures no later
// source is tried (a trace keeps to NVML when its child ends rather than mix its figures with another
// source's), and the first to give figures names the chain.
type Chain struct {
	sources []source
	later   bool
	own     bool
	first   int           // the source that gave figures first; -1 while none has
	name    string        // its sampler's name
	why     []error       // each source's reason, from the last read that tried it
	picked  DeviceSampler // the sampler of the last choice
	chosen  bool          // a choice was made: where devices do not appear later, the only one
}

// NewChain is the chain of spec's sources, in order: NVML (opened here or streamed), the OpenCL runtime's
// free-memory query and amdgpu sysfs (this process only), the process's DRM fdinfo counters.
func NewChain(spec ChainSpec) *Chain {
	var srcs []source
	switch {
	case spec.GPUs != nil:
		srcs = append(srcs, streamedNVML(spec.GPUs, PIDsOf(spec.Root, spec.PID)))
	case spec.PID == 0:
		srcs = append(srcs, source{open: func(ts []Target) (DeviceSampler, error) { return newNVMLSampler(ts, spec.Root) }})
	}
	if spec.PID == 0 {
		srcs = append(srcs, source{open: newCLQuerySampler},
			source{open: func(ts []Target) (DeviceSampler, error) { return newAMDGPUSysfsSampler(ts, spec.Root) }})
	}
	srcs = append(srcs, drmSource(spec.Root, spec.PID, spec.Later))
	return newChain(srcs, spec.Later, spec.Own)
}

// newChain is the chain of srcs, in order.
func newChain(srcs []source, later, own bool) *Chain {
	c := &Chain{sources: srcs, later: later, own: own, first: -1, why: make([]error, len(srcs))}
	for i, s := range srcs {
		c.why[i] = s.idle
	}
	return c
}

// Pick returns the sampler of the first source that applies to ts, or nil and an Unavailable with each
// source's reason, in order (a source left untried after one not yet answered gives its reason before any
// read). A sampler that opened is never passed over after its first read but for ErrNotThere, which only
// the DRM counters say, so no opened NVML is left unclosed.
func (c *Chain) Pick(ts []Target) (DeviceSampler, error) {
	if s, _ := c.pick(ts); s != nil {
		return s, nil
	}
	return nil, c.reasons(c.why)
}

// Read returns the targets' figures from the chosen source, and the process's own share where the chain
// reads it and the source tells it. Where devices may appear later the choice is made again at each read;
// elsewhere it is made once, at the first.
func (c *Chain) Read(ts []Target) ([]result.DeviceSample, []result.TraceDeviceUse) {
	var got []result.DeviceSample
	switch {
	case c.later || !c.chosen:
		c.chosen = true
		c.picked, got = c.pick(ts)
	case c.picked != nil:
		got, _ = c.picked.Read()
	}
	if c.picked == nil || len(got) == 0 || !c.own {
		return got, nil
	}
	if o, ok := c.picked.(ownReader); ok {
		return got, o.own(got)
	}
	return got, nil
}

// pick tries each source that may be tried, in order, until one applies: a source applies unless it does
// not open, or its first read has nothing for the devices (ErrNotThere). A source that has not answered yet
// (ErrNotYet) ends the search.
func (c *Chain) pick(ts []Target) (DeviceSampler, []result.DeviceSample) {
	tried := c.sources
	if c.first >= 0 {
		tried = tried[:c.first+1] // the source that gave figures first, and those the chain prefers to it
	}
	for i, src := range tried {
		s, got, err := src.applies(ts)
		if s != nil {
			if c.first < 0 {
				c.first, c.name = i, s.Name()
			}
			return s, got
		}
		c.why[i] = err
		if errors.Is(err, ErrNotYet) {
			break
		}
	}
	return nil, nil
}

// applies opens the source for ts and reads it once: the sampler and its figures, or why it does not apply.
func (src source) applies(ts []Target) (DeviceSampler, []result.DeviceSample, error) {
	s, err := src.open(ts)
	if s == nil {
		return nil, nil, err
	}
	got, err := s.Read()
	if len(got) == 0 && errors.Is(err, ErrNotThere) {
		return nil, nil, err
	}
	return s, got, nil
}

// Sampler is what a result records as its device sampler: the name of the source that gave figures first,
// or result.DeviceNotAvailable and why each source gave none, said for the devices ts there were at the end.
func (c *Chain) Sampler(ts []Target) result.DeviceSource {
	if c.name != "" {
		return result.DeviceSource(c.name)
	}
	why := slices.Clone(c.why)
	for i, s := range c.sources {
		if s.end != nil {
			why[i] = s.end(ts, why[i])
		}
	}
	return result.NoDeviceSource(c.reasons(why).Error())
}

// reasons is the Unavailable of the reasons given, in the sources' order.
func (c *Chain) reasons(why []error) Unavailable {
	var u Unavailable
	for _, err := range why {
		if err != nil {
			u = append(u, err)
		}
	}
	return u
}

// streamedNVML is the source of NVML's readings streamed from a child: the newest reading's GPUs keyed to
// the targets by PCI bus id, the function number aside. A GPU no target is at is left out, and so is a
// target without a bus id; the source applies when one target matched. pids are the program's ids in every
// PID namespace its procfs sees, by which NVML's process lists name it.
func streamedNVML(gpus GPUSource, pids []uint32) source {
	return source{
		idle: unavailable(ErrNotYet, "NVML: no sample read the program's devices"),
		open: func(ts []Target) (DeviceSampler, error) {
			r := gpus.Latest()
			if r == nil {
				if why := gpus.Unavailable(); why != "" {
					return nil, unavailable(ErrNotThere, "%s", why)
				}
				return nil, unavailable(ErrNotYet, "NVML: no reading came")
			}
			s := &streamedSampler{name: r.Sampler, pids: pids}
			for _, t := range ts {
				if i := slices.IndexFunc(r.GPUs, func(g wire.GPUMemory) bool { return t.PCIBusID != "" && SamePCI(g.PCIBusID, t.PCIBusID) }); i >= 0 {
					g := r.GPUs[i]
					s.got = append(s.got, result.DeviceSample{Device: t.Index, UsedBytes: g.UsedBytes, FreeBytes: g.FreeBytes})
					s.gpus = append(s.gpus, g)
				}
			}
			if len(s.got) == 0 {
				return nil, unavailable(ErrNotThere, "NVML: no GPU it sees is at the PCI bus id of a traced device")
			}
			return s, nil
		},
		// The child's last word, once it has ended, is why NVML gave nothing, whatever the last read said.
		end: func(_ []Target, last error) error {
			if why := gpus.Unavailable(); why != "" {
				return unavailable(ErrNotThere, "%s", why)
			}
			return last
		},
	}
}

// streamedSampler is one reading of the streamed NVML, keyed to the targets when it was opened.
type streamedSampler struct {
	name string
	got  []result.DeviceSample
	gpus []wire.GPUMemory // the GPU of each of got
	pids []uint32
}

var (
	_ DeviceSampler = (*streamedSampler)(nil)
	_ ownReader     = (*streamedSampler)(nil)
	_ ownReader     = (*fdinfoSampler)(nil)
)

func (s *streamedSampler) Name() string                         { return s.name }
func (s *streamedSampler) Read() ([]result.DeviceSample, error) { return s.got, nil }

// own is the program's share of each GPU read, from the GPU's process list, where the list tells it.
func (s *streamedSampler) own([]result.DeviceSample) []result.TraceDeviceUse {
	var out []result.TraceDeviceUse
	for k, g := range s.gpus {
		if b, ok := shareOf(g, s.pids); ok {
			out = append(out, result.TraceDeviceUse{Device: s.got[k].Device, Bytes: b})
		}
	}
	return out
}

// shareOf is the memory NVML's process list gives the process of ids pids on a GPU, and whether the list
// tells: a list that could not be read, or that names the process without its memory, does not. A process
// absent from a list it could be in holds nothing there.
func shareOf(g wire.GPUMemory, pids []uint32) (uint64, bool) {
	if g.ProcessesError != "" {
		return 0, false
	}
	var own uint64
	for _, p := range g.Processes {
		if slices.Contains(pids, p.PID) {
			if !p.Known {
				return 0, false
			}
			own += p.Bytes
		}
	}
	return own, true
}
