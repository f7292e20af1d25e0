package report

import (
	"github.com/clmemprobe/clmemprobe/report/result"
)

// Downsample keeps at most n samples (n >= 2), evenly spread over the run, the first and the last among them.
func Downsample(s []result.Sample, n int) []result.Sample {
	if n < 2 || len(s) <= n {
		return s
	}
	out := make([]result.Sample, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, s[i*(len(s)-1)/(n-1)])
	}
	return out
}
