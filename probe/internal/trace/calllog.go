package trace

import "github.com/clmemprobe/clmemprobe/probe/result"

// The call log's bounds: the first calls, the last before the first failure, the first after it. A program
// that makes millions of calls leaves a log of at most these many records, with the gaps counted.
const (
	CallsHead   = 200
	CallsBefore = 500
	CallsAfter  = 200
)

// callLog keeps the bounded log of a traced program's calls (trace --calls).
type callLog struct {
	head         []result.TraceCall
	ring         []result.TraceCall // the last CallsBefore records since the head, oldest at ringAt
	ringAt       int
	skipped      uint64 // records between the head and the ring's oldest, not kept
	failed       bool
	after        []result.TraceCall
	afterSkipped uint64
}

// add logs one record; failure says it is a failed call (the first one marks the log's failure).
func (l *callLog) add(c result.TraceCall, failure bool) {
	if l.failed {
		if len(l.after) < CallsAfter {
			l.after = append(l.after, c)
		} else {
			l.afterSkipped++
		}
		return
	}
	if failure {
		c.Failure, l.failed = true, true
	}
	switch {
	case len(l.head) < CallsHead:
		l.head = append(l.head, c)
	case len(l.ring) < CallsBefore:
		l.ring = append(l.ring, c)
	default:
		l.ring[l.ringAt] = c
		l.ringAt = (l.ringAt + 1) % CallsBefore
		l.skipped++
	}
}

// list is the log in order, a Skipped entry where records were not kept.
func (l *callLog) list() []result.TraceCall {
	if l == nil {
		return nil
	}
	out := append([]result.TraceCall{}, l.head...)
	if l.skipped > 0 {
		out = append(out, result.TraceCall{Skipped: l.skipped})
	}
	out = append(out, l.ring[l.ringAt:]...)
	out = append(out, l.ring[:l.ringAt]...)
	out = append(out, l.after...)
	if l.afterSkipped > 0 {
		out = append(out, result.TraceCall{Skipped: l.afterSkipped})
	}
	return out
}
