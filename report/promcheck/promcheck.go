// Package promcheck reads a Prometheus text exposition the way Prometheus does and lints it with
// Prometheus's own linter. Tests use it on what clmemprobe writes; it is not part of the tool.
package promcheck

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families maps a metric name to its family.
type Families map[string]*dto.MetricFamily

// Parse parses text with Prometheus's parser, lints it with promlint, and checks what node_exporter's
// textfile collector needs: clmemprobe_ names, HELP on every family, gauges, no timestamps. It returns the
// families and every problem found, one sentence each.
func Parse(text []byte) (Families, []string, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fam, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		return nil, nil, fmt.Errorf("the Prometheus parser refuses the exposition: %w", err)
	}
	lints, err := promlint.New(bytes.NewReader(text)).Lint()
	if err != nil {
		return nil, nil, fmt.Errorf("promlint: %w", err)
	}
	var problems []string
	for _, p := range lints {
		problems = append(problems, fmt.Sprintf("promlint: %s: %s", p.Metric, p.Text))
	}
	for name, f := range fam {
		if !strings.HasPrefix(name, "clmemprobe_") || f.GetHelp() == "" || f.GetType() != dto.MetricType_GAUGE {
			problems = append(problems, name+": want a gauge named clmemprobe_..., with HELP")
		}
		for _, m := range f.Metric {
			if m.TimestampMs != nil {
				problems = append(problems, name+" has a timestamp: the textfile collector refuses those")
			}
		}
	}
	return Families(fam), problems, nil
}

// Value returns the value of the series of family name whose labels include want, and how many series
// matched.
func (f Families) Value(name string, want map[string]string) (float64, int) {
	var v float64
	n := 0
	for _, m := range f[name].GetMetric() {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, w := range want {
			if have[k] != w {
				match = false
			}
		}
		if match {
			v, n = m.GetGauge().GetValue(), n+1
		}
	}
	return v, n
}

// Labels returns l with more labels added, as a new map.
func Labels(l map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range l {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}
