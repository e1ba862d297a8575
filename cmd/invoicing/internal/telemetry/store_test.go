package telemetry

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/invoicing/invoicing/events"
)

// failingStore answers every call with err.
type failingStore struct {
	events.Store
	err error
}

func (s failingStore) Append(context.Context, string, events.ExpectedRevision, ...events.EventData) (events.AppendResult, error) {
	return events.AppendResult{}, s.err
}

func (s failingStore) SubscribeAll(context.Context, events.Position, ...string) (events.Subscription, error) {
	return failedSubscription{s.err}, nil
}

type failedSubscription struct{ err error }

func (failedSubscription) Events() <-chan events.RecordedEvent { return nil }
func (s failedSubscription) Err() error                        { return s.err }

func TestInstrumentedStorePassesErrorsOnAndCountsThem(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewStoreMetrics(reg)
	for outcome, err := range map[string]error{
		outcomeConflict:    fmt.Errorf("append: %w", events.ErrWrongExpectedRevision),
		outcomeUnavailable: fmt.Errorf("append: %w", events.ErrUnavailable),
		outcomeError:       errors.New("boom"),
	} {
		s := InstrumentStore(failingStore{err: err}, m, nil)
		if _, got := s.Append(context.Background(), "s", events.NoStream()); got != err {
			t.Errorf("Append returned %v, want the store's %v", got, err)
		}
		if got := sampleCount(t, m.appendDuration.WithLabelValues(outcome).(prometheus.Histogram)); got != 1 {
			t.Errorf("outcome %s counted %d times, want 1", outcome, got)
		}
	}
	s := InstrumentStore(failingStore{err: events.ErrUnavailable}, m, nil)
	sub, _ := s.SubscribeAll(context.Background(), events.Position{})
	for range 3 {
		_ = sub.Err()
	}
	if got := counterValue(t, m.unavailable.WithLabelValues(opSubscribe)); got != 1 {
		t.Errorf("a failed subscription counted %v times, want 1", got)
	}
	if got := counterValue(t, m.unavailable.WithLabelValues(opAppend)); got != 1 {
		t.Errorf("unavailable appends counted %v, want 1", got)
	}
}

func sampleCount(t *testing.T, h prometheus.Histogram) uint64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 1)
	h.Collect(ch)
	var out dto.Metric
	if err := (<-ch).Write(&out); err != nil {
		t.Fatal(err)
	}
	return out.GetHistogram().GetSampleCount()
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var out dto.Metric
	if err := c.Write(&out); err != nil {
		t.Fatal(err)
	}
	return out.GetCounter().GetValue()
}

// skippingStore reads a fixed page, as a SkippingReader that passed
// scanned events for it.
type skippingStore struct {
	events.Store
	page    []events.RecordedEvent
	scanned int
	err     error
}

func (s skippingStore) ReadAll(context.Context, events.Position, int) ([]events.RecordedEvent, error) {
	return s.page, s.err
}

func (s skippingStore) ReadAllOf(context.Context, events.Position, int, ...string) ([]events.RecordedEvent, int, error) {
	return s.page, s.scanned, s.err
}

// readAllOnly is a store without ReadAllOf.
type readAllOnly struct{ events.Store }

// The decorator skips as the store it decorates does: a rebuild through
// it reads a SkippingReader's pages, with their counts of events passed,
// and every payload of a store without one.
func TestInstrumentedStoreForwardsSkippingReads(t *testing.T) {
	page := []events.RecordedEvent{{Type: events.TypeCompanyCreated}}
	for _, c := range []struct {
		name        string
		store       events.Store
		wantScanned int
	}{
		{"skipping store", skippingStore{page: page, scanned: 2000}, 2000},
		{"store without ReadAllOf", readAllOnly{skippingStore{page: page, scanned: 2000}}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			s := InstrumentStore(c.store, NewStoreMetrics(reg), nil).(events.SkippingReader)
			got, scanned, err := s.ReadAllOf(context.Background(), events.Position{}, 2000, events.TypeCompanyCreated)
			if err != nil || len(got) != 1 || scanned != c.wantScanned {
				t.Errorf("read %d events, %d passed (%v), want 1 and %d", len(got), scanned, err, c.wantScanned)
			}
		})
	}
}
