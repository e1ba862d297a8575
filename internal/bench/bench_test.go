package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/projections"
)

// Smoke tests of the harness's pure parts; nothing here starts a server.

func TestPercentileIsNearestRank(t *testing.T) {
	var lat []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose: summarize sorts
		lat = append(lat, time.Duration(i)*time.Millisecond)
	}
	s := summarize(lat)
	if s.N != 100 || s.P50 != 50*time.Millisecond || s.P99 != 99*time.Millisecond || s.Max != 100*time.Millisecond {
		t.Fatalf("summarize(1..100 ms) = %+v; want p50 50ms, p99 99ms, max 100ms", s)
	}
	if s.Mean != 50500*time.Microsecond {
		t.Errorf("mean = %v, want 50.5ms", s.Mean)
	}
	one := []time.Duration{7}
	if percentile(one, 0.5) != 7 || percentile(one, 0.99) != 7 {
		t.Errorf("one sample: every percentile is that sample")
	}
	if percentile(nil, 0.99) != 0 {
		t.Errorf("no samples: 0")
	}
	ten := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if got := percentile(ten, 0.99); got != 10 {
		t.Errorf("p99 of 10 samples = %v, want the largest", got)
	}
	if got := percentile(ten, 0.5); got != 5 {
		t.Errorf("p50 of 1..10 = %v, want 5", got)
	}
}

func TestTableAlignsColumns(t *testing.T) {
	tb := &table{Header: []string{"phase", "per s", "p99 ms"}}
	tb.add("create", "812", "31.20")
	tb.add("get ÷", "12345", "-")
	want := "" +
		"phase   per s  p99 ms\n" +
		"---------------------\n" +
		"create    812   31.20\n" +
		"get ÷   12345       -\n"
	if got := tb.String(); got != want {
		t.Fatalf("table:\n%s\nwant:\n%s", got, want)
	}
	if fmtRatio(1, 0) != "-" || fmtRatio(1, 4) != "0.250" || fmtF(nan, 1) != "-" {
		t.Errorf("ratio or NaN formatting")
	}
}

func TestProjectionLagsFindTheFirstSampleThatSawTheEvent(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	samples := []checkpointSample{
		{At: at(0), Min: txPos{10, 5}},
		{At: at(2), Min: txPos{10, 5}},
		{At: at(4), Min: txPos{11, 9}},
		{At: at(6), Min: txPos{12, 1}},
	}
	evs := []appended{
		{Pos: txPos{10, 7}, RecordedAt: at(1)}, // visible at 4
		{Pos: txPos{11, 9}, RecordedAt: at(3)}, // exactly the checkpoint at 4
		{Pos: txPos{12, 1}, RecordedAt: at(3)}, // at 6
		{Pos: txPos{12, 2}, RecordedAt: at(5)}, // never
	}
	lags, unseen := projectionLags(samples, evs)
	want := []time.Duration{3 * time.Millisecond, time.Millisecond, 3 * time.Millisecond}
	if unseen != 1 || len(lags) != 3 || lags[0] != want[0] || lags[1] != want[1] || lags[2] != want[2] {
		t.Fatalf("lags = %v, unseen %d; want %v, 1", lags, unseen, want)
	}
	if p, err := parseTxPos("812/1045"); err != nil || p != (txPos{812, 1045}) {
		t.Errorf("parseTxPos = %v, %v", p, err)
	}
	if _, err := parseTxPos("812"); err == nil {
		t.Errorf("parseTxPos accepted a position without /")
	}
}

func TestParsersOfProcAndPgbench(t *testing.T) {
	st, err := parseStat([]byte("4242 (invoic ing) S 1 4242 4242 0 -1 4194560 100 40 2 1 250 50 7 3 20 0 9 0 123 0 0"))
	if err != nil || st.ppid != 1 || st.utime != 2500*time.Millisecond || st.stime != 500*time.Millisecond || st.cutime != 70*time.Millisecond ||
		st.faults != 102 || st.cfaults != 41 {
		t.Errorf("parseStat = %+v, %v", st, err)
	}
	m, err := parseStatus(strings.NewReader("Name:\tinvoicing\nVmHWM:\t   40960 kB\nVmRSS:\t   20480 kB\n"))
	if err != nil || m.Peak != 40<<20 || m.RSS != 20<<20 {
		t.Errorf("parseStatus = %+v, %v", m, err)
	}
	if got := parseProcStat([]byte("cpu  100 5 50 9000 40 3 2 1 0 0\ncpu0 1 2 3\n")); got != 1610*time.Millisecond {
		t.Errorf("parseProcStat = %v, want 1.61s (user+nice+system+irq+softirq+steal ticks)", got)
	}
	tps, err := parsePgbenchTPS("latency average = 1.234 ms\ninitial connection time = 20.1 ms\ntps = 12962.318 (without initial connection time)\n")
	if err != nil || tps != 12962.318 {
		t.Errorf("parsePgbenchTPS = %v, %v", tps, err)
	}
	lat, err := parsePgbenchLog(strings.NewReader("0 1 1234 0 1700000000 123456\n3 7 90 0 1700000000 123999\n"))
	if err != nil || len(lat) != 2 || lat[0] != 1234*time.Microsecond || lat[1] != 90*time.Microsecond {
		t.Errorf("parsePgbenchLog = %v, %v", lat, err)
	}
}

