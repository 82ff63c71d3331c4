package main

import (
	"errors"
	"iter"

	"github.com/weft-run/weft/events"
)

// errPoison: weft audit verify found poison in the log (exit status 1):
// stored messages that are not weft events, or events that do not decode.
var errPoison = errors.New("audit verify: poison in the log")

// quarantine passes seq on without its poison, recording it in *into: a
// stored message that is not a weft event (the store yields it as an
// *events.PoisonError) is recorded and dropped; an event whose data does
// not decode (events.CheckStored) is recorded and passed on, since it is
// still a link of its stream's hash chain.
func quarantine(seq iter.Seq2[events.Event, error], into *[]*events.PoisonError) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		for ev, err := range seq {
			var p *events.PoisonError
			if errors.As(err, &p) {
				*into = append(*into, p)
				continue
			}
			if err == nil {
				if cerr := events.CheckStored(ev); errors.As(cerr, &p) {
					*into = append(*into, p)
				}
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}
