package audit

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/invoicing/invoicing/events"
)

// ExportLine is one event as `invoicing events export` and `events read`
// print it, one JSON object per line: everything an auditor needs to read
// the event, to resume after it, and to recompute the audit chain without a
// database (CanonicalEvent covers exactly these fields but position, seq
// and chain).
type ExportLine struct {
	Position   string          `json:"position"`
	Stream     string          `json:"stream"`
	Revision   uint64          `json:"revision"`
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	RecordedAt string          `json:"recorded_at"`
	Data       json.RawMessage `json:"data"`
	Metadata   json.RawMessage `json:"metadata"`
	// Seq and Chain are the event's audit chain link, null until the
	// sealer has chained it.
	Seq   *uint64 `json:"seq"`
	Chain *string `json:"chain"`
}

// NewExportLine describes ev, with its chain link when it has one.
func NewExportLine(ev events.RecordedEvent, link *ChainLink) ExportLine {
	line := ExportLine{
		Position: ev.Position.String(), Stream: ev.Stream, Revision: ev.Revision,
		ID: uuid.UUID(ev.ID).String(), Type: ev.Type, RecordedAt: FormatRecordedAt(ev.RecordedAt),
		Data: ev.Data, Metadata: rawOrEmpty(ev.Metadata),
	}
	if link != nil {
		seq, chain := link.Seq, link.Chain.String()
		line.Seq, line.Chain = &seq, &chain
	}
	return line
}

// Event turns a line back into the event it describes.
func (l ExportLine) Event() (events.RecordedEvent, error) {
	id, err := uuid.Parse(l.ID)
	if err != nil {
		return events.RecordedEvent{}, fmt.Errorf("export line at %s: id: %w", l.Position, err)
	}
	at, err := time.Parse(time.RFC3339Nano, l.RecordedAt)
	if err != nil {
		return events.RecordedEvent{}, fmt.Errorf("export line at %s: recorded_at: %w", l.Position, err)
	}
	pos, err := events.ParsePosition(l.Position)
	if err != nil {
		return events.RecordedEvent{}, err
	}
	return events.RecordedEvent{ID: id, Type: l.Type, Data: l.Data, Metadata: l.Metadata, Stream: l.Stream,
		Revision: l.Revision, Position: pos, RecordedAt: at}, nil
}

// Link returns the line's recorded chain link, if it has one.
func (l ExportLine) Link() (ChainLink, bool, error) {
	if l.Seq == nil || l.Chain == nil {
		return ChainLink{}, false, nil
	}
	chain, err := ParseChainHash(*l.Chain)
	if err != nil {
		return ChainLink{}, false, err
	}
	id, err := uuid.Parse(l.ID)
	if err != nil {
		return ChainLink{}, false, err
	}
	return ChainLink{Seq: *l.Seq, EventID: id, Chain: chain}, true, nil
}
