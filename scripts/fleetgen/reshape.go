package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// The issue's files: 94 KiB a node, the samples 36% of it.
const (
	issueBytes       = 94 << 10
	issueSampleBytes = issueBytes * 36 / 100
	maxDensifyRounds = 4
)

// reshapeIssue makes the template the issue's file: samples between neighbours (the midpoint, as a run
// sampling more often would have read) until the samples are their share of the file, then each worker's
// output longer until the file is the issue's size.
func reshapeIssue(r *result.Run) {
	for range maxDensifyRounds {
		have, n := sampleBytes(r), 0
		for k := range r.Jobs {
			n += len(r.Jobs[k].Samples)
		}
		want := issueSampleBytes
		if have >= want || n == 0 {
			break
		}
		// As many more as the bytes still missing hold, spread over the jobs by their samples.
		more := float64(want-have) / float64(have) // per sample there is
		for k := range r.Jobs {
			densify(&r.Jobs[k], int(more*float64(len(r.Jobs[k].Samples))+0.5))
		}
	}
	short := issueBytes - indentedSize(r)
	var jobs []*result.JobResult
	for k := range r.Jobs {
		if r.Jobs[k].Outcome != result.OutcomeUnsupported {
			jobs = append(jobs, &r.Jobs[k])
		}
	}
	for i, s := range jobs {
		s.WorkerOutput += workerLines(short/len(jobs), i)
	}
}

// densify puts a sample halfway between two of the job's samples, in its first n gaps at most.
func densify(s *result.JobResult, n int) {
	if len(s.Samples) < 2 {
		return
	}
	out := make([]result.Sample, 0, 2*len(s.Samples))
	for i, a := range s.Samples {
		if i > 0 && i <= n {
			p := s.Samples[i-1]
			out = append(out, result.Sample{Index: (p.Index + a.Index) / 2, Seconds: (p.Seconds + a.Seconds) / 2,
				RSSBytes: (p.RSSBytes + a.RSSBytes) / 2, VMSBytes: (p.VMSBytes + a.VMSBytes) / 2, HWMBytes: (p.HWMBytes + a.HWMBytes) / 2,
				AvailBytes: (p.AvailBytes + a.AvailBytes) / 2, CommittedBytes: (p.CommittedBytes + a.CommittedBytes) / 2,
				Mappings: a.Mappings, OpenFDs: a.OpenFDs, CgroupBytes: (p.CgroupBytes + a.CgroupBytes) / 2})
		}
		out = append(out, a)
	}
	s.Samples, s.SamplesTotal = out, max(s.SamplesTotal, len(out))
}

// workerLines is about n bytes of what a runtime prints with its debugging on.
func workerLines(n, job int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "[%d] POCL: in fn pocl_pthread_alloc_mem_obj at line %d:\n  |   GENERIC |  Basic allocation of %d bytes for buffer %d on device %d\n",
			job, 180+i%40, 1<<20, i, i%2)
	}
	return b.String()
}

// reshapeSmall cuts the template down to what a merge reads and a little more: two samples a job, no
// findings, system description, resource ledgers or device sizes.
func reshapeSmall(r *result.Run) {
	r.Judgement, r.KernelLog = result.Judgement{}, nil
	if r.Environment != nil {
		r.Environment.System, r.Environment.Platforms = nil, nil
	}
	for d := range r.Devices {
		r.Devices[d].Extensions = nil
	}
	for k := range r.Jobs {
		s := &r.Jobs[k]
		if len(s.Samples) > 2 {
			s.Samples = []result.Sample{s.Samples[0], s.Samples[len(s.Samples)-1]}
		}
		s.Resources, s.DeviceSizes, s.DeviceSampler = nil, nil, ""
	}
}

// sampleBytes is what the samples take of the file as fleetgen writes it.
func sampleBytes(r *result.Run) int {
	cp := *r
	cp.Jobs = append([]result.JobResult(nil), r.Jobs...)
	for k := range cp.Jobs {
		cp.Jobs[k].Samples = nil
	}
	return indentedSize(r) - indentedSize(&cp)
}

func indentedSize(r *result.Run) int {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		panic(err) // a loaded run always encodes
	}
	return len(b) + 1
}
