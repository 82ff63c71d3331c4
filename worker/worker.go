// Package worker embeds a remote tool worker: a process that serves tool
// calls for weft runtimes over NATS (docs/worker-protocol.md).
//
// A worker registers its tools in a toolsets.Registry, so that timeouts,
// internal retries, argument validation and approvals behave exactly as
// for a runtime's local tools. It serves the calls of each tool from the
// queue group protocol.WorkerQueueGroup on <root>.worker.call.<name> (so
// adding workers adds throughput), reports on the request's reply subject
// (a heartbeat every heartbeat interval while a call runs, progress and
// retry reports, then the return), answers <root>.worker.describe with its
// tool definitions, and cancels a running call when
// <root>.worker.cancel.<session id>.<run id>.<call id> arrives. A call is
// named by its session, run and call ids (call ids are unique only within
// a run): two sessions may run calls with the same call id on one worker.
//
//	w, err := worker.New(nc, tools...)
//	...
//	err = w.Serve(ctx) // until ctx ends
package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/trace"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	jsstore "github.com/weft-run/weft/events/jetstream"
	"github.com/weft-run/weft/protocol"
	"github.com/weft-run/weft/toolsets"
)

// ErrNoTools is returned by New when it is given no tools or no connection.
var ErrNoTools = errors.New("worker: a worker needs a NATS connection and at least one tool")

// Worker serves tool calls over NATS. Create it with New; Serve runs it.
type Worker struct {
	nc    *nats.Conn
	reg   *toolsets.Registry
	defs  []toolsets.Definition
	id    string
	subj  bus.Subjects
	log   *slog.Logger
	drain time.Duration
	slots chan struct{} // one per call allowed to run at once; nil: no limit
	// pool is the worker pool the worker pulls its calls from (WithPool);
	// empty: the core queue group.
	pool          string
	queueReplicas int
	// Blobs for payloads too large for a message (see "Payloads too large
	// for the bus" in package protocol): set by WithBlobs, or opened on
	// first need from the log's blob bucket (blobsOnce).
	blobs      events.BlobStore
	blobsSet   bool
	blobsMu    sync.Mutex
	blobsTried time.Time // the last failed open of the log's bucket
	maxPayload int
	// tracer makes a span of each call (WithTracerProvider); nil: none.
	tracer trace.Tracer

	// served and cancelled are guarded by cmu: the calls executing here, and the cancels
	// that arrived for calls not (yet) executing here. The two are checked
	// together, so that a cancel processed before its call registered
	// (cancels and calls arrive on different subscriptions, each with its
	// own goroutine) still cancels it.
	cmu       sync.Mutex
	served    map[callKey]*running
	cancelled map[callKey]time.Time // call → when its early cancel arrived

	mu      sync.Mutex
	serving bool
	stopped bool           // Serve is stopping: take no more calls
	calls   sync.WaitGroup // the calls being served
}

// callKey names a call: call ids are unique only within a run.
type callKey struct{ session, run, call string }

// running is a call the worker executes.
type running struct {
	cancel context.CancelCauseFunc
	// abandoned is set when the worker stops before the call returned:
	// its reports are dropped, so that the node, hearing nothing, sends
	// the call to another worker.
	abandoned atomic.Bool
	// reply is where the call's reports go: the reply subject of its
	// latest delivery (a node that restarted sends it from a new inbox).
	reply atomic.Pointer[string]
}

// cancelMemory is how long a worker remembers a cancel for a call it does
// not run: a call sent before its cancel but taken up after it is
// returned cancelled without running.
const cancelMemory = 30 * time.Second

// DefaultDrain is how long Serve lets running calls finish after its
// context ended (see WithDrain).
const DefaultDrain = 10 * time.Second

// errCancelled is the cause a cancelled call's context ends with.
var errCancelled = errors.New("call cancelled by the runtime")

// Option configures a Worker.
type Option func(*Worker)

// WithSubjects sets the subject scheme (default bus.Default).
func WithSubjects(s bus.Subjects) Option { return func(w *Worker) { w.subj = s } }

