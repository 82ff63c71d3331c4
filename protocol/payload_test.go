package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// testBlobs is a blob store that hands out what it holds unchecked (as a
// damaged or forged store would), and fails its puts when failPut is set.
type testBlobs struct {
	m       map[string][]byte
	failPut error
}

func newTestBlobs() *testBlobs { return &testBlobs{m: map[string][]byte{}} }

func (b *testBlobs) PutBlob(_ context.Context, data []byte) (events.BlobRef, error) {
	if b.failPut != nil {
		return events.BlobRef{}, b.failPut
	}
	ref := events.RefOf(data)
	b.m[ref.SHA256] = bytes.Clone(data)
	return ref, nil
}

func (b *testBlobs) GetBlob(_ context.Context, ref events.BlobRef) ([]byte, error) {
	if d, ok := b.m[ref.SHA256]; ok {
		return d, nil
	}
	return nil, events.ErrBlobNotFound
}

// returnOf is a returned report of a success whose content is a string of
// n bytes.
func returnedOf(n int) ToolReport {
	content, _ := json.Marshal(strings.Repeat("r", n))
	ret := toolsets.Return{CallID: "c1", ToolName: "big", Kind: toolsets.KindSuccess, Success: true, Content: content, Attempts: 1}
	return ToolReport{Type: ReportReturned, CallID: "c1", Tool: "big", Attempt: 1, Return: &ret}
}

func decodeReport(t *testing.T, body []byte) ToolReport {
	t.Helper()
	var r ToolReport
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func errorMessage(r *toolsets.Return) string {
	if r == nil || r.Control == nil {
		return ""
	}
	return r.Control.Message
}

func TestEncodeReport(t *testing.T) {
	const bus = 64 << 10
	putFails := newTestBlobs()
	putFails.failPut = errors.New("permissions violation")
	tests := []struct {
		name     string
		report   ToolReport
		lim      PayloadLimits
		wantOK   bool
		wantBlob bool   // the return travels by reference
		wantErr  string // the return is an execution error saying this
	}{
		{"small", returnedOf(100), PayloadLimits{Bus: bus, Blobs: newTestBlobs()}, true, false, ""},
		{"large, by reference", returnedOf(200 << 10), PayloadLimits{Bus: bus, Blobs: newTestBlobs()}, true, true, ""},
		{"large, no blob store", returnedOf(200 << 10), PayloadLimits{Bus: bus}, true, false, "exceeds the bus limit of 65536 bytes, and no blob store"},
		{"large, the put fails", returnedOf(200 << 10), PayloadLimits{Bus: bus, Blobs: putFails}, true, false, "permissions violation"},
		{"over the cap", returnedOf(200 << 10), PayloadLimits{Bus: bus, Max: 100 << 10, Blobs: newTestBlobs()}, true, false, "exceeds the limit of 102400 bytes"},
		{"large progress", ToolReport{Type: ReportProgress, CallID: "c1", Tool: "big", Progress: &toolsets.Progress{Data: json.RawMessage(`"` + strings.Repeat("p", 200<<10) + `"`)}},
			PayloadLimits{Bus: bus, Blobs: newTestBlobs()}, false, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, ok, err := EncodeReport(t.Context(), tc.report, tc.lim)
			if err != nil || ok != tc.wantOK {
				t.Fatalf("EncodeReport: ok %v, %v; want ok %v", ok, err, tc.wantOK)
			}
			if !ok {
				return
			}
			if len(body)+messageReserve > bus {
				t.Errorf("body of %d bytes over the bus limit", len(body))
			}
			got := decodeReport(t, body)
			if (got.ReturnBlob != nil) != tc.wantBlob {
				t.Fatalf("ReturnBlob %v, want by reference %v", got.ReturnBlob, tc.wantBlob)
			}
			if tc.wantBlob {
				ResolveReport(t.Context(), tc.lim.Blobs, &got)
				if d := cmp.Diff(tc.report.Return, got.Return); d != "" {
					t.Errorf("resolved return (-want +got):\n%s", d)
				}
				return
			}
			if tc.wantErr == "" {
				if d := cmp.Diff(tc.report.Return, got.Return); d != "" {
					t.Errorf("return (-want +got):\n%s", d)
				}
				return
			}
			if got.Return == nil || got.Return.Kind != toolsets.KindExecution || !got.Return.IsError || !strings.Contains(errorMessage(got.Return), tc.wantErr) {
				t.Errorf("return %+v, want an execution error saying %q", got.Return, tc.wantErr)
			}
		})
	}
}

