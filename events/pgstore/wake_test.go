package pgstore

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/invoicing/invoicing/events"
)

func TestNotificationPayload(t *testing.T) {
	tests := []struct {
		payload string
		want    notification
	}{
		{"", notification{}}, // a version before typed notifications: wake every subscriber
		{"garbage", notification{}},
		{" InvoiceDrafted", notification{}},
		{"4f1c InvoiceDrafted", notification{sender: "4f1c", types: []string{"InvoiceDrafted"}}},
		{"4f1c CompanyCreated,InvoiceDrafted", notification{sender: "4f1c", types: []string{"CompanyCreated", "InvoiceDrafted"}}},
	}
	for _, tt := range tests {
		if got := parseNotification(tt.payload); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseNotification(%q) = %+v, want %+v", tt.payload, got, tt.want)
		}
	}
	n := notification{sender: "4f1c", types: []string{"CompanyCreated", "InvoiceDrafted"}}
	if got := parseNotification(n.String()); !reflect.DeepEqual(got, n) {
		t.Errorf("round trip of %+v gave %+v", n, got)
	}
}

func TestPendingTypesAreGatheredOnce(t *testing.T) {
	var p pendingTypes
	p.add([]string{"InvoiceDrafted", "InvoiceDrafted"})
	p.add([]string{"CompanyCreated", "InvoiceDrafted"})
	if got, want := p.take(), []string{"CompanyCreated", "InvoiceDrafted"}; !reflect.DeepEqual(got, want) {
		t.Errorf("take() = %v, want %v", got, want)
	}
	if got := p.take(); got != nil {
		t.Errorf("take() after take() = %v, want nil", got)
	}
}

// A process's own notification wakes none of its subscribers: its append
// woke those of its types already, and a second wake-up is a second read.
// Two stores on one database stand for two processes; the wake-up channels
// are looked at directly, since a redundant read delivers nothing.
func TestOwnNotificationIsSkipped(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	open := func() *Store {
		s := wakeOnlyStore(t, pool)
		listening := s.wake.Wait([]string{"listening"}) // closed by the listener once it LISTENs
		s.startListener()
		waitClosed(t, listening, "the listener to start")
		return s
	}
	a, b := open(), open()
	appendOne := func(s *Store, stream, eventType string) {
		ev := events.EventData{ID: events.EventID(stream, 0), Type: eventType, Data: json.RawMessage(`{}`)}
		if _, err := s.Append(ctx, stream, events.NoStream(), ev); err != nil {
			t.Fatal(err)
		}
	}
	invoicesOfB := b.wake.Wait([]string{events.TypeInvoiceDrafted})
	appendOne(a, "invoice-a", events.TypeInvoiceDrafted)
	invoicesOfA := a.wake.Wait([]string{events.TypeInvoiceDrafted}) // after the append's own wake-up
	waitClosed(t, invoicesOfB, "a's notification to reach b")
	companiesOfA := a.wake.Wait([]string{events.TypeCompanyCreated})
	appendOne(b, "company-b", events.TypeCompanyCreated)
	// a reads notifications in commit order: b's came after a's own.
	waitClosed(t, companiesOfA, "b's notification to reach a")
	select {
	case <-invoicesOfA:
		t.Fatal("a's own notification woke a's invoice subscribers again")
	default:
	}
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("waited 10s for %s", what)
	}
}

// A wake-up of the notifier with no types gathered (a commit whose types
// the previous notification already took) sends nothing: an empty
// notification would wake every subscriber of every process.
func TestNotifierSendsNoEmptyNotification(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	listener, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Release()
	if _, err := listener.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		t.Fatal(err)
	}
	s := wakeOnlyStore(t, pool)

	s.notify <- struct{}{} // nothing pending
	for len(s.notify) > 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // what it would send has been sent
	ev := events.EventData{ID: events.EventID("company-1", 0), Type: events.TypeCompanyCreated, Data: json.RawMessage(`{}`)}
	if _, err := s.Append(ctx, "company-1", events.NoStream(), ev); err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	msg, err := listener.Conn().WaitForNotification(waitCtx)
	if err != nil {
		t.Fatal(err)
	}
	if n := parseNotification(msg.Payload); n.sender != s.instance || len(n.types) == 0 {
		t.Errorf("first notification %q, want the append's, naming its type", msg.Payload)
	}
}
