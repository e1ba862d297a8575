package projections

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/invoicing/invoicing/events"
)

// invoiceStream appends an invoice's events in order, each the next
// revision of its stream, the way the write side does.
type invoiceStream struct {
	t      *testing.T
	e      env
	d      events.InvoiceDrafted
	stream string
	rev    uint64
	total  int64
	// credited and paid are the sums so far, for the settlement each
	// event carries (events.Settle, as the write side computes it).
	credited, paid int64
	amounts        map[string]int64
	drafted        events.Position
}

func newInvoiceStream(t *testing.T, e env, created time.Time) *invoiceStream {
	d := draftedInvoice(created)
	stream, _, pos := appendEvent(t, e.store, "invoice", events.TypeInvoiceDrafted, d)
	return &invoiceStream{t: t, e: e, d: d, stream: stream, total: d.TotalMinor, amounts: map[string]int64{}, drafted: pos}
}

func (s *invoiceStream) next(typ string, payload any) events.Position {
	s.rev++
	_, pos := appendRevision(s.t, s.e, s.stream, s.rev, typ, payload)
	return pos
}

func (s *invoiceStream) settled() events.Settlement {
	return events.Settle(events.StatusIssued, s.total, s.credited, s.paid)
}

func (s *invoiceStream) issue(at time.Time) events.Position {
	return s.next(events.TypeInvoiceIssued, events.InvoiceIssued{InvoiceID: s.d.InvoiceID, CompanyID: s.d.CompanyID,
		AccountID: s.d.AccountID, Number: "INV-000001", Sequence: 1, IssuedAt: at})
}

func (s *invoiceStream) pay(id string, amount int64, method string, at time.Time) events.Position {
	s.paid += amount
	s.amounts[id] = amount
	return s.next(events.TypePaymentRecorded, events.PaymentRecorded{PaymentID: id, InvoiceID: s.d.InvoiceID,
		CompanyID: s.d.CompanyID, AccountID: s.d.AccountID, AmountMinor: amount, PaidOn: "2026-03-10",
		Method: method, RecordedAt: at, Invoice: s.settled()})
}

func (s *invoiceStream) reverse(id, reason string, at time.Time) events.Position {
	s.paid -= s.amounts[id]
	return s.next(events.TypePaymentReversed, events.PaymentReversed{PaymentID: id, InvoiceID: s.d.InvoiceID,
		CompanyID: s.d.CompanyID, AccountID: s.d.AccountID, Reason: reason, ReversedAt: at, Invoice: s.settled()})
}

func (s *invoiceStream) credit(total int64, at time.Time) (events.CreditNoteIssued, events.Position) {
	s.credited += total
	cn := creditNoteOf(s.d, total, at)
	cn.Invoice = s.settled()
	return cn, s.next(events.TypeCreditNoteIssued, cn)
}

// creditNoteOf is a credit note of d with every optional field set; its
// amounts follow no formula, as draftedInvoice's.
func creditNoteOf(d events.InvoiceDrafted, total int64, at time.Time) events.CreditNoteIssued {
	return events.CreditNoteIssued{
		CreditNoteID: uuid.NewString(), InvoiceID: d.InvoiceID, CompanyID: d.CompanyID, AccountID: d.AccountID,
		CustomerID: d.CustomerID, InvoiceNumber: "INV-000001", InvoiceIssueDate: d.IssueDate,
		Number: "CN-000001", Sequence: 1, IssueDate: "2026-03-12", Reason: "Zwei Stunden\ndoppelt <&>",
		ExternalReference: "erp-cn-1", CustomerName: d.CustomerName, Customer: d.Customer, Issuer: d.Issuer,
		Currency: d.Currency, Language: d.Language, Lines: d.Lines[:1],
		SubtotalMinor: 3, TaxMinor: 4, TotalMinor: total, DocumentTerms: d.DocumentTerms,
		TaxBreakdown: d.TaxBreakdown[:1], IssuedAt: at,
	}
}

// settlementRow is an invoice row's settlement, version and updated_at.
type settlementRow struct {
	events.Settlement
	Version   int
	UpdatedAt time.Time
}

func readSettlement(t *testing.T, e env, id string) settlementRow {
	t.Helper()
	var r settlementRow
	err := e.pool.QueryRow(context.Background(), `SELECT amount_credited_minor, amount_paid_minor, amount_due_minor,
		amount_refundable_minor, payment_status, version, updated_at FROM invoices WHERE id = $1`, id).Scan(
		&r.AmountCreditedMinor, &r.AmountPaidMinor, &r.AmountDueMinor, &r.AmountRefundableMinor, &r.PaymentStatus,
		&r.Version, &r.UpdatedAt)
	if err != nil {
		t.Fatalf("read invoice %s: %v", id, err)
	}
	r.UpdatedAt = r.UpdatedAt.UTC()
	return r
}

