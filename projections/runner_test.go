package projections_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/weft-run/weft/projections"
)

// Apply, fed the events of a read made elsewhere, folds them as CatchUp
// does: the same projections, and an event that does not decode is
// quarantined, not returned.
func TestRunnerApply(t *testing.T) {
	good := loadHistory(t, histories[0])
	badData := good[0]
	badData.ID, badData.Data = uuid.New(), json.RawMessage(`{"agent":7}`)
	var items []logItem
	for i, ev := range append(append(good[:1:1], badData), good[1:]...) {
		ev.Position = uint64(i + 1)
		items = append(items, logItem{ev: ev})
	}

	caught := views(good)
	cr := projections.NewRunner(&poisonedLog{items: items}, caught)
	if _, err := cr.CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	fed := views(good)
	fr := projections.NewRunner(&poisonedLog{}, fed)
	for _, it := range items {
		fr.Apply(it.ev)
	}
	if diff := cmp.Diff(renders(t, caught), renders(t, fed)); diff != "" {
		t.Errorf("projections fed by Apply (-caught up +fed):\n%s", diff)
	}
	if len(fr.Poison()) != 1 || fr.Poison()[0].ID != badData.ID {
		t.Errorf("Apply quarantined %v, want the event whose data does not decode", fr.Poison())
	}
}
