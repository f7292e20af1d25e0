// Command smiagree checks clmemprobe's device-memory figures against nvidia-smi sampled independently in
// the background during the same run:
//
//	nvidia-smi --query-gpu=timestamp,index,pci.bus_id,memory.used,memory.total --format=csv,nounits -lms 250 > smi.csv
//
// For every nvidia-smi reading taken while a strategy's loop ran, it interpolates the tool's samples
// (samples.jsonl, every sample) at that instant for the same device (matched by PCI bus id) and reports the
// differences; it also compares each strategy's peak. Usage: go run ./scripts/smiagree RUN_DIR SMI_CSV
package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

type smiRow struct {
	at     time.Time
	pci    string
	usedMB float64
}

type point struct {
	t      float64 // seconds since the loop started
	usedMB float64
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: smiagree RUN_DIR SMI_CSV")
		os.Exit(2)
	}
	run, err := result.Load(filepath.Join(os.Args[1], "run.json"))
	check(err)
	smi, err := readSMI(os.Args[2])
	check(err)
	series, err := readSamples(filepath.Join(os.Args[1], "samples.jsonl"))
	check(err)
	fmt.Println("| Strategy | Device | nvidia-smi readings | median abs. difference | 95th pct abs. difference | peak tool | peak nvidia-smi |")
	fmt.Println("|:--|:--|--:|--:|--:|--:|--:|")
	for _, s := range run.Jobs {
		start, err := time.Parse(time.RFC3339Nano, s.LoopStarted)
		if err != nil {
			continue
		}
		end := start.Add(time.Duration(s.Seconds * float64(time.Second)))
		for _, d := range run.Devices {
			pts := series[key{string(s.Strategy), d.Index}]
			if len(pts) < 2 {
				continue
			}
			var diffs []float64
			peakSMI := 0.0
			for _, r := range smi {
				if !samePCI(r.pci, d.PCIBusID) || r.at.Before(start) || r.at.After(end) {
					continue
				}
				peakSMI = math.Max(peakSMI, r.usedMB)
				if v, ok := interpolate(pts, r.at.Sub(start).Seconds()); ok {
					diffs = append(diffs, math.Abs(r.usedMB-v))
				}
			}
			peakTool := 0.0
			for _, p := range pts {
				peakTool = math.Max(peakTool, p.usedMB)
			}
			sort.Float64s(diffs)
			fmt.Printf("| %s | %d | %d | %.0f MiB | %.0f MiB | %.0f MiB | %.0f MiB |\n", s.Strategy, d.Index, len(diffs),
				pct(diffs, 0.5), pct(diffs, 0.95), peakTool, peakSMI)
		}
	}
}

type key struct {
	strategy string
	device   int
}

func readSamples(path string) (map[key][]point, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[key][]point{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var s struct {
			Strategy string `json:"strategy"`
			result.Sample
		}
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return nil, err
		}
		for _, d := range s.DeviceSamples {
			k := key{s.Strategy, d.Device}
			out[k] = append(out[k], point{s.Seconds, float64(d.UsedBytes) / (1 << 20)})
		}
	}
	for _, pts := range out {
		sort.Slice(pts, func(i, j int) bool { return pts[i].t < pts[j].t })
	}
	return out, sc.Err()
}

func readSMI(path string) ([]smiRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.TrimLeadingSpace = true
	rows, err := r.ReadAll()
	if err != nil {
		return nil, err
	}
	var out []smiRow
	for _, row := range rows[1:] {
		if len(row) < 4 {
			continue
		}
		at, err := time.Parse("2006/01/02 15:04:05.000", row[0]) // nvidia-smi writes the host's local time; UTC there
		if err != nil {
			continue
		}
		used, err := strconv.ParseFloat(row[3], 64)
		if err != nil {
			continue
		}
		out = append(out, smiRow{at, row[2], used})
	}
	return out, nil
}

// samePCI compares "00000000:00:06.0" with "0000:00:06.0".
func samePCI(a, b string) bool {
	norm := func(s string) string {
		s = strings.ToLower(s)
		if i := strings.IndexByte(s, ':'); i > 4 {
			s = s[i-4:]
		}
		return s
	}
	return norm(a) == norm(b)
}

func interpolate(pts []point, t float64) (float64, bool) {
	i := sort.Search(len(pts), func(i int) bool { return pts[i].t >= t })
	if i == 0 || i == len(pts) {
		return 0, false
	}
	a, b := pts[i-1], pts[i]
	if b.t == a.t {
		return a.usedMB, true
	}
	return a.usedMB + (b.usedMB-a.usedMB)*(t-a.t)/(b.t-a.t), true
}

func pct(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return xs[int(p*float64(len(xs)-1))]
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "smiagree:", err)
		os.Exit(1)
	}
}
