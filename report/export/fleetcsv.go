package export

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// WriteFleetCSV writes one row per node and job, with its group and the job's median.
func WriteFleetCSV(w io.Writer, f *comparison.Fleet, _ render.Options) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"platform", "device_model", "driver_version", "touch", "max_allocs", "max_bytes", "strategy", "size_bytes", "variant",
		"flags", "node", "source", "outcome", "allocations_ok", "median_allocations_ok", "deviation", "host_bytes_per_buffer", "device_bytes_per_buffer",
		"outlier", "why"}); err != nil {
		return err
	}
	num := func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'f', -1, 64)
	}
	for _, g := range f.Groups {
		for _, j := range g.Jobs {
			for r := range j.All() {
				row := []string{csvText(g.Platform), csvText(g.DeviceModel), csvText(g.DriverVersion), string(g.Touch), strconv.FormatUint(g.MaxAllocs, 10),
					strconv.FormatUint(g.MaxBytes, 10), string(j.Strategy), strconv.FormatUint(j.SizeBytes, 10), csvText(j.Variant),
					csvText(j.Flags), csvText(r.Node), csvText(r.Source), string(r.Outcome), strconv.FormatUint(r.AllocationsOK, 10),
					strconv.FormatFloat(j.MedianAllocs, 'f', -1, 64), strconv.FormatFloat(r.Deviation, 'f', 6, 64), num(r.HostCost), num(r.DeviceCost),
					strconv.FormatBool(r.Outlier), csvText(r.Why)}
				if err := cw.Write(row); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvText keeps a foreign string from being read as a formula by a spreadsheet: a cell that starts with
// =, +, -, @ or a control character gets a leading apostrophe.
func csvText(s string) string {
	s = render.Plain(s)
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
