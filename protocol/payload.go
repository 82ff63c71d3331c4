package protocol

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// Payloads too large for the bus. A NATS message is limited to the
// server's max payload (1 MiB by default), and a publish over it fails in
// the client: a report or a call that cannot be sent would leave its run
// waiting for an answer that never comes. Every message a tool call needs
// is therefore encoded within the limit (docs/worker-protocol.md,
// "Payloads too large for a message"):
//
//   - a call whose arguments make it too large carries them in the blob
//     store (ToolRequest.ArgumentsBlob), or fails as an execution error
//     when there is none;
//   - a returned report too large for a message carries the return in the
//     blob store (ToolReport.ReturnBlob), or, when the reporter has no blob
//     store (a worker without access to it), is replaced by an execution
//     error saying so: the node always hears a return, and never sends a
//     call again because its result did not fit;
//   - a progress report too large for a message is dropped.
//
// A return too large for a message and over the payload limit
// (PayloadLimits.Max, default DefaultMaxPayloadBytes) is not put in the
// blob store: EncodeReport replaces it with the execution error
// TooLargeReturn ("result of N bytes exceeds the limit of M bytes"). The
// node applies its own limit to every result it records, whatever the
// route.

// DefaultMaxPayloadBytes is the largest tool result, tool arguments or
// model message the runtime accepts unless configured otherwise: 32 MiB.
const DefaultMaxPayloadBytes = 32 << 20

// PayloadLimits say how large a message may be and where larger payloads
// go. The zero value has no bus limit, the default payload limit and no
// blob store.
type PayloadLimits struct {
	// Bus is the largest message the connection may publish
	// (nats.Conn.MaxPayload); 0: no limit.
	Bus int
	// Max is the largest tool result or arguments accepted, encoded; 0:
	// DefaultMaxPayloadBytes.
	Max int
	// Blobs keeps payloads too large for a message; nil: none.
	Blobs events.BlobStore
}

// Limit returns the largest tool result or arguments accepted: Max, or
// DefaultMaxPayloadBytes when Max is not set.
func (l PayloadLimits) Limit() int {
	if l.Max <= 0 {
		return DefaultMaxPayloadBytes
	}
	return l.Max
}

// fits reports whether a message of n bytes may be published.
func (l PayloadLimits) fits(n int) bool { return l.Bus <= 0 || n <= l.Bus }

// blobTimeout bounds one put of a payload in the blob store; the fast
// path (a message that fits) makes no context.
const blobTimeout = 30 * time.Second

// messageReserve is what a message's subject and headers may take beside
// its body.
const messageReserve = 4 << 10

// TooLargeReturn is the execution error a tool call returns instead of a
// result of n bytes over a limit of limit bytes; where says which limit
// ("" for the runtime's, or "bus" for the message size when there is no
// blob store).
func TooLargeReturn(callID, tool string, attempts, n, limit int, where string) toolsets.Return {
	msg := fmt.Sprintf("tool %q: result of %d bytes exceeds the limit of %d bytes", tool, n, limit)
	if where == "bus" {
		msg = fmt.Sprintf("tool %q: result of %d bytes exceeds the bus limit of %d bytes, and no blob store is available to send it by reference", tool, n, limit)
	}
	content, _ := json.Marshal(msg)
	return toolsets.Return{CallID: callID, ToolName: tool, Kind: toolsets.KindExecution, IsError: true, Attempts: attempts,
		Content: content, Control: &toolsets.Control{Message: msg}}
}

// EncodeReport returns the message body of report r within lim (see
// "Payloads too large for the bus"): r as JSON when it fits, else its
// return by reference to lim.Blobs, else a returned report of the error
// that says why the result could not be sent. ok is false for a report
// that is dropped (a progress report too large for a message). A put in
// the blob store is bounded by ctx and 30 seconds.
func EncodeReport(ctx context.Context, r ToolReport, lim PayloadLimits) (body []byte, ok bool, err error) {
	body, err = json.Marshal(&r)
	if err != nil {
		return nil, false, fmt.Errorf("encode tool report: %w", err)
	}
	if lim.fits(len(body) + messageReserve) {
		return body, true, nil
	}
	if r.Type != ReportReturned || r.Return == nil {
		return nil, false, nil
	}
	ret, err := json.Marshal(r.Return)
	if err != nil {
		return nil, false, fmt.Errorf("encode tool return: %w", err)
	}
	switch {
	case len(ret) > lim.Limit():
		tl := TooLargeReturn(r.Return.CallID, r.Return.ToolName, r.Return.Attempts, len(ret), lim.Limit(), "")
		r.Return = &tl
	case lim.Blobs != nil:
		ctx, cancel := context.WithTimeout(ctx, blobTimeout)
		defer cancel()
		ref, err := lim.Blobs.PutBlob(ctx, ret)
		if err == nil {
			r.Return, r.ReturnBlob = nil, &ref
			break
		}
		tl := TooLargeReturn(r.Return.CallID, r.Return.ToolName, r.Return.Attempts, len(ret), lim.Bus, "bus")
		tl.Control.Message += ": " + err.Error()
		tl.Content, _ = json.Marshal(tl.Control.Message)
		r.Return = &tl
	default:
		tl := TooLargeReturn(r.Return.CallID, r.Return.ToolName, r.Return.Attempts, len(ret), lim.Bus, "bus")
		r.Return = &tl
	}
	body, err = json.Marshal(&r)
	if err != nil {
		return nil, false, fmt.Errorf("encode tool report: %w", err)
	}
	return body, true, nil
}

