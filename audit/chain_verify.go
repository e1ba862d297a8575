package audit

import (
	"fmt"

	"github.com/google/uuid"

	"github.com/invoicing/invoicing/events"
)

// ChainLink is one link of the audit chain: the sequence number of an
// event, its id, and the chain hash after it.
type ChainLink struct {
	Seq     uint64
	EventID [16]byte
	Chain   ChainHash
}

// The kinds of difference between a log and its recorded chain.
const (
	// DiffChanged: the event is where it was, with other content.
	DiffChanged = "changed"
	// DiffMissing: a chained event is no longer in the log.
	DiffMissing = "missing"
	// DiffInserted: the log holds an event that was never chained there.
	DiffInserted = "inserted"
	// DiffReordered: the events are all there, in another order.
	DiffReordered = "reordered"
	// DiffSeal: the log no longer agrees with a seal; with a rewritten
	// chain, all that is known is that something at or before Seq changed.
	DiffSeal = "differs from a seal"
)

// Discrepancy is the first place where a log and what was recorded of it
// disagree.
type Discrepancy struct {
	Seq     uint64
	Kind    string
	EventID [16]byte // zero when not about one event
	Detail  string
}

func (d Discrepancy) String() string {
	s := fmt.Sprintf("seq %d: %s", d.Seq, d.Kind)
	if d.EventID != ([16]byte{}) {
		s += fmt.Sprintf(" (event %s)", uuid.UUID(d.EventID))
	}
	if d.Detail != "" {
		s += ": " + d.Detail
	}
	return s
}

// ChainBuilder recomputes a chain one event at a time, in log order.
type ChainBuilder struct {
	links []ChainLink
	last  ChainHash
}

// Add links the next event.
func (b *ChainBuilder) Add(ev events.RecordedEvent) (ChainLink, error) {
	next, err := Chain(b.last, ev)
	if err != nil {
		return ChainLink{}, err
	}
	link := ChainLink{Seq: uint64(len(b.links)) + 1, EventID: ev.ID, Chain: next}
	b.links, b.last = append(b.links, link), next
	return link, nil
}

// Links returns every link so far.
func (b *ChainBuilder) Links() []ChainLink { return b.links }

// CompareChain compares the links recomputed from the log now with the links
// recorded when the events were chained, and returns the first discrepancy,
// or nil. A log longer than the recorded chain is not a discrepancy: its
// newest events may not have been chained yet.
func CompareChain(now, recorded []ChainLink) *Discrepancy {
	n := min(len(now), len(recorded))
	for i := 0; i < n; i++ {
		if now[i].EventID == recorded[i].EventID && now[i].Chain == recorded[i].Chain {
			continue
		}
		return classify(now, recorded, i)
	}
	if len(now) < len(recorded) {
		r := recorded[len(now)]
		return &Discrepancy{Seq: r.Seq, Kind: DiffMissing, EventID: r.EventID, Detail: "the log ends before the recorded chain does"}
	}
	return nil
}

func classify(now, recorded []ChainLink, i int) *Discrepancy {
	seq := recorded[i].Seq
	if now[i].EventID == recorded[i].EventID {
		return &Discrepancy{Seq: seq, Kind: DiffChanged, EventID: now[i].EventID, Detail: "its content differs from when it was chained"}
	}
	if !containsEvent(recorded[i:], now[i].EventID) {
		return &Discrepancy{Seq: seq, Kind: DiffInserted, EventID: now[i].EventID, Detail: "this event was never chained at this place"}
	}
	if !containsEvent(now[i:], recorded[i].EventID) {
		return &Discrepancy{Seq: seq, Kind: DiffMissing, EventID: recorded[i].EventID, Detail: "the event chained here is no longer in the log"}
	}
	return &Discrepancy{Seq: seq, Kind: DiffReordered, EventID: recorded[i].EventID,
		Detail: fmt.Sprintf("the event chained here now comes elsewhere; event %s took its place", uuid.UUID(now[i].EventID))}
}

func containsEvent(links []ChainLink, id [16]byte) bool {
	for _, l := range links {
		if l.EventID == id {
			return true
		}
	}
	return false
}

// CheckSeal compares a seal with the links recomputed from the log now.
func CheckSeal(now []ChainLink, seal Seal) *Discrepancy {
	want, err := ParseChainHash(seal.Chain)
	if err != nil || seal.Seq == 0 {
		return &Discrepancy{Seq: seal.Seq, Kind: DiffSeal, Detail: "the seal is malformed"}
	}
	if seal.Seq > uint64(len(now)) {
		return &Discrepancy{Seq: seal.Seq, Kind: DiffSeal,
			Detail: fmt.Sprintf("the log holds %d events, fewer than the %d the seal covers", len(now), seal.Seq)}
	}
	if now[seal.Seq-1].Chain != want {
		return &Discrepancy{Seq: seal.Seq, Kind: DiffSeal, Detail: "the chain recomputed from the log does not reach the sealed hash: an event at or before this one changed"}
	}
	return nil
}
