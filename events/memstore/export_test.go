package memstore

import "github.com/weft-run/weft/events"

// TamperBlob replaces the stored bytes of blob ref with data (for the
// conformance suite's tampered-blob test).
func TamperBlob(s *Store, ref events.BlobRef, data []byte) {
	s.bmu.Lock()
	defer s.bmu.Unlock()
	s.blobs[ref.SHA256] = data
}
