package probe

import (
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// RemedyChange is one known change to a failing job, as a plan of that one job.
type RemedyChange struct {
	Name string
	Plan Plan
}

// RemedyChanges are the known changes to the one job of base, smallest first: the context layouts (one per
// device, device-list, pool), a larger and a smaller buffer size over the same bytes, the host-pointer
// flags, the flags the platform's vendor documents, and the runtime's documented settings (for NEO's, with
// a control arm that sets only NEOReadDebugKeys=1, which alone is known to change behaviour).
func RemedyChanges(base Plan, platform result.Platform) []RemedyChange {
	var out []RemedyChange
	add := func(name string, change func(p *Plan)) {
		p := base
		p.Strategies = append([]result.Strategy(nil), base.Strategies...)
		p.Sizes = append([]uint64(nil), base.Sizes...)
		p.FlagSets = append([]result.MemFlags(nil), base.FlagSets...)
		p.Variants = append([]result.Variant(nil), base.Variants...)
		change(&p)
		out = append(out, RemedyChange{Name: name, Plan: p})
	}
	st, size := base.Strategies[0], base.Sizes[0]
	flags := result.DefaultFlags
	if len(base.FlagSets) > 0 {
		flags = base.FlagSets[0]
	}
	multi := len(base.Devices) > 1
	if st.SharesContext() && multi {
		add("one context per device", func(p *Plan) { p.Strategies[0] = result.PerDevice })
		if st != result.DeviceList {
			add("each buffer placed on its device (device-list)", func(p *Plan) { p.Strategies[0] = result.DeviceList })
		}
	}
	if st != result.Pool && flags&(result.MemUseHostPtr|result.MemCopyHostPtr) == 0 {
		add("pooled allocations (pool: sub-buffers of one buffer per device)", func(p *Plan) { p.Strategies[0] = result.Pool })
	}
	bytes := base.Budget(size) * size
	add("buffers 4x as large, the same bytes", func(p *Plan) {
		p.Sizes[0], p.MaxAllocs, p.MaxBytes = size*4, max(1, bytes/(size*4)), bytes
	})
	if size/4 >= 4096 {
		add("buffers a quarter the size, the same bytes", func(p *Plan) {
			p.Sizes[0], p.MaxAllocs, p.MaxBytes = size/4, bytes/(size/4), bytes
		})
	}
	for _, f := range []result.MemFlags{result.MemAllocHostPtr, result.MemUseHostPtr} {
		if flags&f == 0 {
			with := flags | f
			add("flags "+with.String(), func(p *Plan) { p.FlagSets = []result.MemFlags{with} })
		}
	}
	for _, v := range result.VendorFlags {
		if result.VendorOf(platform).Is(v.Vendor) && flags&v.Value == 0 {
			with := flags | v.Value
			add(v.C+" ("+v.Vendor+"'s flag)", func(p *Plan) { p.FlagSets = []result.MemFlags{with} })
		}
	}
	for _, pr := range Presets {
		if !remedyPreset(pr, platform) {
			continue
		}
		if pr.Vendor == result.VendorIntelGPU && !hasControlArm(out) {
			control := result.Variant{Name: "neo-read-keys", Settings: map[string]string{"NEOReadDebugKeys": "1"}}
			add("NEOReadDebugKeys=1 alone (the control arm of NEO's keys)", func(p *Plan) { p.Variants = []result.Variant{control} })
		}
		for _, v := range pr.Variants {
			add("settings "+strings.Join(result.Assignments(v.Settings), " "), func(p *Plan) { p.Variants = []result.Variant{v} })
		}
	}
	return out
}

func hasControlArm(cs []RemedyChange) bool {
	for _, c := range cs {
		if len(c.Plan.Variants) == 1 && c.Plan.Variants[0].Name == "neo-read-keys" {
			return true
		}
	}
	return false
}

// remedyPreset says whether a preset is a change that may lift a failure on this platform: its runtime's
// settings (not its logging), and the descriptor limit on any.
func remedyPreset(pr Preset, p result.Platform) bool {
	switch {
	case strings.HasSuffix(pr.Name, "-log") || pr.Name == "pocl-limit":
		return false
	case pr.Runtime == "any":
		return true
	}
	return pr.Vendor != result.VendorOther && pr.Vendor == result.VendorOf(p)
}