func TestCountStatementsReadsTheIdleLog(t *testing.T) {
	log := strings.Join([]string{
		"2026-01-01 00:00:00.001 UTC [100] @invoicing LOG:  duration: 0.050 ms  parse stmtcache_1: SELECT 1",
		"2026-01-01 00:00:00.002 UTC [100] @invoicing LOG:  duration: 0.010 ms  bind stmtcache_1: SELECT 1",
		"2026-01-01 00:00:00.003 UTC [100] @invoicing LOG:  duration: 0.200 ms  execute stmtcache_1: SELECT 1",
		"2026-01-01 00:00:00.004 UTC [100] @invoicing LOG:  duration: 1.000 ms  execute <unnamed>: ",
		"\t\tSELECT tx_id",
		"\t\tFROM events",
		"2026-01-01 00:00:00.005 UTC [100] @invoicing DETAIL:  parameters: $1 = '7'",
		"2026-01-01 00:00:00.006 UTC [101] bench-harness@invoicing LOG:  duration: 9.000 ms  statement: SELECT 2",
		"2026-01-01 00:00:00.007 UTC [102] @postgres LOG:  duration: 9.000 ms  statement: SELECT 3",
		"2026-01-01 00:00:00.008 UTC [100] @invoicing LOG:  duration: 0.300 ms  statement: LISTEN x",
		"2026-01-01 00:00:00.009 UTC [100] @invoicing LOG:  checkpoint starting: time",
	}, "\n")
	st, err := countStatements(strings.NewReader(log), "invoicing", "bench")
	if err != nil {
		t.Fatal(err)
	}
	if st.Statements != 3 {
		t.Errorf("statements = %d, want 3 (two executes and one simple statement of invoicing, not the harness's)", st.Statements)
	}
	if st.Time != 1560*time.Microsecond {
		t.Errorf("server time = %v, want 1.56ms (parse + bind + execute + ...)", st.Time)
	}
	if len(st.ByText) != 3 || st.ByText[1].Text != "SELECT 1" && st.ByText[0].Text != "SELECT 1" {
		t.Errorf("by text = %+v", st.ByText)
	}
	found := false
	for _, ts := range st.ByText {
		found = found || ts.Text == "SELECT tx_id FROM events"
	}
	if !found {
		t.Errorf("multi-line statement not joined: %+v", st.ByText)
	}
}

func TestDatasetLayout(t *testing.T) {
	ds := newDataset(10000, 30, 1000, 0.4)
	perCompany := make([]int, ds.Companies)
	for i := range ds.Invoices {
		c := ds.companyOf(i)
		perCompany[c]++
		if k := ds.customerOf(i); ds.custComp[k] != c {
			t.Fatalf("invoice %d of company %d has customer %d of company %d", i, c, k, ds.custComp[k])
		}
	}
	if perCompany[0] != 4000 || ds.bigInvoices() != 4000 {
		t.Errorf("big company holds %d invoices (bigInvoices %d), want 4000", perCompany[0], ds.bigInvoices())
	}
	for c := 1; c < ds.Companies; c++ {
		if perCompany[c] < 6000/29 || perCompany[c] > 6000/29+1 {
			t.Errorf("company %d holds %d invoices, want about %d", c, perCompany[c], 6000/29)
		}
	}
	if n := len(ds.customersOf(0)); n != 400 {
		t.Errorf("big company has %d customers, want 400", n)
	}
}