// WithID sets the worker id shown in descriptions (default a UUID).
func WithID(id string) Option { return func(w *Worker) { w.id = id } }

// WithDrain sets how long Serve lets the calls still running finish once
// its context ended (default DefaultDrain). Calls still running then are
// cancelled and abandoned: the worker sends no return for them and stops
// heartbeating, so the nodes send them to other workers.
func WithDrain(d time.Duration) Option { return func(w *Worker) { w.drain = d } }

// WithConcurrency limits the calls the worker executes at once to n (n
// <= 0: no limit, the default; protocol.DefaultPoolConcurrency for a pooled
// worker). Calls beyond the limit wait in the worker, heartbeating, until a
// running call returns. NATS queue groups spread calls evenly over
// workers, not by load: set the limit to what one worker can run, and add
// workers for throughput; or join a pool (WithPool), whose workers take a
// call only when they have a free slot.
func WithConcurrency(n int) Option {
	return func(w *Worker) {
		w.slots = nil
		if n > 0 {
			w.slots = make(chan struct{}, n)
		}
	}
}

// WithBlobs sets the blob store the worker puts results too large for a
// NATS message in, and reads arguments sent by reference from; nil: none
// (such a result returns as an execution error saying it is too large, and
// such a call as one saying its arguments cannot be read). By default the
// worker opens the log's blob bucket (jetstream.BlobBucket of
// jetstream.DefaultStreamName) the first time it needs it, if the bucket
// exists and its credentials allow it, and goes without otherwise.
func WithBlobs(b events.BlobStore) Option {
	return func(w *Worker) { w.blobs, w.blobsSet = b, true }
}

// WithMaxPayloadBytes sets the largest result the worker sends, encoded
// (default protocol.DefaultMaxPayloadBytes); a larger one returns as an
// execution error. The node applies its own limit too.
func WithMaxPayloadBytes(n int) Option { return func(w *Worker) { w.maxPayload = n } }

// WithLogger sets the logger of the worker's diagnostics.
func WithLogger(l *slog.Logger) Option { return func(w *Worker) { w.log = l } }

// New builds a worker serving tools on nc. The tools are registered in a
// registry that applies their definitions (timeout, retries) exactly as a
// runtime does for local tools.
func New(nc *nats.Conn, tools []toolsets.Tool, opts ...Option) (*Worker, error) {
	if nc == nil || len(tools) == 0 {
		return nil, ErrNoTools
	}
	w := &Worker{nc: nc, reg: toolsets.NewRegistry(), subj: bus.Default, id: uuid.NewString(), drain: DefaultDrain,
		log:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		served: map[callKey]*running{}, cancelled: map[callKey]time.Time{}}
	for _, o := range opts {
		o(w)
	}
	if w.pool != "" {
		if err := protocol.ValidatePool(w.pool); err != nil {
			return nil, fmt.Errorf("worker: %w", err)
		}
	}
	if w.queueReplicas < 0 || w.queueReplicas > 5 {
		return nil, fmt.Errorf("worker: %w: queue replicas %d: must be 1 to 5", protocol.ErrBadPool, w.queueReplicas)
	}
	for _, t := range tools {
		if t == nil {
			return nil, fmt.Errorf("%w: nil tool", ErrNoTools)
		}
		if err := w.reg.Register(protocol.ObservedTool(t)); err != nil {
			return nil, fmt.Errorf("worker: %w", err)
		}
	}
	w.defs = w.reg.Definitions()
	return w, nil
}

// ID returns the worker's id.
func (w *Worker) ID() string { return w.id }

// Definitions returns the definitions of the tools the worker serves.
func (w *Worker) Definitions() []toolsets.Definition { return w.defs }

