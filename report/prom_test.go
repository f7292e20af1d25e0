package report

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/promcheck"
)

// parseProm parses and lints text as Prometheus does; every problem fails the test.
func parseProm(t *testing.T, text []byte) promcheck.Families {
	t.Helper()
	fam, problems, err := promcheck.Parse(text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	for _, p := range problems {
		t.Error(p)
	}
	return fam
}

func jobOf(s *result.JobResult) map[string]string {
	return map[string]string{"strategy": string(s.Strategy), "size_bytes": strconv.FormatUint(s.SizeBytes, 10), "variant": result.VariantName(s.Variant)}
}

// A run with a job of every outcome: each job's series say what the job's fields say, and nothing else.
func TestPromEveryOutcome(t *testing.T) {
	r := loadFixture(t)
	base := r.Jobs[0]
	r.Jobs = nil
	for i, o := range result.Outcomes {
		s := base
		s.Outcome, s.AllocationsOK, s.BytesOK = o, uint64(100+i), uint64(100+i)*base.SizeBytes
		s.Variant = []string{"", "pool-off"}[i%2]
		if o != result.OutcomeFailed {
			s.FirstFailure = nil
		} else {
			s.FirstFailure = &result.FirstFailure{Index: s.AllocationsOK, Stage: result.StageTouch, Code: -4,
				Name: "CL_MEM_OBJECT_ALLOCATION_FAILURE", Device: 1}
		}
		s.Strategy = result.Strategies[i%len(result.Strategies)]
		s.SizeBytes = base.SizeBytes << i // every job its own size: no two jobs share labels
		r.Jobs = append(r.Jobs, s)
	}
	var b bytes.Buffer
	j := findings.Judge(r)
	if err := Render(&b, "prom", j); err != nil {
		t.Fatal(err)
	}
	fam := parseProm(t, b.Bytes())
	for i := range j.Run().Jobs {
		s := &j.Run().Jobs[i]
		job := jobOf(s)
		if v, n := fam.Value("clmemprobe_allocations_ok", job); n != 1 || v != float64(s.AllocationsOK) {
			t.Errorf("%v: allocations_ok %v in %d series, want %d in 1", job, v, n, s.AllocationsOK)
		}
		if v, n := fam.Value("clmemprobe_allocated_bytes", job); n != 1 || v != float64(s.BytesOK) {
			t.Errorf("%v: allocated_bytes %v, want %d", job, v, s.BytesOK)
		}
		if v, n := fam.Value("clmemprobe_budget_allocations", job); n != 1 || v != float64(r.Config.Budget(s.SizeBytes)) {
			t.Errorf("%v: budget %v, want %d", job, v, r.Config.Budget(s.SizeBytes))
		}
		for _, o := range result.Outcomes {
			want := 0.0
			if o == s.Outcome {
				want = 1
			}
			if v, n := fam.Value("clmemprobe_outcome", promcheck.Labels(job, "outcome", string(o))); n != 1 || v != want {
				t.Errorf("%v: outcome %s = %v in %d series, want %v", job, o, v, n, want)
			}
		}
		v, n := fam.Value("clmemprobe_first_failure_code", job)
		if s.Outcome == result.OutcomeFailed {
			got := promcheck.Labels(job, "stage", "touch", "code_name", "CL_MEM_OBJECT_ALLOCATION_FAILURE", "device", "1")
			if v2, n2 := fam.Value("clmemprobe_first_failure_code", got); n2 != 1 || v2 != -4 {
				t.Errorf("%v: first failure %v in %d series, want -4 at touch on device 1", job, v2, n2)
			}
		} else if n != 0 {
			t.Errorf("%v (%s): a first failure series (%v) for a job that did not fail", job, s.Outcome, v)
		}
		_, nl := fam.Value("clmemprobe_limit", job)
		if l := j.Limit(s).Limit; l == "" && nl != 0 || l != "" && nl != len(result.Limits) {
			t.Errorf("%v: %d limit series for limit %q", job, nl, l)
		}
	}
	if v, n := fam.Value("clmemprobe_info", map[string]string{"version": r.Tool.Version, "platform": r.Platform.Name, "touch": string(r.Config.Touch)}); n != 1 || v != 1 {
		t.Errorf("info: %v in %d series", v, n)
	}
	for _, d := range r.Devices {
		if _, n := fam.Value("clmemprobe_device_info", map[string]string{"device": strconv.Itoa(d.Index), "name": d.Name, "driver_version": d.DriverVersion}); n != 1 {
			t.Errorf("device %d: %d info series", d.Index, n)
		}
	}
}

// What was not measured is absent, not zero: a job without a fit has no cost series, a run still being
// written has no end time.
func TestPromLeavesOutWhatWasNotMeasured(t *testing.T) {
	r := loadFixture(t)
	r.Ended = ""
	r.Jobs = r.Jobs[:1]
	s := &r.Jobs[0]
	s.Fit = &result.Fit{OK: false, Why: "too few samples"}
	var b bytes.Buffer
	if err := Render(&b, "prom", judged(r)); err != nil {
		t.Fatal(err)
	}
	fam := parseProm(t, b.Bytes())
	for _, name := range []string{"clmemprobe_host_bytes_per_buffer", "clmemprobe_device_bytes_per_buffer", "clmemprobe_replication_factor", "clmemprobe_run_end_timestamp_seconds"} {
		if f, ok := fam[name]; ok {
			t.Errorf("%s present (%d series) though nothing was measured", name, len(f.Metric))
		}
	}
	if _, n := fam.Value("clmemprobe_run_start_timestamp_seconds", nil); n != 1 {
		t.Errorf("the start time is known, want it: %d series", n)
	}
}

// Strings from a runtime are label values: quotes, backslashes and newlines must not break the format. As
// everywhere a foreign string is shown, a newline becomes a space and other control characters their \x form.
func TestPromEscapesLabelValues(t *testing.T) {
	r := loadFixture(t)
	hostile := "dev\"ice\\\nname} 1\nclmemprobe_fake 2"
	r.Devices[0].Name, r.Platform.Name = hostile, hostile
	var b bytes.Buffer
	if err := Render(&b, "prom", judged(r)); err != nil {
		t.Fatal(err)
	}
	fam := parseProm(t, b.Bytes())
	if _, ok := fam["clmemprobe_fake"]; ok {
		t.Fatal("a device name injected a metric")
	}
	if _, n := fam.Value("clmemprobe_device_info", map[string]string{"name": strings.ReplaceAll(hostile, "\n", " ")}); n != 1 {
		t.Errorf("the device name did not come back as one line: %s", fmt.Sprint(fam["clmemprobe_device_info"]))
	}
}
