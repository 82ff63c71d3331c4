package projections

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/events"
)

// TestSharedReturn: the projections of one Decoded read its tool return
// from one parse, which gives what parsing the return gives; a Decoded
// built by hand, or a return that is not the event's, is parsed as it is.
func TestSharedReturn(t *testing.T) {
	suspending := json.RawMessage(`{"kind":"approval_required","is_error":false,"control":{"reason":"deploy to prod"}}`)
	other := json.RawMessage(`{"kind":"success","is_error":true}`)
	ev := events.MustNew(events.TypeToolReturned, events.ToolReturned{Tool: "deploy", Return: suspending}, events.WithSession("s"))
	d, err := Decode(ev)
	if err != nil {
		t.Fatal(err)
	}
	ret := d.Data.(events.ToolReturned).Return
	want := parseReturn(suspending)
	for i := range 3 {
		if got := d.returnInfo(ret); !cmp.Equal(got, want) {
			t.Fatalf("read %d: returnInfo = %+v, want %+v", i, got, want)
		}
		if got := d.suspendReason(ret); got != "deploy to prod" {
			t.Fatalf("read %d: suspendReason = %q", i, got)
		}
	}
	if d.ret == nil || !d.ret.once {
		t.Errorf("Decode's Decoded does not keep the parsed return: %+v", d.ret)
	}
	if got := d.returnInfo(other); !cmp.Equal(got, parseReturn(other)) {
		t.Errorf("returnInfo of another return = %+v, want its own parse", got)
	}
	byHand := Decoded{Event: ev, Data: d.Data}
	if got := byHand.suspendReason(ret); got != "deploy to prod" {
		t.Errorf("suspendReason of a Decoded built by hand = %q", got)
	}
	if got := byHand.suspendReason(other); got != "" {
		t.Errorf("suspendReason of a return without control = %q, want none", got)
	}
}
