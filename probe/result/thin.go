package result

// Thin keeps at most n of the samples s (n >= 2), evenly spread over them, in their order, the first and the
// last among them: the last is where a strategy failed, the sample every reader of a result looks at. Every
// sample series is thinned here, whether a report shrinks a result for a ticket or a collector bounds the
// samples it holds while it runs, so a kept series looks the same whichever way it was kept. With no more
// than n samples, or n below 2 (no spread keeps both ends), it returns s itself. It never changes s.
//
// From 2n-1 samples it keeps exactly every other one (indexes 0, 2, ..., 2n-2): a collector that thins when
// it holds 2n-1 and then keeps every second new sample stays evenly spaced.
func Thin[S any](s []S, n int) []S {
	if n < 2 || len(s) <= n {
		return s
	}
	out := make([]S, 0, n)
	for i := 0; i < n; i++ {
		// i*(len-1)/(n-1) runs from 0 to len-1 and rises by at least 1 a step, since len > n.
		out = append(out, s[i*(len(s)-1)/(n-1)])
	}
	return out
}
