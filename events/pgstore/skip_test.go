package pgstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/events/pgstore"
)

// appendOfType appends n events of eventType to a new stream, in one
// append, and returns where the last landed.
func appendOfType(t *testing.T, store *pgstore.Store, stream, eventType string, n int) events.Position {
	t.Helper()
	evs := make([]events.EventData, n)
	for i := range evs {
		evs[i] = events.EventData{ID: uuid.New(), Type: eventType,
			Data: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), Metadata: json.RawMessage(`{"account_id":"a"}`)}
	}
	res, err := store.Append(context.Background(), stream, events.NoStream(), evs...)
	if err != nil {
		t.Fatal(err)
	}
	return res.Position
}

// deliveredUntil drains sub until it delivers the event at end, and
// returns what it delivered; the test stops at any failure.
func deliveredUntil(t *testing.T, sub events.Subscription, end events.Position) []events.RecordedEvent {
	t.Helper()
	got := pgstore.DrainUntil(t, sub, end, 0)
	if t.Failed() {
		t.FailNow()
	}
	return got
}

// A subscription that reads only companies, behind the tail window (here
// none), reads pages of every type but receives the companies and, per
// page, one event of another type as its position: over 5,000 invoice
// events and 10 companies, the 10 and a handful, where every event came
// before.
func TestFilteredSubscriptionReceivesItsTypesAndAPositionPerPage(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store, _ := newStoreWith(t, pgstore.Options{PollInterval: 50 * time.Millisecond, TailWindow: -1})
	var companies []events.Position
	for i := range 10 {
		appendOfType(t, store, fmt.Sprintf("invoice-%d", i), events.TypeInvoiceDrafted, 500)
		companies = append(companies, appendOfType(t, store, fmt.Sprintf("company-%d", i), events.TypeCompanyCreated, 1))
	}
	end := appendOfType(t, store, "invoice-last", events.TypeInvoiceDrafted, 10) // the log ends with other types
	const total = 10*501 + 10

	every, err := store.SubscribeAll(ctx, events.Position{})
	if err != nil {
		t.Fatal(err)
	}
	all := deliveredUntil(t, every, end)
	sub, err := store.SubscribeAll(ctx, events.Position{}, events.TypeCompanyCreated)
	if err != nil {
		t.Fatal(err)
	}
	got := deliveredUntil(t, sub, end)

	var seen []events.Position
	for _, ev := range got {
		switch {
		case ev.Type == events.TypeCompanyCreated:
			if string(ev.Data) != `{"n":0}` || string(ev.Metadata) != `{"account_id":"a"}` {
				t.Errorf("%s came with data %q metadata %q", ev.Stream, ev.Data, ev.Metadata)
			}
			seen = append(seen, ev.Position)
		case ev.Data != nil || ev.Metadata != nil:
			t.Errorf("%s (%s) came with its payload", ev.Stream, ev.Type)
		}
	}
	if fmt.Sprint(seen) != fmt.Sprint(companies) {
		t.Errorf("companies delivered at %v, want %v", seen, companies)
	}
	pages := (total + pgstore.PageSize - 1) / pgstore.PageSize
	if len(all) != total || len(got) > len(companies)+pages+1 {
		t.Errorf("unfiltered: %d events, want %d; filtered: %d, want at most %d companies and %d positions", len(all), total, len(got), len(companies), pages+1)
	}
	t.Logf("over a log of %d events (%d companies): an unfiltered subscription received %d, a companies one %d", total, len(companies), len(all), len(got))
}

// A subscription whose types never appear still reaches the log's last
// event, behind the window (its pages deliver their last rows) and in it,
// when catching up and when following appends: read-your-writes waits for
// a projection's position, so it must keep up where nothing concerns it.
func TestFilteredSubscriptionReachesTheHeadWithoutItsTypes(t *testing.T) {
	for _, c := range []struct {
		name   string
		window int
	}{{"tail window", 0}, {"no window", -1}} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			store, _ := newStoreWith(t, pgstore.Options{PollInterval: 50 * time.Millisecond, TailWindow: c.window})
			var end events.Position
			for i := range 5 {
				end = appendOfType(t, store, fmt.Sprintf("invoice-%d", i), events.TypeInvoiceDrafted, 1000)
			}
			sub, err := store.SubscribeAll(ctx, events.Position{}, events.TypeCompanyCreated)
			if err != nil {
				t.Fatal(err)
			}
			got := deliveredUntil(t, sub, end)
			for i := range 20 { // live, one by one: nothing wakes it, the poll moves it
				end = appendOfType(t, store, fmt.Sprintf("customer-%d", i), events.TypeCustomerCreated, 1)
				got = append(got, deliveredUntil(t, sub, end)...)
			}
			for _, ev := range got {
				if ev.Data != nil || ev.Metadata != nil {
					t.Fatalf("%s (%s) came with its payload", ev.Stream, ev.Type)
				}
			}
			t.Logf("reached the head of a log of 5,020 events with %d deliveries", len(got))
		})
	}
}
