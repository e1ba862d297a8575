package telemetry

import (
	"context"
	"testing"
	"time"

	"github.com/invoicing/invoicing/events"
)

// pageStore answers ReadAll from a slice and counts the reads; the rest of
// the port is not used.
type pageStore struct {
	events.Store
	all   []events.RecordedEvent
	reads int
}

func (s *pageStore) ReadAll(_ context.Context, from events.Position, max int) ([]events.RecordedEvent, error) {
	s.reads++
	var out []events.RecordedEvent
	for _, ev := range s.all {
		if ev.Position.Compare(from) > 0 && len(out) < max {
			out = append(out, ev)
		}
	}
	return out, nil
}

func TestLagCountsUpToTheCapWithFewReads(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	store := &pageStore{}
	for i := 1; i <= 10; i++ {
		store.all = append(store.all, events.RecordedEvent{
			Position: events.NewPosition(1, uint64(i)), RecordedAt: now.Add(time.Duration(i-10) * time.Second),
		})
	}
	pos := func(i uint64) events.Position { return events.NewPosition(1, i) }
	tests := []struct {
		name      string
		positions []events.Position
		limit     int
		want      []lag
		reads     int
	}{
		{"caught up", []events.Position{pos(10), pos(10)}, 5, []lag{{0, 0}, {0, 0}}, 1},
		{"behind, one page answers all", []events.Position{pos(8), pos(10), pos(7)}, 5,
			[]lag{{2, 1}, {0, 0}, {3, 2}}, 1},
		{"far behind: saturates, a later checkpoint gets its own read", []events.Position{pos(2), {}, pos(9)}, 5,
			[]lag{{5, 7}, {5, 9}, {1, 0}}, 3},
		{"equal far-behind checkpoints share a read", []events.Position{{}, {}}, 5,
			[]lag{{5, 9}, {5, 9}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store.reads = 0
			got, err := lagAfter(context.Background(), store, tt.positions, tt.limit, now)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tt.want {
				if got[i] != tt.want[i] {
					t.Errorf("lag after %v = %+v, want %+v", tt.positions[i], got[i], tt.want[i])
				}
			}
			if store.reads != tt.reads {
				t.Errorf("%d reads, want %d", store.reads, tt.reads)
			}
		})
	}
}

func TestOperationIsAShortKeyword(t *testing.T) {
	for sql, want := range map[string]string{
		"SELECT 1":                        "SELECT",
		"\n\t insert into events (a) ...": "INSERT",
		"begin":                           "BEGIN",
		"WITH(x) AS ...":                  "WITH",
		"":                                "QUERY",
		"averyveryverylongidentifier x":   "QUERY",
	} {
		if got := operation(sql); got != want {
			t.Errorf("operation(%q) = %q, want %q", sql, got, want)
		}
	}
}