// Serve subscribes and serves calls until ctx ends; then it unsubscribes
// (taking no more calls), lets the calls still running finish for up to
// the drain time (WithDrain) and abandons the others (cancelled, without
// a return; Serve waits one more second for them to end). It returns nil when
// ctx ended, or the error that stopped it. A worker serves once.
func (w *Worker) Serve(ctx context.Context) error {
	w.mu.Lock()
	if w.serving {
		w.mu.Unlock()
		return errors.New("worker: already serving")
	}
	w.serving = true
	w.mu.Unlock()

	// Calls run under their own context: the end of ctx stops taking calls,
	// not the calls already running.
	callCtx, cancelCalls := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelCalls()
	var subs []*nats.Subscription
	// A pooled worker's pullers stop when pullCtx ends.
	pullCtx, stopPulls := context.WithCancel(context.WithoutCancel(ctx))
	defer stopPulls()
	var pullersDone <-chan struct{}
	defer func() {
		stopPulls()
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
		w.mu.Lock()
		w.stopped = true
		w.mu.Unlock()
		drained := make(chan struct{})
		go func() {
			w.calls.Wait()
			close(drained)
		}()
		select {
		case <-drained:
		case <-time.After(w.drain):
			w.cmu.Lock()
			for _, r := range w.served {
				r.abandoned.Store(true)
				r.cancel(errors.New("worker stopped"))
			}
			w.cmu.Unlock()
			// A tool that ignores its cancellation is left behind.
			select {
			case <-drained:
			case <-time.After(time.Second):
			}
		}
		if pullersDone != nil {
			// A puller ends once its pull was cancelled and its call
			// returned (one left behind above stays behind).
			select {
			case <-pullersDone:
			case <-time.After(time.Second):
			}
		}
		_ = w.nc.Flush()
	}()
	if w.pool != "" {
		done, err := w.servePool(pullCtx, callCtx)
		if err != nil {
			return err
		}
		pullersDone = done
	} else {
		for _, d := range w.defs {
			subject, err := protocol.WorkerCallSubject(w.subj, d.Name)
			if err != nil {
				return fmt.Errorf("worker: tool %q: %w", d.Name, err)
			}
			s, err := w.nc.QueueSubscribe(subject, protocol.WorkerQueueGroup, func(m *nats.Msg) {
				w.mu.Lock()
				defer w.mu.Unlock()
				if w.stopped {
					return // the node sends the call again
				}
				w.calls.Add(1)
				go func() {
					defer w.calls.Done()
					w.serve(callCtx, m)
				}()
			})
			if err != nil {
				return fmt.Errorf("worker: subscribe %s: %w", subject, err)
			}
			subs = append(subs, s)
		}
	}
	cs, err := w.nc.Subscribe(protocol.WorkerCancelFilter(w.subj), w.onCancel)
	if err != nil {
		return fmt.Errorf("worker: subscribe to cancels: %w", err)
	}
	subs = append(subs, cs)
	desc, err := json.Marshal(protocol.WorkerDescription{WorkerID: w.id, Tools: w.defs, Pool: w.pool})
	if err != nil {
		return fmt.Errorf("worker: encode description: %w", err)
	}
	ds, err := w.nc.Subscribe(protocol.WorkerDescribeSubject(w.subj), func(m *nats.Msg) {
		if m.Reply != "" {
			_ = m.Respond(desc)
		}
	})
	if err != nil {
		return fmt.Errorf("worker: subscribe to describe: %w", err)
	}
	subs = append(subs, ds)
	if err := w.nc.Flush(); err != nil {
		return fmt.Errorf("worker: flush subscriptions: %w", err)
	}
	w.log.Info("worker serving", "id", w.id, "tools", len(w.defs))
	<-ctx.Done()
	return nil
}

// onCancel cancels the call named by a cancel subject if it runs here, and
// otherwise remembers the cancel for cancelMemory, in case the call's
// request is still on its way to this worker.
func (w *Worker) onCancel(m *nats.Msg) {
	session, run, call, err := protocol.ParseWorkerCancelSubject(w.subj, m.Subject)
	if err != nil {
		return
	}
	key := callKey{session, run, call}
	now := time.Now()
	w.cmu.Lock()
	defer w.cmu.Unlock()
	if r, ok := w.served[key]; ok {
		r.cancel(errCancelled)
		return
	}
	for k, at := range w.cancelled {
		if now.Sub(at) > cancelMemory {
			delete(w.cancelled, k)
		}
	}
	w.cancelled[key] = now
}

