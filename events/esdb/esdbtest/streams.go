package esdbtest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"

	"github.com/EventStore/EventStore-Client-Go/v4/protos/shared"
	api "github.com/EventStore/EventStore-Client-Go/v4/protos/streams"
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Keys of the system metadata of an event, as on the wire.
const (
	metaType        = "type"
	metaContentType = "content-type"
	metaCreated     = "created"
)

// readBatch is how many records a read or a subscription takes from the log
// at a time.
const readBatch = 256

// streamsService implements the Streams service of the EventStoreDB gRPC
// protocol over a memLog: Append and Read. Delete, Tombstone and BatchAppend
// answer Unimplemented.
type streamsService struct {
	api.UnimplementedStreamsServer
	log           *memLog
	maxAppendSize int
}

// exception builds a status error with the "exception" trailer the real
// server sends, which the client inspects for some errors.
func exception(srvStream interface{ SetTrailer(metadata.MD) }, code codes.Code, key, msg string, kv ...string) error {
	md := metadata.Pairs(append([]string{"exception", key}, kv...)...)
	srvStream.SetTrailer(md)
	return status.Error(code, msg)
}

// Append implements the client-streaming append: one options message, then
// the proposed messages, then the result.
func (s *streamsService) Append(srv api.Streams_AppendServer) error {
	first, err := srv.Recv()
	if err != nil {
		return err
	}
	opts := first.GetOptions()
	if opts == nil {
		return status.Error(codes.InvalidArgument, "the first append message must carry the options")
	}
	stream := string(opts.GetStreamIdentifier().GetStreamName())
	if stream == "" {
		return status.Error(codes.InvalidArgument, "'stream_identifier' is a required argument")
	}
	var exp expectation
	switch v := opts.GetExpectedStreamRevision().(type) {
	case *api.AppendReq_Options_Any:
		exp.kind = expectAny
	case *api.AppendReq_Options_NoStream:
		exp.kind = expectNoStream
	case *api.AppendReq_Options_StreamExists:
		exp.kind = expectStreamExists
	case *api.AppendReq_Options_Revision:
		exp = expectation{kind: expectRevision, revision: v.Revision}
	default:
		return status.Error(codes.InvalidArgument, "'expected_stream_revision' is a required argument")
	}

	var evs []proposed
	size := 0
	for {
		msg, err := srv.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		pm := msg.GetProposedMessage()
		if pm == nil {
			return status.Error(codes.InvalidArgument, "an append message after the options must be a proposed message")
		}
		id, err := uuidFromProto(pm.GetId())
		if err != nil {
			return status.Errorf(codes.InvalidArgument, "proposed message id: %v", err)
		}
		typ, ok := pm.GetMetadata()[metaType]
		if !ok {
			return exception(srv, codes.InvalidArgument, "missing-required-metadata-property",
				fmt.Sprintf("Required Metadata Property '%s' is missing", metaType))
		}
		ct, ok := pm.GetMetadata()[metaContentType]
		if !ok {
			return exception(srv, codes.InvalidArgument, "missing-required-metadata-property",
				fmt.Sprintf("Required Metadata Property '%s' is missing", metaContentType))
		}
		size += len(typ) + len(pm.GetData()) + len(pm.GetCustomMetadata())
		if size > s.maxAppendSize {
			return exception(srv, codes.InvalidArgument, "maximum-append-size-exceeded",
				fmt.Sprintf("Maximum Append Size of %d Exceeded.", s.maxAppendSize),
				"maximum-append-size", fmt.Sprint(s.maxAppendSize))
		}
		evs = append(evs, proposed{id: id, eventType: typ, contentType: ct, data: pm.GetData(), meta: pm.GetCustomMetadata()})
	}

	o := s.log.append(stream, exp, evs)
	resp := &api.AppendResp{}
	switch o.kind {
	case outcomeWritten, outcomeIdempotent:
		resp.Result = &api.AppendResp_Success_{Success: &api.AppendResp_Success{
			CurrentRevisionOption: &api.AppendResp_Success_CurrentRevision{CurrentRevision: o.lastRevision},
			PositionOption: &api.AppendResp_Success_Position{Position: &api.AppendResp_Position{
				CommitPosition: o.lastPos, PreparePosition: o.lastPos,
			}},
		}}
	case outcomeEmpty:
		success := &api.AppendResp_Success{PositionOption: &api.AppendResp_Success_NoPosition{NoPosition: &shared.Empty{}}}
		if o.current < 0 {
			success.CurrentRevisionOption = &api.AppendResp_Success_NoStream{NoStream: &shared.Empty{}}
		} else {
			success.CurrentRevisionOption = &api.AppendResp_Success_CurrentRevision{CurrentRevision: uint64(o.current)}
		}
		resp.Result = &api.AppendResp_Success_{Success: success}
	case outcomeWrong:
		resp.Result = &api.AppendResp_WrongExpectedVersion_{WrongExpectedVersion: wrongVersion(exp, o.current)}
	}
	return srv.SendAndClose(resp)
}

