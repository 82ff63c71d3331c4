package resilient

import (
	"errors"
	"iter"

	"github.com/weft-run/weft/llm"
)

// errStreamDone is what streamer.pass returns when the stream has ended
// for its consumer: the consumer stopped, or got an error after some
// events. It is not retryable, and nothing more may be yielded.
var errStreamDone = errors.New("resilient: stream ended for its consumer")

// streamer passes the streams of one or more attempts on to one consumer,
// keeping the rule of Retry and Fallback: an attempt whose stream failed
// before yielding anything may be followed by another; once an event was
// yielded, the attempt's outcome is the consumer's.
type streamer struct {
	yield func(llm.StreamEvent, error) bool
	name  string // the wrapper's model name, for its own errors
	// done is set when the stream ended for the consumer (see
	// errStreamDone): the wrapper yields nothing more.
	done bool
}

// pass yields seq's events to the consumer, the final Response replaced
// by final(Response). It returns nil when seq ended with its final
// Response; errStreamDone when the stream ended for the consumer (it
// stopped iterating, or seq failed, or ended without a Response, after
// yielding events: the error is yielded first); or, when seq yielded
// nothing, its error (a *llm.ModelError matching llm.ErrIncompleteStream
// when it ended without one), which the caller may answer with another
// attempt.
func (s *streamer) pass(seq iter.Seq2[llm.StreamEvent, error], final func(*llm.Response) *llm.Response) error {
	yielded, answered := false, false
	for ev, err := range seq {
		if err != nil {
			if !yielded {
				return err
			}
			s.done = true
			s.yield(llm.StreamEvent{}, err)
			return errStreamDone
		}
		if ev.Response != nil {
			ev.Response = final(ev.Response)
			answered = true
		}
		yielded = true
		if !s.yield(ev, nil) {
			s.done = true
			return errStreamDone
		}
	}
	switch {
	case answered:
		return nil
	case !yielded:
		return modelError(s.name, llm.ErrIncompleteStream)
	default:
		s.done = true
		s.yield(llm.StreamEvent{}, modelError(s.name, llm.ErrIncompleteStream))
		return errStreamDone
	}
}