// register records run as the execution of key. It returns the execution
// already running under key (a re-delivery), or early=true when a cancel
// for key arrived before the call did (the cancel is consumed).
func (w *Worker) register(key callKey, run *running, reply string) (dup bool, early bool) {
	w.cmu.Lock()
	defer w.cmu.Unlock()
	if r, ok := w.served[key]; ok {
		// The node sent the call again while it runs here: the running
		// execution reports (and heartbeats) for both, to the latest
		// reply subject.
		r.reply.Store(&reply)
		return true, false
	}
	if at, ok := w.cancelled[key]; ok {
		delete(w.cancelled, key)
		if time.Since(at) <= cancelMemory {
			return false, true
		}
	}
	w.served[key] = run
	return false, false
}

func (w *Worker) unregister(key callKey) {
	w.cmu.Lock()
	delete(w.served, key)
	w.cmu.Unlock()
}

// serve executes one call request and reports on its reply subject.
func (w *Worker) serve(ctx context.Context, m *nats.Msg) {
	var req protocol.ToolRequest
	if err := json.Unmarshal(m.Data, &req); err != nil || m.Reply == "" || req.CallID == "" {
		w.log.Warn("bad tool request", "subject", m.Subject, "err", err)
		return
	}
	if req.ArgumentsBlob != nil {
		if err := protocol.ResolveRequest(ctx, lazyBlobs{w}, &req); err != nil {
			ret := protocol.ErrorReturn(req, "tool "+req.Name+": "+err.Error())
			w.publishReport(m.Reply, protocol.ToolReport{Type: protocol.ReportReturned, CallID: req.CallID, Tool: req.Name, Return: &ret})
			return
		}
	}
	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	run := &running{cancel: cancel}
	run.reply.Store(&m.Reply)
	key := callKey{req.SessionID, req.RunID, req.CallID}
	dup, early := w.register(key, run, m.Reply)
	if dup {
		return
	}
	if early {
		// Cancelled before it reached this worker: it does not run.
		w.publishReport(m.Reply, cancelledReport(req, errCancelled))
		return
	}
	defer w.unregister(key)
	report := func(r protocol.ToolReport) {
		if run.abandoned.Load() {
			return
		}
		r.CallID, r.Tool = req.CallID, req.Name
		w.publishReport(*run.reply.Load(), r)
	}

	interval := protocol.WorkerHeartbeat
	if ms, err := strconv.Atoi(m.Header.Get(protocol.HeaderHeartbeat)); err == nil && ms > 0 {
		interval = time.Duration(ms) * time.Millisecond
	}
	var mu sync.Mutex // orders reports: the tool's emitter may run on other goroutines
	locked := func(r protocol.ToolReport) {
		mu.Lock()
		defer mu.Unlock()
		report(r)
	}
	locked(protocol.ToolReport{Type: protocol.ReportHeartbeat})
	done := make(chan struct{})
	beat := make(chan struct{})
	go func() {
		defer close(beat)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				locked(protocol.ToolReport{Type: protocol.ReportHeartbeat})
			}
		}
	}()
	var last protocol.ToolReport // the return, for the call's span
	if w.slots != nil {
		select {
		case w.slots <- struct{}{}:
			defer func() { <-w.slots }()
		case <-callCtx.Done():
			close(done)
			<-beat
			locked(cancelledReport(req, context.Cause(callCtx)))
			return
		}
	}
	if w.tracer != nil {
		var end func(protocol.ToolReport)
		callCtx, end = w.startSpan(callCtx, m.Header, req)
		defer func() { end(last) }()
	}
	protocol.ExecuteCall(callCtx, w.reg, req, req.Metadata, func(r protocol.ToolReport) {
		if r.Type != protocol.ReportReturned {
			locked(r)
			return
		}
		// Encoded while the heartbeats go on: storing a large return in
		// the blob store may take longer than the heartbeat deadline.
		r.CallID, r.Tool = req.CallID, req.Name
		last = r
		body, ok := w.encodeReport(r)
		close(done)
		<-beat
		mu.Lock()
		defer mu.Unlock()
		if ok && !run.abandoned.Load() {
			w.publish(*run.reply.Load(), r, body)
		}
	})
}