// TestGeneratedLogIsOneTheServiceCouldHaveWritten checks a small dataset's
// log: ids, streams and revisions consistent; payloads decode strictly into
// the service's types; every read model applies every event; invoice
// streams fold to the intended status; numbers gapless. What an invoice
// holds is not checked here: the write side's own code drafts it
// (command.DraftInvoice).
func TestGeneratedLogIsOneTheServiceCouldHaveWritten(t *testing.T) {
	ds := newDataset(600, 3, 20, 0.4)
	var evs []genEvent
	if err := ds.generate(func(ev genEvent) error { evs = append(evs, ev); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(evs) != ds.eventCount() {
		t.Fatalf("generated %d events, eventCount() says %d", len(evs), ds.eventCount())
	}
	ids := map[uuid.UUID]bool{}
	revs := map[string]int64{}
	streams := map[string][]events.RecordedEvent{}
	for n, ev := range evs {
		if ids[ev.ID] {
			t.Fatalf("event %d: duplicate id", n)
		}
		ids[ev.ID] = true
		if want := revs[ev.Stream]; ev.Revision != want {
			t.Fatalf("event %d: %s at revision %d, want %d", n, ev.Stream, ev.Revision, want)
		}
		revs[ev.Stream]++
		if uuid.UUID(events.EventID(ev.Stream, uint64(ev.Revision))) != ev.ID {
			t.Fatalf("event %d: id is not events.EventID of its stream and revision", n)
		}
		var md events.Metadata
		strictDecode(t, ev.Metadata, &md)
		if md.AccountID != ds.Account || md.SchemaVersion != events.SchemaVersion || len(md.RequestFingerprint) != 64 {
			t.Fatalf("event %d: metadata %+v", n, md)
		}
		var payload any
		switch ev.Type {
		case events.TypeCompanyCreated:
			payload = &events.CompanyCreated{}
		case events.TypeCustomerCreated:
			payload = &events.CustomerCreated{}
		case events.TypeInvoiceDrafted:
			payload = &events.InvoiceDrafted{}
		case events.TypeInvoiceIssued:
			payload = &events.InvoiceIssued{}
		case events.TypeInvoiceVoided:
			payload = &events.InvoiceVoided{}
		case events.TypeInvoiceNumberAssigned:
			payload = &events.InvoiceNumberAssigned{}
		default:
			t.Fatalf("event %d: type %s", n, ev.Type)
		}
		strictDecode(t, ev.Data, payload)
		rec := events.RecordedEvent{ID: ev.ID, Type: ev.Type, Data: ev.Data, Metadata: ev.Metadata, Stream: ev.Stream,
			Revision: uint64(ev.Revision), Position: events.NewPosition(1, uint64(n+1)), RecordedAt: ev.RecordedAt}
		applied := 0
		for _, p := range projections.All() {
			var b pgx.Batch
			if err := p.Apply(rec, &b); err != nil {
				t.Fatalf("event %d (%s): projection %s: %v", n, ev.Type, p.Name(), err)
			}
			applied += b.Len()
		}
		if applied == 0 && ev.Type != events.TypeInvoiceNumberAssigned {
			t.Fatalf("event %d (%s): no read model wrote anything", n, ev.Type)
		}
		streams[ev.Stream] = append(streams[ev.Stream], rec)
	}

	statuses := map[string]int{}
	numbers := map[string][]uint64{}
	for i := range ds.Invoices {
		key := fmt.Sprintf("bench-scale-invoice-%d", i)
		stream := events.StreamName(events.KindInvoice, ds.Account, "invoices.create", ds.companyID(ds.companyOf(i)), key)
		inv, err := events.FoldInvoice(streams[stream])
		if err != nil {
			t.Fatalf("invoice %d: %v", i, err)
		}
		if inv.Status != ds.status(i) || inv.InvoiceID != ds.invoiceID(i) || inv.ExternalReference != ds.externalRef(i) {
			t.Fatalf("invoice %d folds to %s/%s/%q, want %s/%s/%q", i, inv.Status, inv.InvoiceID, inv.ExternalReference,
				ds.status(i), ds.invoiceID(i), ds.externalRef(i))
		}
		if u := uuid.MustParse(inv.InvoiceID); u.Version() != 7 || u.Variant() != uuid.RFC4122 {
			t.Fatalf("invoice %d: id %s is not a UUIDv7", i, u)
		}
		statuses[inv.Status]++
		if inv.Status == events.StatusIssued {
			numbers[inv.CompanyID] = append(numbers[inv.CompanyID], 0)
			if want := fmt.Sprintf("INV-%06d", len(numbers[inv.CompanyID])); inv.Number != want {
				t.Fatalf("invoice %d of company %s: number %s, want %s (gapless, in order)", i, inv.CompanyID, inv.Number, want)
			}
		}
	}
	if statuses[events.StatusIssued] != 60 || statuses[events.StatusVoid] != 12 {
		t.Errorf("statuses = %v; want 60 issued, 12 void of 600", statuses)
	}
}

func strictDecode(t *testing.T, b []byte, into any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		t.Fatalf("decode %T: %v\n%s", into, err, b)
	}
}

// The credit note phase credits at the rate that holds the most of an
// invoice's net amount, and no two clients share an invoice.
func TestCreditRateAndDealing(t *testing.T) {
	for seed := uint64(1); seed < 200; seed++ {
		r := creditRate(seed)
		var at, other int64
		for _, l := range lines(seed, 5) {
			if l.TaxRateBps == r {
				at += l.UnitAmountMinor
			} else {
				other += l.UnitAmountMinor
			}
		}
		if at == 0 || at < other {
			t.Fatalf("seed %d: rate %d holds %d of the unit amounts, the other rate %d", seed, r, at, other)
		}
	}
	invs := make([]created, 37)
	for i := range invs {
		invs[i] = created{invoice: fmt.Sprint(i)}
	}
	seen := map[string]bool{}
	for _, mine := range perClient(invs, 16) {
		if len(mine) < 2 {
			t.Fatalf("a client got %d invoices of 37", len(mine))
		}
		for _, inv := range mine {
			if seen[inv.invoice] {
				t.Fatalf("invoice %s dealt twice", inv.invoice)
			}
			seen[inv.invoice] = true
		}
	}
	if len(seen) != len(invs) {
		t.Fatalf("dealt %d of %d invoices", len(seen), len(invs))
	}
}
