package export

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// WriteCSV writes every kept sample, one row per strategy and sample; device columns hold used bytes per
// device where a device sampler applied.
func WriteCSV(w io.Writer, j findings.Judged, _ render.Options) error {
	r := j.Run()
	cw := csv.NewWriter(w)
	header := []string{"strategy", "variant", "flags", "size_bytes", "index", "seconds", "host_rss_bytes", "host_vms_bytes", "host_hwm_bytes",
		"host_available_bytes", "mappings"}
	for _, d := range r.Devices {
		header = append(header, "device"+strconv.Itoa(d.Index)+"_used_bytes")
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	for _, s := range r.Jobs {
		for _, smp := range s.Samples {
			row := []string{string(s.Strategy), csvText(result.VariantName(s.Variant)), csvText(result.FlagsName(s.Flags)), u(s.SizeBytes), u(smp.Index), strconv.FormatFloat(smp.Seconds, 'f', 6, 64), u(smp.RSSBytes),
				u(smp.VMSBytes), u(smp.HWMBytes), u(smp.AvailBytes), u(smp.Mappings)}
			for _, d := range r.Devices {
				cell := ""
				for _, ds := range smp.DeviceSamples {
					if ds.Device == d.Index {
						cell = u(ds.UsedBytes)
					}
				}
				row = append(row, cell)
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
