package supervise

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
)

// fortyTwo is the answer the fake children send, as a type a parent would decode it into.
type fortyTwo struct {
	Answer int `json:"answer"`
}

// Answer tells no answer from a bad one, names the child, and never returns half a value.
func TestAnswerDecodesOrSaysWhy(t *testing.T) {
	oversized := append(append([]byte(`{"answer":42,"pad":"`), bytes.Repeat([]byte("x"), maxAnswer)...), `"}`...)
	for _, c := range []struct {
		name   string
		ending Ending
		want   int
		is     error  // nil: decoded
		words  string // the error, whole
	}{
		{"valid", Ending{Kind: "fake", Answer: []byte(`{"answer":42}`)}, 42, nil, ""},
		{"unknown fields are another build's additions", Ending{Kind: "fake", Answer: []byte(`{"answer":7,"new":1}`)}, 7, nil, ""},
		{"no answer says how the child ended", Ending{Kind: "fake", Stop: Hung, Reason: "watchdog: no progress for 1s"},
			0, ErrNoAnswer, "the fake child sent no answer: it hung: watchdog: no progress for 1s"},
		{"truncated", Ending{Kind: "fake", Answer: []byte(`{"answer":4`)}, 0, ErrBadAnswer, "the fake child sent a bad answer (unexpected end of JSON input)"},
		{"the wrong shape", Ending{Kind: "fake", Answer: []byte(`{"answer":"many"}`)}, 0, ErrBadAnswer, "the fake child sent a bad answer (json: cannot unmarshal string into Go struct field fortyTwo.answer of type int)"},
		{"null", Ending{Kind: "fake", Answer: []byte(" null ")}, 0, ErrBadAnswer, "the fake child sent a bad answer (null)"},
		{"oversized", Ending{Kind: "fake", Answer: oversized}, 0, ErrBadAnswer,
			"the fake child sent a bad answer (" + strconv.Itoa(len(oversized)) + " bytes, more than the " + strconv.Itoa(maxAnswer) + " an answer may have)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Answer[fortyTwo](&c.ending)
			if !errors.Is(err, c.is) || (c.is == nil) != (err == nil) {
				t.Fatalf("error %v, want one that is %v", err, c.is)
			}
			if got.Answer != c.want {
				t.Errorf("answer %d, want %d", got.Answer, c.want)
			}
			if err == nil {
				return
			}
			if msg := err.Error(); msg != c.words {
				t.Errorf("error %q, want the one line %q", msg, c.words)
			}
			if errors.Is(err, ErrNoAnswer) && How(err) != c.ending.How() {
				t.Errorf("How %q, want the ending's %q", How(err), c.ending.How())
			}
		})
	}
}

// On real children: one that answers is decoded, one that dies first is an ErrNoAnswer naming its exit.
func TestAnswerOfARealChild(t *testing.T) {
	for _, c := range []struct {
		behaviour string
		want      int
		is        error
		words     string
	}{
		{"events", 42, nil, ""},
		{"no-result", 0, ErrNoAnswer, "the fake child sent no answer: it failed: the worker exited with status 7 without reporting a result; it printed: pocl: assertion `pool != NULL' failed"},
	} {
		t.Run(c.behaviour, func(t *testing.T) {
			t.Setenv("FAKE_CHILD", c.behaviour)
			e, err := Run(context.Background(), Child{Spec: wire.Spec{Kind: "fake"}, Limits: Limits{Setup: 10 * time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			got, err := Answer[fortyTwo](e)
			if got.Answer != c.want || !errors.Is(err, c.is) || (c.is == nil) != (err == nil) {
				t.Fatalf("answer %d, error %v; want %d, one that is %v", got.Answer, err, c.want, c.is)
			}
			if err != nil && err.Error() != c.words {
				t.Errorf("error %q, want %q", err, c.words)
			}
		})
	}
}

// How gives an error that is no AnswerError in its own words.
func TestHowOfAnotherError(t *testing.T) {
	if got := How(errors.New("cannot start a child process")); got != "cannot start a child process" {
		t.Errorf("How %q", got)
	}
}