// publishReport sends r on reply, within the bus limit: a return too large
// for a message goes by reference to the blob store, or is replaced by the
// error that says it is too large (protocol.EncodeReport), so the node
// always hears the call's return.
func (w *Worker) publishReport(reply string, r protocol.ToolReport) {
	if body, ok := w.encodeReport(r); ok {
		w.publish(reply, r, body)
	}
}

// encodeReport returns the message body of r (protocol.EncodeReport); ok is
// false for a report that is not sent.
func (w *Worker) encodeReport(r protocol.ToolReport) (body []byte, ok bool) {
	lim := protocol.PayloadLimits{Bus: int(w.nc.MaxPayload()), Max: w.maxPayload, Blobs: lazyBlobs{w}}
	if w.blobsSet && w.blobs == nil {
		lim.Blobs = nil
	}
	body, ok, err := protocol.EncodeReport(context.Background(), r, lim)
	if err != nil || !ok {
		w.log.Warn("tool report not sent", "tool", r.Tool, "call_id", r.CallID, "type", r.Type, "err", err)
		return nil, false
	}
	return body, true
}

// publish sends the body of report r on reply.
func (w *Worker) publish(reply string, r protocol.ToolReport, body []byte) {
	if err := w.nc.Publish(reply, body); err != nil {
		w.log.Warn("publish tool report", "tool", r.Tool, "call_id", r.CallID, "type", r.Type, "err", err)
	}
}

// lazyBlobs is the worker's blob store, opened when first used (only a
// payload too large for a message uses it).
type lazyBlobs struct{ w *Worker }

var errNoBlobStore = errors.New("the worker has no blob store (the log's blob bucket is missing or its credentials do not reach it)")

func (l lazyBlobs) PutBlob(ctx context.Context, data []byte) (events.BlobRef, error) {
	b := l.w.blobStore()
	if b == nil {
		return events.BlobRef{}, errNoBlobStore
	}
	return b.PutBlob(ctx, data)
}

func (l lazyBlobs) GetBlob(ctx context.Context, ref events.BlobRef) ([]byte, error) {
	b := l.w.blobStore()
	if b == nil {
		return nil, errNoBlobStore
	}
	return b.GetBlob(ctx, ref)
}

// blobStore returns the worker's blob store, opening the log's bucket when
// WithBlobs did not set one (again blobRetry after a failed open); nil when
// there is none.
func (w *Worker) blobStore() events.BlobStore {
	w.blobsMu.Lock()
	defer w.blobsMu.Unlock()
	if w.blobs != nil || w.blobsSet || (!w.blobsTried.IsZero() && time.Since(w.blobsTried) < blobRetry) {
		return w.blobs
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := jsstore.OpenBlobs(ctx, w.nc, jsstore.BlobBucket(jsstore.DefaultStreamName))
	if err != nil {
		w.blobsTried = time.Now()
		w.log.Info("no blob store: results too large for a message return as errors", "err", err)
		return nil
	}
	w.blobs = b
	return w.blobs
}

// blobRetry is how long a worker goes without the log's blob bucket after
// it failed to open it.
const blobRetry = 30 * time.Second

// cancelledReport is the return of a call cancelled before it started.
func cancelledReport(req protocol.ToolRequest, cause error) protocol.ToolReport {
	msg := "cancelled before it started: " + cause.Error()
	content, _ := json.Marshal(msg)
	ret := toolsets.Return{CallID: req.CallID, ToolName: req.Name, Kind: toolsets.KindCancelled, IsError: true,
		Content: content, Control: &toolsets.Control{Message: msg}}
	return protocol.ToolReport{Type: protocol.ReportReturned, CallID: req.CallID, Tool: req.Name, Return: &ret}
}
