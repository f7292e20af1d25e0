package main

import (
	"bytes"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// In a run whose jobs share strategies, the live line names each job's size, flags and variant; in a plain
// run it does not.
func TestProgressNamesTheJobInASweep(t *testing.T) {
	job := probe.Job{Strategy: result.Shared, Size: 1 << 20, Budget: 100, Flags: result.MemReadWrite | result.MemUseHostPtr,
		Variant: result.Variant{Name: "pool-off"}}
	for _, c := range []struct {
		name string
		run  result.Config
		want bool // the line names the job: [1 MiB use-host-ptr pool-off]
	}{
		{"a flag sweep", result.Config{FlagSets: []string{"read-write", "use-host-ptr"}}, true},
		{"a size sweep", result.Config{Sizes: []uint64{4096, 1 << 20}}, true},
		{"a plain run", result.Config{}, false},
	} {
		line := "\rshared        10/100 buffers (10.0%)  10 MiB  host RSS 0 B  0.0s"
		if c.want {
			line = "\rshared        10/100 buffers [1 MiB use-host-ptr pool-off] (10.0%)  10 MiB  host RSS 0 B  0.0s"
		}
		var b bytes.Buffer
		o := &runObserver{w: &b, live: true}
		o.RunStarted(&result.Run{Config: c.run})
		o.Progress(probe.Progress{Job: job, Allocations: 10})
		if b.String() != line {
			t.Errorf("%s: line %q, want %q", c.name, b.String(), line)
		}
	}
}

// A repeated job's live line says which run it is; a job that runs once says nothing of runs.
func TestProgressNamesTheRunOfARepeatedJob(t *testing.T) {
	job := probe.Job{Strategy: result.Shared, Size: 1 << 20, Budget: 100}
	for _, p := range []probe.Progress{{Job: job, Run: 2, Runs: 3, Allocations: 10}, {Job: job, Run: 1, Runs: 1, Allocations: 10}} {
		var b bytes.Buffer
		o := &runObserver{w: &b, live: true}
		o.RunStarted(&result.Run{})
		o.Progress(p)
		want := "\rshared        10/100 buffers (10.0%)  10 MiB  host RSS 0 B  0.0s"
		if p.Runs > 1 {
			want = "\rshared        10/100 buffers run 2/3 (10.0%)  10 MiB  host RSS 0 B  0.0s"
		}
		if b.String() != want {
			t.Errorf("runs %d: line %q, want %q", p.Runs, b.String(), want)
		}
	}
}
