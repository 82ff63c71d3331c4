package jetstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/events"
)

var _ events.BlobStore = (*Blobs)(nil)

// BlobBucket returns the name of the JetStream Object Store bucket that
// holds the blobs of the log in stream: "<stream>_BLOBS", so
// "WEFT_EVENTS_BLOBS" for the default stream.
func BlobBucket(stream string) string { return stream + "_BLOBS" }

// Blobs is an events.BlobStore on a JetStream Object Store bucket: each
// blob is the object named by its SHA-256 (hex). The object store splits a
// blob into chunks (128 KiB), so a blob of any size fits under the
// server's max payload. Blobs are never deleted, like the events that
// refer to them.
type Blobs struct {
	bucket string
	obs    jetstream.ObjectStore
}

// blobOpenTimeout bounds NewBlobs: opening or creating the bucket.
const blobOpenTimeout = 5 * time.Second

// blobReadTimeout bounds GetBlob of a blob of size bytes when the caller's
// context has no deadline. Without one, nats.go's object store gives the
// whole read of the object its JetStream context's default timeout (5 s),
// which a blob of tens of megabytes can outlast on a busy machine, so the
// read of an event failed with "nats: timeout". The bound here grows with
// the size: 30 s, and 1 s more for every MiB.
func blobReadTimeout(size int64) time.Duration {
	return 30*time.Second + time.Duration(size>>20)*time.Second
}

// NewBlobs returns the blob store on bucket, creating the bucket (file
// storage, replicas copies) when it does not exist. The store creates its
// own (see New); a standalone blob store (a worker's) uses OpenBlobs.
func NewBlobs(ctx context.Context, js jetstream.JetStream, bucket string, replicas int) (*Blobs, error) {
	// A connection whose role may not read or create the bucket gets no
	// answer (NATS reports the permissions violation to the connection,
	// not to the request): bound the wait.
	ctx, cancel := context.WithTimeout(ctx, blobOpenTimeout)
	defer cancel()
	obs, err := js.ObjectStore(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		obs, err = js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket:      bucket,
			Description: "weft: large event data and tool results, by SHA-256",
			Storage:     jetstream.FileStorage,
			Replicas:    max(replicas, 1),
		})
		if errors.Is(err, jetstream.ErrBucketExists) {
			obs, err = js.ObjectStore(ctx, bucket) // another process created it first
		}
	}
	if err != nil {
		return nil, fmt.Errorf("blob bucket %q: %w", bucket, err)
	}
	return &Blobs{bucket: bucket, obs: obs}, nil
}

// OpenBlobs returns the blob store on the existing bucket, on connection
// nc (a remote worker puts a result too large for a message there, if its
// credentials allow it). It fails with jetstream.ErrBucketNotFound when
// the bucket does not exist.
func OpenBlobs(ctx context.Context, nc *nats.Conn, bucket string) (*Blobs, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("blob bucket %q: %w", bucket, err)
	}
	obs, err := js.ObjectStore(ctx, bucket)
	if err != nil {
		return nil, fmt.Errorf("blob bucket %q: %w", bucket, err)
	}
	return &Blobs{bucket: bucket, obs: obs}, nil
}

// Bucket returns the name of the Object Store bucket.
func (b *Blobs) Bucket() string { return b.bucket }

// PutBlob implements events.BlobStore. A blob already stored whole is not
// written again.
func (b *Blobs) PutBlob(ctx context.Context, data []byte) (events.BlobRef, error) {
	ref := events.RefOf(data)
	info, err := b.obs.GetInfo(ctx, ref.SHA256)
	switch {
	case err == nil && !info.Deleted && info.Size == uint64(len(data)):
		return ref, nil
	case err != nil && !errors.Is(err, jetstream.ErrObjectNotFound):
		return events.BlobRef{}, fmt.Errorf("put blob %s: %w", ref, err)
	}
	if _, err := b.obs.PutBytes(ctx, ref.SHA256, data); err != nil {
		return events.BlobRef{}, fmt.Errorf("put blob %s: %w", ref, err)
	}
	return ref, nil
}

// GetBlob implements events.BlobStore.
func (b *Blobs) GetBlob(ctx context.Context, ref events.BlobRef) ([]byte, error) {
	if err := ref.Validate(); err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, blobReadTimeout(ref.Size))
		defer cancel()
	}
	data, err := b.obs.GetBytes(ctx, ref.SHA256)
	switch {
	case errors.Is(err, jetstream.ErrObjectNotFound):
		return nil, fmt.Errorf("%w: %s in bucket %q", events.ErrBlobNotFound, ref, b.bucket)
	case err != nil:
		return nil, fmt.Errorf("get blob %s: %w", ref, err)
	}
	if err := ref.Check(data); err != nil {
		return nil, err
	}
	return data, nil
}

// PutBlob implements events.BlobStore with the store's blob bucket. When
// the store opened without its bucket, it fails with an error wrapping
// events.ErrPayloadTooLarge (the store cannot keep data over its inline
// limit) and saying why.
func (s *Store) PutBlob(ctx context.Context, data []byte) (events.BlobRef, error) {
	if s.blobs == nil {
		return events.BlobRef{}, fmt.Errorf("%w: %d bytes need the blob bucket, which is unavailable: %w", events.ErrPayloadTooLarge, len(data), s.blobsErr)
	}
	return s.blobs.PutBlob(ctx, data)
}

// GetBlob implements events.BlobStore with the store's blob bucket. When
// the store opened without its bucket, it fails with an error wrapping
// events.ErrUnresolvedBlob and saying why.
func (s *Store) GetBlob(ctx context.Context, ref events.BlobRef) ([]byte, error) {
	if s.blobs == nil {
		return nil, fmt.Errorf("%w: %s: the blob bucket is unavailable: %w", events.ErrUnresolvedBlob, ref, s.blobsErr)
	}
	return s.blobs.GetBlob(ctx, ref)
}

// Blobs returns the store's blob store, nil when the bucket could not be
// opened.
func (s *Store) Blobs() *Blobs { return s.blobs }