// TestResolveReportRefuses: a return by reference that is missing, altered
// or not a return never reaches the session as the tool's result: it is an
// execution error naming the blob.
func TestResolveReportRefuses(t *testing.T) {
	real, _ := json.Marshal(returnedOf(10).Return)
	ref := events.RefOf(real)
	forged := newTestBlobs()
	forged.m[ref.SHA256] = []byte(`{"call_id":"c1","tool_name":"big","kind":"success","success":true,"content":"forged"}`)
	notReturn := newTestBlobs()
	notReturn.m[events.RefOf([]byte(`[1]`)).SHA256] = []byte(`[1]`)
	tests := []struct {
		name  string
		blobs events.BlobStore
		ref   events.BlobRef
		want  string
	}{
		{"no blob store", nil, ref, "no blob store"},
		{"missing", newTestBlobs(), ref, "blob not found"},
		{"altered", forged, ref, "does not match"},
		{"not a return", notReturn, events.RefOf([]byte(`[1]`)), "not a tool return"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := ToolReport{Type: ReportReturned, CallID: "c1", Tool: "big", ReturnBlob: &tc.ref}
			ResolveReport(t.Context(), tc.blobs, &r)
			if r.ReturnBlob != nil || r.Return == nil || r.Return.Kind != toolsets.KindExecution || !strings.Contains(errorMessage(r.Return), tc.want) {
				t.Errorf("resolved to %+v, want an execution error saying %q", r.Return, tc.want)
			}
		})
	}
}

func TestEncodeRequest(t *testing.T) {
	const bus = 64 << 10
	args := json.RawMessage(`{"data":"` + strings.Repeat("a", 200<<10) + `"}`)
	req := ToolRequest{SessionID: "s", RunID: "r", CallID: "c1", Name: "measure", Arguments: args}
	t.Run("small", func(t *testing.T) {
		small := req
		small.Arguments = json.RawMessage(`{"data":"a"}`)
		body, err := EncodeRequest(t.Context(), small, PayloadLimits{Bus: bus})
		want, _ := json.Marshal(&small)
		if err != nil || !bytes.Equal(body, want) {
			t.Errorf("EncodeRequest = %s, %v; want %s", body, err, want)
		}
	})
	t.Run("by reference", func(t *testing.T) {
		blobs := newTestBlobs()
		body, err := EncodeRequest(t.Context(), req, PayloadLimits{Bus: bus, Blobs: blobs})
		if err != nil || len(body)+messageReserve > bus {
			t.Fatalf("EncodeRequest: %d bytes, %v", len(body), err)
		}
		var got ToolRequest
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if got.Arguments != nil || got.ArgumentsBlob == nil {
			t.Fatalf("arguments %d bytes, blob %v: want by reference", len(got.Arguments), got.ArgumentsBlob)
		}
		if err := ResolveRequest(t.Context(), blobs, &got); err != nil || !bytes.Equal(got.Arguments, args) {
			t.Errorf("ResolveRequest: %d bytes, %v; want the %d sent", len(got.Arguments), err, len(args))
		}
		// Forged: the store hands out other arguments under the reference.
		forged := newTestBlobs()
		forged.m[events.RefOf(args).SHA256] = []byte(`{"data":"rm -rf /"}`)
		_ = json.Unmarshal(body, &got)
		if err := ResolveRequest(t.Context(), forged, &got); !errors.Is(err, events.ErrBlobCorrupt) {
			t.Errorf("ResolveRequest of altered arguments: %v, want ErrBlobCorrupt", err)
		}
		if err := ResolveRequest(t.Context(), nil, &got); err == nil || !strings.Contains(err.Error(), "cannot read") {
			t.Errorf("ResolveRequest without a blob store: %v", err)
		}
	})
	for _, tc := range []struct {
		name string
		lim  PayloadLimits
		want string
	}{
		{"no blob store", PayloadLimits{Bus: bus}, "exceeds the bus limit of 65536 bytes"},
		{"over the cap", PayloadLimits{Bus: bus, Max: 100 << 10, Blobs: newTestBlobs()}, "exceed the limit of 102400 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := EncodeRequest(t.Context(), req, tc.lim); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("EncodeRequest: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}
