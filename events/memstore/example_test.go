package memstore_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
)

func Example() {
	ctx := context.Background()
	s := memstore.New()
	defer s.Close()

	stream := events.SessionStream("s1")
	started := events.MustNew(events.TypeRunStarted, events.RunStarted{Agent: "planner"}, events.WithSession("s1"))
	res, err := s.Append(ctx, stream, events.NoStream, started)
	if err != nil {
		panic(err)
	}
	fmt.Println("appended version", res.LastVersion)

	// A retry of the same event (same ID) after a lost answer is a no-op.
	res, _ = s.Append(ctx, stream, events.NoStream, started)
	fmt.Println("duplicate:", res.Duplicate)

	// A second writer that thinks the stream is new is refused.
	_, err = s.Append(ctx, stream, events.NoStream, events.MustNew(events.TypeRunStarted, nil))
	var wv *events.WrongVersionError
	fmt.Println(errors.As(err, &wv), wv.Actual)

	evs, _ := s.ReadStream(ctx, stream, 0)
	for _, ev := range evs {
		data, _ := events.DecodeAs[events.RunStarted](ev)
		fmt.Println(ev.Version, ev.Type, data.Agent)
	}
	// Output:
	// appended version 1
	// duplicate: true
	// true 1
	// 1 run.started planner
}
