package render

import (
	"fmt"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// A count is one number where its ends agree, and both ends, joined as asked, where they do not: no output
// may say the top of a killed batch's range alone.
func TestSpanSaysBothEndsOfARange(t *testing.T) {
	for _, c := range []struct {
		least, most uint64
		sep         string
	}{{1031, 1031, "-"}, {967, 1031, "-"}, {967, 1031, " to "}, {0, 64, "-#"}} {
		want := fmt.Sprint(c.most)
		if c.least < c.most {
			want = fmt.Sprint(c.least) + c.sep + fmt.Sprint(c.most)
		}
		if got := Span(c.least, c.most, c.sep); got != want {
			t.Errorf("Span(%d, %d, %q) = %q, want %q", c.least, c.most, c.sep, got, want)
		}
	}
	confirmed := uint64(967)
	killed := &result.JobResult{AllocationsOK: 1031, ConfirmedOK: &confirmed}
	if got, want := MadeAs(killed, "-#"), fmt.Sprintf("%d-#%d", confirmed, killed.AllocationsOK); got != want {
		t.Errorf("MadeAs of a killed batch = %q, want %q", got, want)
	}
	if got, want := Made(&result.JobResult{AllocationsOK: 12}), "12"; got != want {
		t.Errorf("Made of an exact count = %q, want %q", got, want)
	}
}

// A clause after a colon starts in lower case, but a word in capitals is a name and keeps them.
func TestLowerFirstKeepsWordsInCapitals(t *testing.T) {
	for in, want := range map[string]string{
		"The runtime": "the runtime", "OOM killer": "OOM killer", "CL_OUT_OF_HOST_MEMORY": "CL_OUT_OF_HOST_MEMORY",
		"": "", "already lower": "already lower", "A buffer": "a buffer",
	} {
		if got := LowerFirst(in); got != want {
			t.Errorf("LowerFirst(%q) = %q, want %q", in, got, want)
		}
	}
}
