package audit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/invoicing/invoicing/events"
)

// exportOf writes evs as an export: one ExportLine a line, each with its
// link, but the last chained links only.
func exportOf(t *testing.T, evs []events.RecordedEvent, chained int) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for i, l := range links(t, evs) {
		var link *ChainLink
		if i < chained {
			link = &l
		}
		if err := enc.Encode(NewExportLine(evs[i], link)); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func TestVerifyExportRecomputesTheChainOfTheLines(t *testing.T) {
	evs := []events.RecordedEvent{testEvent(1, "a"), testEvent(2, "b"), testEvent(3, "c")}
	export := exportOf(t, evs, 2) // the sealer has not reached the last event yet
	r, err := VerifyExport(strings.NewReader(export), nil, nil)
	if err != nil || !r.OK() || r.Events != 3 || r.Chained != 2 {
		t.Fatalf("an untouched export: %+v, %v", r, err)
	}
	tampered := strings.Replace(export, `"note":"b"`, `"note":"B"`, 1)
	if tampered == export {
		t.Fatal("the test did not change the export")
	}
	r, err = VerifyExport(strings.NewReader(tampered), nil, nil)
	if first, ok := r.First(); err != nil || !ok || first.Seq != 2 || first.Kind != DiffChanged {
		t.Fatalf("a changed line: %+v, %v; want seq 2 changed", r, err)
	}
	if _, err := VerifyExport(strings.NewReader("{not json\n"), nil, nil); err == nil {
		t.Fatal("a line that is not JSON was accepted")
	}
}
