package supervise

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
)

// answerError is why a child gave no answer its parent can use; its values are constants.
type answerError string

func (e answerError) Error() string { return string(e) }

// What Answer's errors unwrap to.
const (
	// ErrNoAnswer: the child ended without sending an answer (it crashed, hung, was stopped).
	ErrNoAnswer = answerError("sent no answer")
	// ErrBadAnswer: the child sent an answer that is not what its kind answers (another build's shape, a
	// null, a value too large to decode).
	ErrBadAnswer = answerError("sent a bad answer")
)

// maxAnswer bounds an answer Answer decodes. It is the wire's bound on one event line, which carries the
// answer: no answer that arrived whole is refused, and an Ending made any other way is held to the same.
const maxAnswer = wire.MaxEventLine

// AnswerError is a child that gave no usable answer. Err is ErrNoAnswer or ErrBadAnswer.
type AnswerError struct {
	Kind wire.Kind
	Err  error
	// How is how the child ended when it sent no answer ("crashed with SIGSEGV", as Ending.How says), or
	// what was wrong with its answer: words that follow "the OpenCL runtime" or "the child" in a message.
	How string
}

func (e *AnswerError) Error() string {
	if e.Err == ErrNoAnswer {
		return fmt.Sprintf("the %s child %s: it %s", e.Kind, e.Err, e.How)
	}
	return fmt.Sprintf("the %s child %s", e.Kind, e.How)
}

func (e *AnswerError) Unwrap() error { return e.Err }

// Answer decodes the answer e's child sent into a T: the one place a parent reads a child's last word.
// A child that sent none gives an *AnswerError wrapping ErrNoAnswer, one whose answer is larger than
// maxAnswer, null, or not a T gives one wrapping ErrBadAnswer.
func Answer[T any](e *Ending) (T, error) {
	var v, zero T
	bad := func(how string) (T, error) {
		// A partly decoded value is dropped: a caller never sees half an answer.
		return zero, &AnswerError{Kind: e.Kind, Err: ErrBadAnswer, How: ErrBadAnswer.Error() + " (" + how + ")"}
	}
	switch {
	case e.Answer == nil:
		return zero, &AnswerError{Kind: e.Kind, Err: ErrNoAnswer, How: e.How()}
	case len(e.Answer) > maxAnswer:
		return bad(fmt.Sprintf("%d bytes, more than the %d an answer may have", len(e.Answer), maxAnswer))
	case bytes.Equal(bytes.TrimSpace(e.Answer), []byte("null")):
		// A null decodes into any T as its zero value, which would pass for an answer that says nothing.
		return bad("null")
	}
	if err := json.Unmarshal(e.Answer, &v); err != nil {
		return bad(err.Error())
	}
	return v, nil
}

// How is how a child that gave no usable answer failed, in words that follow "the OpenCL runtime" in a
// message; for an error that is no AnswerError, its own words.
func How(err error) string {
	var ae *AnswerError
	if errors.As(err, &ae) {
		return ae.How
	}
	return err.Error()
}
