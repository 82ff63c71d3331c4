package esdbtest

import (
	"math"

	"github.com/EventStore/EventStore-Client-Go/v4/protos/shared"
	api "github.com/EventStore/EventStore-Client-Go/v4/protos/streams"
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// errInvalidPosition is what the real server answers to a read of $all from
// a position that is not the start of a record.
var errInvalidPosition = status.Error(codes.InvalidArgument, "Trying to read from an invalid position.")

// Read implements reads (a count of events, forwards or backwards, from a
// stream or $all) and subscriptions (catch-up then live, forwards, from a
// stream or $all).
func (s *streamsService) Read(req *api.ReadReq, srv api.Streams_ReadServer) error {
	opts := req.GetOptions()
	if opts == nil {
		return status.Error(codes.InvalidArgument, "'options' is a required argument")
	}
	if opts.GetUuidOption() == nil {
		return status.Error(codes.InvalidArgument, "'uuidOption' is a required argument")
	}
	uuidAsString := opts.GetUuidOption().GetString_() != nil
	var f *filter
	if fo := opts.GetFilter(); fo != nil {
		if opts.GetStream() != nil {
			return status.Error(codes.InvalidArgument, "filters apply to $all only")
		}
		var err error
		if f, err = newFilter(fo); err != nil {
			return status.Error(codes.InvalidArgument, err.Error())
		}
	}
	backwards := opts.GetReadDirection() == api.ReadReq_Options_Backwards

	switch {
	case opts.GetSubscription() != nil:
		if backwards {
			return status.Error(codes.InvalidArgument, "The combination of (Subscription, Backwards) is invalid.")
		}
		if st := opts.GetStream(); st != nil {
			return s.subscribeStream(srv, st, uuidAsString)
		}
		if all := opts.GetAll(); all != nil {
			return s.subscribeAll(srv, all, f, uuidAsString)
		}
	case opts.GetCountOption() != nil:
		count := opts.GetCount()
		if st := opts.GetStream(); st != nil {
			return s.readStream(srv, st, count, backwards, uuidAsString)
		}
		if all := opts.GetAll(); all != nil {
			return s.readAll(srv, all, count, backwards, f, uuidAsString)
		}
	}
	return status.Error(codes.InvalidArgument, "a read needs a stream option and a count or subscription option")
}

func (s *streamsService) readStream(srv api.Streams_ReadServer, st *api.ReadReq_Options_StreamOptions, count uint64, backwards bool, uuidAsString bool) error {
	name := string(st.GetStreamIdentifier().GetStreamName())
	recs := s.log.stream(name)
	if len(recs) == 0 {
		return srv.Send(&api.ReadResp{Content: &api.ReadResp_StreamNotFound_{StreamNotFound: &api.ReadResp_StreamNotFound{
			StreamIdentifier: &shared.StreamIdentifier{StreamName: []byte(name)},
		}}})
	}
	last := uint64(len(recs) - 1)
	var from uint64
	switch v := st.GetRevisionOption().(type) {
	case *api.ReadReq_Options_StreamOptions_Start:
		from = 0
		if backwards {
			return nil // nothing before the start
		}
	case *api.ReadReq_Options_StreamOptions_End:
		if !backwards {
			return nil // nothing after the end
		}
		from = last
	case *api.ReadReq_Options_StreamOptions_Revision:
		from = v.Revision
		if backwards && from > last {
			from = last
		}
	default:
		return status.Error(codes.InvalidArgument, "'revision_option' is a required argument")
	}
	var sent uint64
	if backwards {
		for rev := int64(from); rev >= 0 && sent < count; rev-- {
			if err := srv.Send(toReadEvent(recs[rev], uuidAsString)); err != nil {
				return err
			}
			sent++
		}
		return nil
	}
	for rev := from; rev <= last && sent < count; rev++ {
		if err := srv.Send(toReadEvent(recs[rev], uuidAsString)); err != nil {
			return err
		}
		sent++
	}
	return nil
}

// allStart resolves an $all position option to a log position. ok is false
// for a position inside a record.
func (s *streamsService) allStart(all *api.ReadReq_Options_AllOptions) (pos uint64, start bool, ok bool) {
	switch v := all.GetAllOption().(type) {
	case *api.ReadReq_Options_AllOptions_Start:
		return 0, true, true
	case *api.ReadReq_Options_AllOptions_End:
		return s.log.headPosition(), false, true
	case *api.ReadReq_Options_AllOptions_Position:
		c, p := v.Position.GetCommitPosition(), v.Position.GetPreparePosition()
		if c != p || !s.log.validPosition(c) {
			return 0, false, false
		}
		return c, false, true
	}
	return 0, false, false
}

func (s *streamsService) readAll(srv api.Streams_ReadServer, all *api.ReadReq_Options_AllOptions, count uint64, backwards bool, f *filter, uuidAsString bool) error {
	pos, _, ok := s.allStart(all)
	if !ok {
		return errInvalidPosition
	}
	var sent uint64
	if backwards {
		// Backwards reads are exclusive of the position: events before it.
		for sent < count {
			recs := s.log.before(pos, readBatch)
			if len(recs) == 0 {
				return nil
			}
			for _, r := range recs {
				pos = r.pos
				if !f.allows(r) {
					continue
				}
				if err := srv.Send(toReadEvent(r, uuidAsString)); err != nil {
					return err
				}
				if sent++; sent == count {
					return nil
				}
			}
		}
		return nil
	}
	// Forwards reads include the event at the position.
	exclusive := false
	for sent < count {
		recs, _, _ := s.log.from(pos, exclusive, readBatch)
		if len(recs) == 0 {
			return nil
		}
		for _, r := range recs {
			pos, exclusive = r.pos, true
			if !f.allows(r) {
				continue
			}
			if err := srv.Send(toReadEvent(r, uuidAsString)); err != nil {
				return err
			}
			if sent++; sent == count {
				return nil
			}
		}
	}
	return nil
}

// confirm sends the subscription confirmation, the first message of every
// subscription.
func confirm(srv api.Streams_ReadServer) error {
	return srv.Send(&api.ReadResp{Content: &api.ReadResp_Confirmation{Confirmation: &api.ReadResp_SubscriptionConfirmation{
		SubscriptionId: uuid.NewString(),
	}}})
}

var caughtUp = &api.ReadResp{Content: &api.ReadResp_CaughtUp_{CaughtUp: &api.ReadResp_CaughtUp{}}}

// subscribeAll sends every event after the starting position (exclusive),
// then CaughtUp, then each new event as it is written, until the client
// goes away or the server stops. With a filter it also sends a checkpoint
// every f.every considered events and when it catches up.
func (s *streamsService) subscribeAll(srv api.Streams_ReadServer, all *api.ReadReq_Options_AllOptions, f *filter, uuidAsString bool) error {
	pos, start, ok := s.allStart(all)
	if !ok {
		return errInvalidPosition
	}
	if _, isEnd := all.GetAllOption().(*api.ReadReq_Options_AllOptions_End); isEnd {
		// From the end: only events written after the subscription.
		last, any := s.log.lastPosition()
		pos, start = last, !any
	}
	if err := confirm(srv); err != nil {
		return err
	}
	ctx := srv.Context()
	exclusive := !start
	live := false
	var considered uint64
	for {
		recs, head, changed := s.log.from(pos, exclusive, readBatch)
		if len(recs) == 0 {
			if !live {
				live = true
				if f != nil {
					if err := srv.Send(checkpoint(head)); err != nil {
						return err
					}
				}
				if err := srv.Send(caughtUp); err != nil {
					return err
				}
			}
			select {
			case <-changed:
				continue
			case <-ctx.Done():
				return status.FromContextError(ctx.Err()).Err()
			}
		}
		for _, r := range recs {
			pos, exclusive = r.pos, true
			considered++
			if f.allows(r) {
				if err := srv.Send(toReadEvent(r, uuidAsString)); err != nil {
					return err
				}
			}
			if f != nil && considered%f.every == 0 {
				if err := srv.Send(checkpoint(r.pos)); err != nil {
					return err
				}
			}
		}
	}
}

func checkpoint(pos uint64) *api.ReadResp {
	return &api.ReadResp{Content: &api.ReadResp_Checkpoint_{Checkpoint: &api.ReadResp_Checkpoint{
		CommitPosition: pos, PreparePosition: pos,
	}}}
}

// subscribeStream is subscribeAll for one stream: events after the starting
// revision (exclusive). A stream that does not exist yet is not an error;
// the subscription waits for its first event.
func (s *streamsService) subscribeStream(srv api.Streams_ReadServer, st *api.ReadReq_Options_StreamOptions, uuidAsString bool) error {
	name := string(st.GetStreamIdentifier().GetStreamName())
	var rev int64
	switch v := st.GetRevisionOption().(type) {
	case *api.ReadReq_Options_StreamOptions_Start:
		rev = -1
	case *api.ReadReq_Options_StreamOptions_End:
		rev = int64(len(s.log.stream(name))) - 1
	case *api.ReadReq_Options_StreamOptions_Revision:
		if v.Revision > math.MaxInt64 {
			return status.Error(codes.InvalidArgument, "revision out of range")
		}
		rev = int64(v.Revision)
	default:
		return status.Error(codes.InvalidArgument, "'revision_option' is a required argument")
	}
	if err := confirm(srv); err != nil {
		return err
	}
	ctx := srv.Context()
	live := false
	for {
		recs, changed := s.log.streamAfter(name, rev, readBatch)
		if len(recs) == 0 {
			if !live {
				live = true
				if err := srv.Send(caughtUp); err != nil {
					return err
				}
			}
			select {
			case <-changed:
				continue
			case <-ctx.Done():
				return status.FromContextError(ctx.Err()).Err()
			}
		}
		for _, r := range recs {
			rev = int64(r.revision)
			if err := srv.Send(toReadEvent(r, uuidAsString)); err != nil {
				return err
			}
		}
	}
}
