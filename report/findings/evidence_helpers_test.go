package findings

import "github.com/clmemprobe/clmemprobe/report/result"

// apply judges r and puts the judged copy in its place, for tests that read the findings and limits off the
// run as run.json holds them.
func apply(r *result.Run) { *r = *Judge(r).Run() }
