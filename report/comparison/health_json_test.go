package comparison

import (
	"encoding/json"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

// check's JSON names its time limit as the flag does now (--time-limit: time_limit_seconds) and keeps the
// old key (budget_seconds) for scripts that read it: an additive change, both the same figure.
func TestHealthJSONNamesTheTimeLimit(t *testing.T) {
	rec := fixture.Run(t)
	const limit = 50.0
	b, err := json.Marshal(CheckHealth(result.ExpectationsFrom(rec), rec, 0.1, limit))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"time_limit_seconds", "budget_seconds"} {
		if doc[key] != limit {
			t.Errorf("%s = %v, want %v: %s", key, doc[key], limit, b)
		}
	}
}
