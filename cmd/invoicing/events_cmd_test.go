package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/audit"
	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/events/pgstore"
	"github.com/invoicing/invoicing/internal/pgtest"
	"github.com/invoicing/invoicing/projections"
)

// pgStore is an event store and the read models' database, as the CLI
// opens them.
type pgStore struct {
	*pgstore.Store
	pool *pgxpool.Pool
}

func newPGStore(t *testing.T) (pgStore, string) {
	t.Helper()
	url := pgtest.NewDatabase(t)
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := errors.Join(pgstore.Migrate(context.Background(), pool), projections.Migrate(context.Background(), pool), audit.Migrate(context.Background(), pool)); err != nil {
		t.Fatal(err)
	}
	store := pgstore.New(pool, slog.New(slog.NewJSONHandler(io.Discard, nil)), pgstore.Options{PollInterval: 20 * time.Millisecond})
	t.Cleanup(func() { store.Close() })
	return pgStore{Store: store, pool: pool}, url
}

func appendN(t *testing.T, store events.Store, n int, account string) {
	t.Helper()
	md, _ := json.Marshal(events.Metadata{AccountID: account, SchemaVersion: 1})
	for i := range n {
		stream := fmt.Sprintf("company-%s-%d-%d", account, time.Now().UnixNano(), i)
		if _, err := store.Append(context.Background(), stream, events.NoStream(), events.EventData{
			ID: events.EventID(stream, 0), Type: events.TypeCompanyCreated, Data: []byte(`{"i":` + fmt.Sprint(i) + `}`), Metadata: md,
		}); err != nil {
			t.Fatal(err)
		}
	}
}

func decodeLines(t *testing.T, out string) []audit.ExportLine {
	t.Helper()
	var lines []audit.ExportLine
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l audit.ExportLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	return lines
}

func TestExportIsCompleteOrderedAndResumable(t *testing.T) {
	store, _ := newPGStore(t)
	appendN(t, store, 1203, "acme") // more than two pages
	ctx := context.Background()
	var all bytes.Buffer
	if err := exportEvents(ctx, store.pool, store, exportOptions{}, &all); err != nil {
		t.Fatal(err)
	}
	lines := decodeLines(t, all.String())
	if len(lines) != 1203 {
		t.Fatalf("exported %d events, want 1203", len(lines))
	}
	for i := 1; i < len(lines); i++ {
		a, _ := events.ParsePosition(lines[i-1].Position)
		b, _ := events.ParsePosition(lines[i].Position)
		if a.Compare(b) >= 0 {
			t.Fatalf("line %d at %s is not after %s", i, b, a)
		}
	}
	for _, cut := range []int{0, 1, 499, 500, 1202} {
		from, _ := events.ParsePosition(lines[cut].Position)
		var rest bytes.Buffer
		if err := exportEvents(ctx, store.pool, store, exportOptions{From: from}, &rest); err != nil {
			t.Fatal(err)
		}
		got := decodeLines(t, rest.String())
		if len(got) != len(lines)-cut-1 || (len(got) > 0 && got[0].ID != lines[cut+1].ID) {
			t.Fatalf("resuming after line %d gave %d lines, want the %d after it with no gap or duplicate", cut, len(got), len(lines)-cut-1)
		}
	}
}

func TestExportFiltersByTypeAndAccount(t *testing.T) {
	store, _ := newPGStore(t)
	appendN(t, store, 3, "acme")
	appendN(t, store, 2, "globex")
	var out bytes.Buffer
	if err := exportEvents(context.Background(), store.pool, store, exportOptions{Account: "globex", Types: []string{events.TypeCompanyCreated}}, &out); err != nil {
		t.Fatal(err)
	}
	if n := len(decodeLines(t, out.String())); n != 2 {
		t.Errorf("--account globex exported %d events, want 2", n)
	}
	out.Reset()
	if err := exportEvents(context.Background(), store.pool, store, exportOptions{Types: []string{events.TypeInvoiceDrafted}}, &out); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 {
		t.Errorf("--type InvoiceDrafted exported %q", out.String())
	}
}

// chanWriter hands each write to the test through a channel.
type chanWriter struct {
	ch chan []byte
}

func (b chanWriter) Write(p []byte) (int, error) {
	b.ch <- append([]byte(nil), p...)
	return len(p), nil
}

func TestExportFollowPrintsEventsAppendedLater(t *testing.T) {
	store, url := newPGStore(t)
	appendN(t, store, 2, "acme")
	ctx, cancel := context.WithCancel(context.Background())
	out := chanWriter{ch: make(chan []byte, 100)}
	done := make(chan error, 1)
	getenv := func(k string) string { return map[string]string{"DATABASE_URL": url}[k] }
	go func() { done <- run(ctx, []string{"events", "export", "--follow"}, getenv, out, io.Discard) }()
	for range 2 {
		select {
		case <-out.ch:
		case <-time.After(10 * time.Second):
			t.Fatal("history not printed")
		}
	}
	appendN(t, store, 1, "late")
	select {
	case line := <-out.ch:
		if !strings.Contains(string(line), `"account_id":"late"`) {
			t.Errorf("followed line = %s, want the late event", line)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("--follow did not print an event appended after it started")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("export --follow after cancel: %v", err)
	}
}

func TestEventsReadPrintsAStream(t *testing.T) {
	store, url := newPGStore(t)
	appendN(t, store, 1, "acme")
	evs, _ := store.ReadAll(context.Background(), events.Position{}, 1)
	var out bytes.Buffer
	getenv := func(k string) string { return map[string]string{"DATABASE_URL": url}[k] }
	if err := run(context.Background(), []string{"events", "read", "--stream", evs[0].Stream}, getenv, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	lines := decodeLines(t, out.String())
	if len(lines) != 1 || lines[0].Stream != evs[0].Stream || lines[0].Type != events.TypeCompanyCreated || string(lines[0].Data) != string(evs[0].Data) {
		t.Errorf("events read = %+v", lines)
	}
}