// wrongVersion fills both the current and the 20.6.0 fields, as the real
// server does.
func wrongVersion(exp expectation, current int64) *api.AppendResp_WrongExpectedVersion {
	w := &api.AppendResp_WrongExpectedVersion{}
	if current < 0 {
		w.CurrentRevisionOption = &api.AppendResp_WrongExpectedVersion_CurrentNoStream{CurrentNoStream: &shared.Empty{}}
		w.CurrentRevisionOption_20_6_0 = &api.AppendResp_WrongExpectedVersion_NoStream_20_6_0{NoStream_20_6_0: &shared.Empty{}}
	} else {
		w.CurrentRevisionOption = &api.AppendResp_WrongExpectedVersion_CurrentRevision{CurrentRevision: uint64(current)}
		w.CurrentRevisionOption_20_6_0 = &api.AppendResp_WrongExpectedVersion_CurrentRevision_20_6_0{CurrentRevision_20_6_0: uint64(current)}
	}
	switch exp.kind {
	case expectAny:
		w.ExpectedRevisionOption = &api.AppendResp_WrongExpectedVersion_ExpectedAny{ExpectedAny: &shared.Empty{}}
		w.ExpectedRevisionOption_20_6_0 = &api.AppendResp_WrongExpectedVersion_Any_20_6_0{Any_20_6_0: &shared.Empty{}}
	case expectStreamExists:
		w.ExpectedRevisionOption = &api.AppendResp_WrongExpectedVersion_ExpectedStreamExists{ExpectedStreamExists: &shared.Empty{}}
		w.ExpectedRevisionOption_20_6_0 = &api.AppendResp_WrongExpectedVersion_StreamExists_20_6_0{StreamExists_20_6_0: &shared.Empty{}}
	case expectNoStream:
		w.ExpectedRevisionOption = &api.AppendResp_WrongExpectedVersion_ExpectedNoStream{ExpectedNoStream: &shared.Empty{}}
		w.ExpectedRevisionOption_20_6_0 = &api.AppendResp_WrongExpectedVersion_ExpectedRevision_20_6_0{ExpectedRevision_20_6_0: math.MaxUint64}
	case expectRevision:
		w.ExpectedRevisionOption = &api.AppendResp_WrongExpectedVersion_ExpectedRevision{ExpectedRevision: exp.revision}
		w.ExpectedRevisionOption_20_6_0 = &api.AppendResp_WrongExpectedVersion_ExpectedRevision_20_6_0{ExpectedRevision_20_6_0: exp.revision}
	}
	return w
}

// uuidFromProto decodes the structured (two big-endian int64 halves) or
// string form of a UUID.
func uuidFromProto(u *shared.UUID) (uuid.UUID, error) {
	switch v := u.GetValue().(type) {
	case *shared.UUID_Structured_:
		var b [16]byte
		binary.BigEndian.PutUint64(b[:8], uint64(v.Structured.GetMostSignificantBits()))
		binary.BigEndian.PutUint64(b[8:], uint64(v.Structured.GetLeastSignificantBits()))
		return uuid.UUID(b), nil
	case *shared.UUID_String_:
		return uuid.Parse(v.String_)
	}
	return uuid.Nil, errors.New("missing")
}

// uuidToProto encodes id in the form the read request asked for.
func uuidToProto(id uuid.UUID, asString bool) *shared.UUID {
	if asString {
		return &shared.UUID{Value: &shared.UUID_String_{String_: id.String()}}
	}
	return &shared.UUID{Value: &shared.UUID_Structured_{Structured: &shared.UUID_Structured{
		MostSignificantBits:  int64(binary.BigEndian.Uint64(id[:8])),
		LeastSignificantBits: int64(binary.BigEndian.Uint64(id[8:])),
	}}}
}

// toReadEvent converts a record to the wire form. Every record is
// self-committed, so its position is known on stream reads too (as on a
// current server).
func toReadEvent(r *record, uuidAsString bool) *api.ReadResp {
	return &api.ReadResp{Content: &api.ReadResp_Event{Event: &api.ReadResp_ReadEvent{
		Event: &api.ReadResp_ReadEvent_RecordedEvent{
			Id:               uuidToProto(r.id, uuidAsString),
			StreamIdentifier: &shared.StreamIdentifier{StreamName: []byte(r.stream)},
			StreamRevision:   r.revision,
			PreparePosition:  r.pos,
			CommitPosition:   r.pos,
			Metadata: map[string]string{
				metaType:        r.eventType,
				metaContentType: r.contentType,
				metaCreated:     r.created,
			},
			CustomMetadata: r.meta,
			Data:           r.data,
		},
		Position: &api.ReadResp_ReadEvent_CommitPosition{CommitPosition: r.pos},
	}}}
}

// filter is a server-side $all filter on stream names or event types.
type filter struct {
	onType   bool
	prefixes []string
	re       *regexp.Regexp
	// every is how many considered events a checkpoint is sent after
	// (subscriptions only).
	every uint64
}

func newFilter(o *api.ReadReq_Options_FilterOptions) (*filter, error) {
	f := &filter{}
	var expr *api.ReadReq_Options_FilterOptions_Expression
	switch v := o.GetFilter().(type) {
	case *api.ReadReq_Options_FilterOptions_StreamIdentifier:
		expr = v.StreamIdentifier
	case *api.ReadReq_Options_FilterOptions_EventType:
		expr, f.onType = v.EventType, true
	default:
		return nil, errors.New("a filter needs a stream identifier or event type expression")
	}
	if expr.GetRegex() != "" {
		re, err := regexp.Compile(expr.GetRegex())
		if err != nil {
			return nil, fmt.Errorf("filter regex: %w", err)
		}
		f.re = re
	} else {
		f.prefixes = expr.GetPrefix()
	}
	window := uint64(32)
	if m, ok := o.GetWindow().(*api.ReadReq_Options_FilterOptions_Max); ok && m.Max > 0 {
		window = uint64(m.Max)
	}
	f.every = window * max(1, uint64(o.GetCheckpointIntervalMultiplier()))
	return f, nil
}

func (f *filter) allows(r *record) bool {
	if f == nil {
		return true
	}
	s := r.stream
	if f.onType {
		s = r.eventType
	}
	if f.re != nil {
		return f.re.MatchString(s)
	}
	for _, p := range f.prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
