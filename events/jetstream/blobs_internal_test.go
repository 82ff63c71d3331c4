package jetstream

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/events"
)

// deadlineObs is an object store whose GetBytes records the deadline of
// the context it is given.
type deadlineObs struct {
	jetstream.ObjectStore
	deadline time.Time
	has      bool
}

func (o *deadlineObs) GetBytes(ctx context.Context, _ string, _ ...jetstream.GetObjectOpt) ([]byte, error) {
	o.deadline, o.has = ctx.Deadline()
	return nil, context.Canceled
}

// A blob read whose caller set no deadline gets one that grows with the
// blob's size, not nats.go's default of 5 s for the whole object; a
// caller's own deadline is kept.
func TestGetBlobDeadline(t *testing.T) {
	ref := events.RefOf(make([]byte, 1))
	ref.Size = 20 << 20 // as the reference says: the read is bounded before any byte is read
	obs := &deadlineObs{}
	b := &Blobs{bucket: "b", obs: obs}

	start := time.Now()
	_, _ = b.GetBlob(context.Background(), ref)
	if !obs.has {
		t.Fatal("the read got no deadline")
	}
	if got, want := obs.deadline.Sub(start), 50*time.Second; got < want-time.Second || got > want+time.Second {
		t.Errorf("a 20 MiB blob's read has %v, want about %v", got, want)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	want, _ := ctx.Deadline()
	_, _ = b.GetBlob(ctx, ref)
	if !obs.deadline.Equal(want) {
		t.Errorf("the caller's deadline %v became %v", want, obs.deadline)
	}
}
