package events_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
)

func TestParseBlobData(t *testing.T) {
	ref := events.RefOf([]byte(`"content"`))
	tests := []struct {
		name   string
		data   string
		wantOK bool
		want   error
	}{
		{"event data", `{"tool":"t","return":{}}`, false, nil},
		{"canonical reference", string(ref.EventData()), true, nil},
		{"white space", `{"$blob":{"sha256":"` + ref.SHA256 + `", "size":9}}`, true, events.ErrBlobCorrupt},
		{"extra member", `{"$blob":{"sha256":"` + ref.SHA256 + `","size":9,"x":1}}`, true, events.ErrBlobCorrupt},
		{"second member", `{"$blob":{"sha256":"` + ref.SHA256 + `","size":9},"tool":"t"}`, true, events.ErrBlobCorrupt},
		{"short hash", `{"$blob":{"sha256":"abc","size":9}}`, true, events.ErrBlobCorrupt},
		{"upper-case hash", `{"$blob":{"sha256":"` + strings.ToUpper(ref.SHA256) + `","size":9}}`, true, events.ErrBlobCorrupt},
		{"negative size", `{"$blob":{"sha256":"` + ref.SHA256 + `","size":-9}}`, true, events.ErrBlobCorrupt},
		{"not json", `{"$blob":{"sha256":"` + ref.SHA256, true, events.ErrBlobCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := events.ParseBlobData([]byte(tc.data))
			if ok != tc.wantOK || !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("ParseBlobData = %v, %v, %v; want ok %v, error %v", got, ok, err, tc.wantOK, tc.want)
			}
			if ok && err == nil && got != ref {
				t.Errorf("ParseBlobData = %v, want %v", got, ref)
			}
		})
	}
}

// A resolved event (content in Data, the reference in Blob) hashes and
// encodes as the stored one (the reference in Data); a content that does
// not match its reference hashes differently, so the chain breaks.
func TestBlobEventHashesAsStored(t *testing.T) {
	content := []byte(`{"tool":"t","return":"` + strings.Repeat("x", 1000) + `"}`)
	ref := events.RefOf(content)
	stored := events.Event{ID: uuid.Must(uuid.NewV7()), Stream: "s", Version: 1, Type: events.TypeToolReturned, SchemaVersion: 1, Data: ref.EventData()}
	resolved := stored
	resolved.Data, resolved.Blob = content, &ref
	if events.Hash(resolved) != events.Hash(stored) {
		t.Errorf("Hash of the resolved event differs from the stored one")
	}
	a, err := events.AppendJSON(nil, &resolved, true)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := events.AppendJSON(nil, &stored, true)
	if !bytes.Equal(a, b) {
		t.Errorf("AppendJSON of the resolved event:\n%s\nwant the stored form\n%s", a, b)
	}
	altered := resolved
	altered.Data = bytes.Replace(content, []byte("xx"), []byte("yy"), 1)
	if events.Hash(altered) == events.Hash(stored) {
		t.Errorf("an altered content with the original reference hashes as the stored event")
	}
	if _, err := events.Decode(stored); !errors.Is(err, events.ErrUnresolvedBlob) {
		t.Errorf("Decode of a stored blob reference: %v, want ErrUnresolvedBlob", err)
	}
	// A JSON round trip keeps Blob: an exported history verifies.
	var buf bytes.Buffer
	if err := events.WriteJSONL(&buf, []events.Event{resolved}); err != nil {
		t.Fatal(err)
	}
	back, err := events.ReadJSONL(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 1 || events.Hash(back[0]) != events.Hash(stored) || !bytes.Equal(back[0].Data, content) {
		t.Errorf("a JSONL round trip of a resolved event does not hash as stored")
	}
}

func TestResolveBlob(t *testing.T) {
	content := []byte(`"` + strings.Repeat("y", 500) + `"`)
	ref := events.RefOf(content)
	tests := []struct {
		name  string
		blobs events.BlobStore
		want  error
	}{
		{"found", mapBlobs{ref.SHA256: content}, nil},
		{"missing", mapBlobs{}, events.ErrBlobNotFound},
		{"altered", mapBlobs{ref.SHA256: []byte(`"` + strings.Repeat("z", 500) + `"`)}, events.ErrBlobCorrupt},
		{"truncated", mapBlobs{ref.SHA256: content[:100]}, events.ErrBlobCorrupt},
		{"no blob store", nil, events.ErrUnresolvedBlob},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev := events.Event{Type: events.TypeToolReturned, Data: ref.EventData()}
			err := events.ResolveBlob(t.Context(), tc.blobs, &ev)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("ResolveBlob: %v, want %v", err, tc.want)
			}
			if err == nil && (!bytes.Equal(ev.Data, content) || ev.Blob == nil || *ev.Blob != ref) {
				t.Errorf("resolved to %d bytes, Blob %v", len(ev.Data), ev.Blob)
			}
		})
	}
}

// mapBlobs is a blob store that returns what it holds unchecked, as a
// damaged backend would.
type mapBlobs map[string][]byte

func (m mapBlobs) PutBlob(_ context.Context, data []byte) (events.BlobRef, error) {
	ref := events.RefOf(data)
	m[ref.SHA256] = data
	return ref, nil
}

func (m mapBlobs) GetBlob(_ context.Context, ref events.BlobRef) ([]byte, error) {
	if b, ok := m[ref.SHA256]; ok {
		return b, nil
	}
	return nil, events.ErrBlobNotFound
}