// Every event of an invoice leaves its row with the settlement the event
// carries (a draft's and an issue's: events.Settle's, nothing paid), its
// version and its time; the payments are listed in the order recorded,
// a reversed one marked.
func TestSettlementColumnsFollowEveryEventOfTheInvoice(t *testing.T) {
	e := newEnv(t)
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	s := newInvoiceStream(t, e, at)
	check := func(what string, pos events.Position, want events.Settlement, when time.Time) {
		t.Helper()
		runAll(t, e, pos)
		got := readSettlement(t, e, s.d.InvoiceID)
		if w := (settlementRow{want, int(s.rev) + 1, when}); got != w {
			t.Fatalf("after %s: %+v, want %+v", what, got, w)
		}
	}
	check("the draft", s.drafted, events.Settle(events.StatusDraft, s.total, 0, 0), at)
	p1, p2 := uuid.NewString(), uuid.NewString()
	steps := []struct {
		what string
		do   func(time.Time) events.Position
	}{
		{"the issue", s.issue},
		{"a payment", func(at time.Time) events.Position { return s.pay(p1, 1000, "bank_transfer", at) }},
		{"a credit note", func(at time.Time) events.Position { _, pos := s.credit(500, at); return pos }},
		{"a payment of the rest", func(at time.Time) events.Position { return s.pay(p2, s.total-1500, "", at) }},
		{"the first payment's reversal", func(at time.Time) events.Position { return s.reverse(p1, "Falsche Rechnung", at) }},
	}
	for i, step := range steps {
		when := at.Add(time.Duration(i+1) * time.Hour)
		pos := step.do(when)
		check(step.what, pos, s.settled(), when)
	}
	if got := readSettlement(t, e, s.d.InvoiceID); got.PaymentStatus != events.PaymentPartiallyPaid || got.AmountDueMinor != 1000 {
		t.Fatalf("setup: the scenario ends %+v, want partially paid with 1000 due", got)
	}
	var payments string
	err := e.pool.QueryRow(context.Background(), `SELECT json_agg(json_build_array(id, amount_minor, paid_on, method,
		reference, reversed_at IS NOT NULL, reversal_reason) ORDER BY position_hi, position_lo)::text
		FROM invoice_payments WHERE invoice_id = $1`, s.d.InvoiceID).Scan(&payments)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`[["%s", 1000, "2026-03-10", "bank_transfer", null, true, "Falsche Rechnung"], `+
		`["%s", %d, "2026-03-10", null, null, false, null]]`, p1, p2, s.total-1500)
	if payments != want {
		t.Fatalf("payments\n%s\nwant\n%s", payments, want)
	}
}

// settlementScenario appends a mix of the settlement's events over several
// invoices, interleaved with drafts, issues and a void, and returns the
// last position.
func settlementScenario(t *testing.T, e env) events.Position {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var last events.Position
	var streams []*invoiceStream
	for i := range 6 {
		s := newInvoiceStream(t, e, at.Add(time.Duration(i)*time.Minute))
		streams = append(streams, s)
		if i == 5 {
			last = s.next(events.TypeInvoiceVoided, events.InvoiceVoided{InvoiceID: s.d.InvoiceID, CompanyID: s.d.CompanyID,
				AccountID: s.d.AccountID, Reason: "Doppelt", VoidedAt: at})
			continue
		}
		last = s.issue(at)
	}
	for i, s := range streams[:5] {
		when := at.Add(time.Duration(i) * time.Hour)
		p := uuid.NewString()
		switch i % 3 {
		case 0: // paid, then reversed, then paid again, in the same batch
			s.pay(p, 700, "card", when)
			s.reverse(p, "", when.Add(time.Minute))
			last = s.pay(uuid.NewString(), s.total, "", when.Add(2*time.Minute))
		case 1: // credited, then partly paid
			s.credit(1234, when)
			last = s.pay(p, 99, "cash", when.Add(time.Minute))
		case 2: // paid in full, then credited: refundable
			s.pay(p, s.total, "", when)
			_, last = s.credit(42, when.Add(time.Minute))
		}
	}
	return last
}