// ResolveReport reads the return of r from blobs when r carries it by
// reference (ToolReport.ReturnBlob). A return that cannot be read (no blob
// store, a missing or altered blob, content that is not a return) becomes
// an execution error saying so: the call returns either way.
func ResolveReport(ctx context.Context, blobs events.BlobStore, r *ToolReport) {
	ref := r.ReturnBlob
	if ref == nil {
		return
	}
	r.ReturnBlob = nil
	fail := func(err error) {
		msg := fmt.Sprintf("tool %q: its result (%s, %d bytes) could not be read from the blob store: %v", r.Tool, ref, ref.Size, err)
		content, _ := json.Marshal(msg)
		r.Return = &toolsets.Return{CallID: r.CallID, ToolName: r.Tool, Kind: toolsets.KindExecution, IsError: true, Attempts: r.Attempt,
			Content: content, Control: &toolsets.Control{Message: msg}}
	}
	if blobs == nil {
		fail(fmt.Errorf("%w: this node has no blob store", events.ErrUnresolvedBlob))
		return
	}
	data, err := blobs.GetBlob(ctx, *ref)
	if err == nil {
		err = ref.Check(data)
	}
	if err != nil {
		fail(err)
		return
	}
	var ret toolsets.Return
	if err := json.Unmarshal(data, &ret); err != nil {
		fail(fmt.Errorf("not a tool return: %w", err))
		return
	}
	r.Return = &ret
}

// EncodeRequest returns the message body of call req within lim: req as
// JSON when it fits, else with its arguments by reference to lim.Blobs. A
// call that does not fit and cannot be sent by reference is an error (the
// caller returns it as the call's execution error). A put in the blob
// store is bounded by ctx and 30 seconds.
func EncodeRequest(ctx context.Context, req ToolRequest, lim PayloadLimits) ([]byte, error) {
	body, err := json.Marshal(&req)
	if err != nil {
		return nil, err
	}
	if lim.fits(len(body) + messageReserve) {
		return body, nil
	}
	n := len(req.Arguments)
	switch {
	case n > lim.Limit():
		return nil, fmt.Errorf("arguments of %d bytes exceed the limit of %d bytes", n, lim.Limit())
	case lim.Blobs == nil:
		return nil, fmt.Errorf("the call of %d bytes exceeds the bus limit of %d bytes, and there is no blob store to send its arguments by reference", len(body), lim.Bus)
	}
	ctx, cancel := context.WithTimeout(ctx, blobTimeout)
	defer cancel()
	ref, err := lim.Blobs.PutBlob(ctx, req.Arguments)
	if err != nil {
		return nil, fmt.Errorf("store the arguments of %d bytes as a blob: %w", n, err)
	}
	req.Arguments, req.ArgumentsBlob = nil, &ref
	body, err = json.Marshal(&req)
	if err != nil {
		return nil, err
	}
	if !lim.fits(len(body) + messageReserve) {
		return nil, fmt.Errorf("the call of %d bytes exceeds the bus limit of %d bytes even with its arguments by reference", len(body), lim.Bus)
	}
	return body, nil
}

// ResolveRequest reads the arguments of req from blobs when req carries
// them by reference (ToolRequest.ArgumentsBlob). The error says why they
// could not be read; the receiver returns it as the call's execution error.
func ResolveRequest(ctx context.Context, blobs events.BlobStore, req *ToolRequest) error {
	ref := req.ArgumentsBlob
	if ref == nil {
		return nil
	}
	if blobs == nil {
		return fmt.Errorf("the call's arguments (%s, %d bytes) are in the blob store, which this process cannot read", ref, ref.Size)
	}
	data, err := blobs.GetBlob(ctx, *ref)
	if err == nil {
		err = ref.Check(data)
	}
	if err != nil {
		return fmt.Errorf("read the call's arguments (%s, %d bytes) from the blob store: %w", ref, ref.Size, err)
	}
	req.Arguments, req.ArgumentsBlob = data, nil
	return nil
}

// ErrorReturn is the execution error return of call req saying msg.
func ErrorReturn(req ToolRequest, msg string) toolsets.Return {
	content, _ := json.Marshal(msg)
	return toolsets.Return{CallID: req.CallID, ToolName: req.Name, Kind: toolsets.KindExecution, IsError: true,
		Content: content, Control: &toolsets.Control{Message: msg}}
}