// The fast path (ApplyAll: the batch's payments in one INSERT, its
// reversals in one UPDATE, the invoices' settlements folded into the one
// UPDATE) writes exactly what Apply, one event at a time, writes.
func TestInvoicesApplyAllWritesWhatApplyWritesForTheSettlementsEvents(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	settlementScenario(t, e)
	evs, err := e.store.ReadAll(ctx, events.Position{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if w := applyAll(t, Invoices{}, evs, math.MaxInt); w.statements.Len() != 4 {
		t.Fatalf("ApplyAll queued %d statements, want 4 (drafts, changes, payments, reversals)", w.statements.Len())
	}
	tables := writeEachWay(t, e, Invoices{}, evs, "invoices, invoice_payments", `SELECT (SELECT json_agg(i ORDER BY id) FROM invoices i)::text ||
			(SELECT json_agg(p ORDER BY id) FROM invoice_payments p)::text`)
	for _, status := range events.PaymentStatuses {
		if !strings.Contains(tables["Apply"], `"payment_status":"`+status+`"`) {
			t.Fatalf("setup: no invoice %s: %s", status, tables["Apply"])
		}
	}
	sameEachWay(t, tables)
}

// A CreditNoteIssued is a credit_notes row that copies the event: its
// documents rendered as the API renders an invoice's.
func TestCreditNoteIssuedProjectsARowThatCopiesTheEvent(t *testing.T) {
	e := newEnv(t)
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	s := newInvoiceStream(t, e, at)
	s.issue(at)
	cn, pos := s.credit(77, at.Add(time.Hour))
	runAll(t, e, pos)
	data, err := json.Marshal(cn)
	if err != nil {
		t.Fatal(err)
	}
	var (
		row                               map[string]any
		customer, issuer, lines, document []byte
	)
	err = e.pool.QueryRow(context.Background(), `SELECT json_build_object('id', id, 'company_id', company_id,
			'account_id', account_id, 'invoice_id', invoice_id, 'customer_id', customer_id, 'stream_name', stream_name,
			'invoice_number', invoice_number, 'invoice_issue_date', invoice_issue_date, 'number', number,
			'sequence', sequence, 'issue_date', issue_date, 'reason', reason, 'external_reference', external_reference,
			'customer_name', customer_name, 'currency', currency, 'language', language, 'subtotal_minor', subtotal_minor,
			'tax_minor', tax_minor, 'total_minor', total_minor, 'issued_at', issued_at AT TIME ZONE 'UTC', 'version', version),
			customer, issuer, lines, document
		FROM credit_notes WHERE id = $1`, cn.CreditNoteID).Scan(&row, &customer, &issuer, &lines, &document)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"id": cn.CreditNoteID, "company_id": cn.CompanyID, "account_id": cn.AccountID,
		"invoice_id": cn.InvoiceID, "customer_id": cn.CustomerID, "stream_name": s.stream,
		"invoice_number": cn.InvoiceNumber, "invoice_issue_date": cn.InvoiceIssueDate, "number": cn.Number,
		"sequence": float64(1), "issue_date": cn.IssueDate, "reason": cn.Reason, "external_reference": cn.ExternalReference,
		"customer_name": cn.CustomerName, "currency": cn.Currency, "language": cn.Language, "subtotal_minor": float64(3),
		"tax_minor": float64(4), "total_minor": float64(77), "issued_at": "2026-03-01T10:00:00", "version": float64(1)}
	if !reflect.DeepEqual(row, want) {
		t.Fatalf("row\n%v\nwant\n%v", row, want)
	}
	for name, got := range map[string][]byte{"customer": customer, "issuer": issuer, "lines": lines} {
		if w := eventMember(t, data, name); !reflect.DeepEqual(decodeJSON(t, got), w) {
			t.Errorf("%s = %s, want %v", name, got, w)
		}
	}
	if w := documentMembers(t, data); !reflect.DeepEqual(decodeJSON(t, document), w) {
		t.Errorf("document = %s, want %v", document, w)
	}
	if strings.Contains(string(document), `\u0026`) {
		t.Errorf("document %s escapes HTML; the API does not", document)
	}
}

// A rebuild from the events gives the rows the live projections hold,
// invoice_payments and credit_notes included; and the upgrade from
// invoices v6, which had no invoice_payments, swaps the new table in.
func TestRebuildGivesTheSameSettlementRows(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	last := settlementScenario(t, e)
	runAll(t, e, last)
	v := &Verifier{Rebuilder{Store: e.store, Pool: e.pool, Logger: quiet}}
	for _, p := range []Projection{Invoices{}, CreditNotes{}} {
		findings, err := v.verifyProjection(ctx, p)
		if err != nil || len(findings) > 0 {
			t.Fatalf("verify %s: %v, %v", p.Name(), findings, err)
		}
	}
	snapshot := func() string {
		var s string
		err := e.pool.QueryRow(ctx, `SELECT (SELECT json_agg(i ORDER BY id) FROM invoices i)::text ||
			(SELECT json_agg(p ORDER BY id) FROM invoice_payments p)::text`).Scan(&s)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := snapshot()
	// The live tables of version 6: no invoice_payments.
	if _, err := e.pool.Exec(ctx, `DROP TABLE invoice_payments;
		UPDATE projection_versions SET version = 6 WHERE name = 'invoices'`); err != nil {
		t.Fatal(err)
	}
	if err := v.UpgradeIfStale(ctx, Invoices{}); err != nil {
		t.Fatalf("upgrade from version 6: %v", err)
	}
	if after := snapshot(); after != before {
		t.Fatalf("after the upgrade\n%s\nbefore\n%s", after, before)
	}
}
