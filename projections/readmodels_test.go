package projections

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/events/eventstoretest"
)

// appendEvent appends payload as the first event of a new stream of kind and
// returns the stream, the event's data as stored, and its global position.
func appendEvent(t *testing.T, store events.Store, kind, typ string, payload any) (stream string, data []byte, pos events.Position) {
	t.Helper()
	data, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	stream = kind + "-" + uuid.NewString()
	res, err := store.Append(context.Background(), stream, events.NoStream(), events.EventData{
		ID: events.EventID(stream, 0), Type: typ, Data: data, Metadata: []byte(`{}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	return stream, data, res.Position
}

// runAll runs every projection of the service until each has passed pos.
func runAll(t *testing.T, e env, pos events.Position) {
	t.Helper()
	for _, p := range All() {
		runUntil(t, e, NewRunner(p, e.store, e.pool, quiet, RunnerOptions{}), pos)
	}
}

// eventMember decodes one member of an event's JSON data, as the event recorded it.
func eventMember(t *testing.T, data []byte, name string) any {
	t.Helper()
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		t.Fatal(err)
	}
	return decodeJSON(t, members[name])
}

// documentMembers are an InvoiceDrafted's or InvoiceRevised's document
// fields and VAT breakdown, as the read model's document column holds them.
func documentMembers(t *testing.T, data []byte) any {
	t.Helper()
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		t.Fatal(err)
	}
	doc := map[string]json.RawMessage{}
	for _, k := range []string{"buyer_reference", "tax_exemptions", "delivery_date", "delivery_address", "billing_period", "tax_breakdown"} {
		if v, ok := members[k]; ok {
			doc[k] = v
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return decodeJSON(t, b)
}

// decodeJSON decodes b for a JSON-equal comparison; numbers stay exact.
func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return v
}

func some[T any](v T) *T { return &v }

var testAddress = events.Address{City: "Berlin", CountryCode: "DE", Line1: "Str 1", Line2: "Hof", PostalCode: "10115", Region: "BE"}

// customerRow is a customers row; JSON columns decoded, times in UTC.
type customerRow struct {
	ID, CompanyID, AccountID, Stream, Name string
	Address, Identifiers                   any
	Email, ExternalReference               *string
	ArchivedAt                             *time.Time
	CreatedAt, UpdatedAt                   time.Time
	Version                                int
}

func readCustomer(t *testing.T, pool *pgxpool.Pool, id string) customerRow {
	t.Helper()
	var (
		r                    customerRow
		address, identifiers []byte
	)
	err := pool.QueryRow(context.Background(), `
		SELECT id::text, company_id::text, account_id, stream_name, name, address, identifiers,
			email, external_reference, archived_at, created_at, updated_at, version
		FROM customers WHERE id = $1`, id).Scan(&r.ID, &r.CompanyID, &r.AccountID, &r.Stream, &r.Name,
		&address, &identifiers, &r.Email, &r.ExternalReference, &r.ArchivedAt, &r.CreatedAt, &r.UpdatedAt, &r.Version)
	if err != nil {
		t.Fatalf("read customer %s: %v", id, err)
	}
	r.Address, r.Identifiers = decodeJSON(t, address), decodeJSON(t, identifiers)
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	return r
}

func TestCustomerCreatedProjectsARowEqualToTheEvent(t *testing.T) {
	e := newEnv(t)
	created := time.Date(2026, 3, 1, 9, 30, 15, 123456000, time.UTC)
	full := events.CustomerCreated{
		CustomerID: uuid.NewString(), CompanyID: uuid.NewString(), AccountID: "acct", Name: "Globex GmbH",
		Address: testAddress, Email: "billing@globex.example", ExternalReference: "crm-42",
		Identifiers: []events.Identifier{{CountryCode: "DE", Scheme: "vat", Value: "DE123"}}, CreatedAt: created,
	}
	minimal := events.CustomerCreated{
		CustomerID: uuid.NewString(), CompanyID: full.CompanyID, AccountID: "acct", Name: "Initech",
		Address: events.Address{City: "Paris", CountryCode: "FR", Line1: "Rue 2", PostalCode: "75001"}, CreatedAt: created,
	}
	tests := []struct {
		name            string
		event           events.CustomerCreated
		email, ref      *string
		wantIdentifiers func(data []byte) any
	}{
		{"every optional field is copied", full, some(full.Email), some(full.ExternalReference),
			func(data []byte) any { return eventMember(t, data, "identifiers") }},
		{"absent optional fields are NULL and absent identifiers an empty array", minimal, nil, nil,
			func([]byte) any { return []any{} }},
	}
	type sent struct {
		stream string
		data   []byte
	}
	var last events.Position
	streams := make([]sent, len(tests))
	for i, tt := range tests {
		streams[i].stream, streams[i].data, last = appendEvent(t, e.store, "customer", events.TypeCustomerCreated, tt.event)
	}
	runAll(t, e, last)

	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, data := tt.event, streams[i].data
			want := customerRow{
				ID: c.CustomerID, CompanyID: c.CompanyID, AccountID: c.AccountID, Stream: streams[i].stream,
				Name: c.Name, Address: eventMember(t, data, "address"), Identifiers: tt.wantIdentifiers(data),
				Email: tt.email, ExternalReference: tt.ref, CreatedAt: created, UpdatedAt: created, Version: 1,
			}
			if got := readCustomer(t, e.pool, c.CustomerID); !reflect.DeepEqual(got, want) {
				t.Fatalf("customers row differs from its event:\nwant %+v\ngot  %+v", want, got)
			}
		})
	}
}

// invoiceRow is an invoices row; JSON columns decoded, times in UTC.
type invoiceRow struct {
	ID, CompanyID, AccountID, CustomerID, Stream, CustomerName string
	Customer, Issuer, Lines, Document                          any
	Currency, Language, IssueDate, Status                      string
	DueDate, Number, VoidReason                                *string
	IssuedAt, VoidedAt                                         *time.Time
	SubtotalMinor, TaxMinor, TotalMinor                        int64
	ExternalReference, PurchaseOrderReference, Notes, Terms    *string
	CreatedAt, UpdatedAt                                       time.Time
	Version                                                    int
}

func readInvoice(t *testing.T, pool *pgxpool.Pool, id string) invoiceRow {
	t.Helper()
	var (
		r                                 invoiceRow
		customer, issuer, lines, document []byte
	)
	err := pool.QueryRow(context.Background(), `
		SELECT id::text, company_id::text, account_id, customer_id::text, stream_name, customer_name,
			customer, issuer, lines, currency, language, issue_date::text, status, due_date::text,
			number, void_reason, issued_at, voided_at, subtotal_minor, tax_minor, total_minor,
			external_reference, purchase_order_reference, notes, terms, created_at, updated_at, version, document
		FROM invoices WHERE id = $1`, id).Scan(&r.ID, &r.CompanyID, &r.AccountID, &r.CustomerID, &r.Stream,
		&r.CustomerName, &customer, &issuer, &lines, &r.Currency, &r.Language, &r.IssueDate, &r.Status,
		&r.DueDate, &r.Number, &r.VoidReason, &r.IssuedAt, &r.VoidedAt, &r.SubtotalMinor, &r.TaxMinor,
		&r.TotalMinor, &r.ExternalReference, &r.PurchaseOrderReference, &r.Notes, &r.Terms,
		&r.CreatedAt, &r.UpdatedAt, &r.Version, &document)
	if err != nil {
		t.Fatalf("read invoice %s: %v", id, err)
	}
	r.Customer, r.Issuer, r.Lines = decodeJSON(t, customer), decodeJSON(t, issuer), decodeJSON(t, lines)
	r.Document = decodeJSON(t, document)
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	return r
}

// draftedInvoice is an InvoiceDrafted with every optional field set. Its
// amounts follow no formula on purpose: a projection that recomputed them
// instead of copying would show.
func draftedInvoice(created time.Time) events.InvoiceDrafted {
	customerID := uuid.NewString()
	return events.InvoiceDrafted{
		InvoiceID: uuid.NewString(), CompanyID: uuid.NewString(), AccountID: "acct", CustomerID: customerID,
		CustomerName: "Globex GmbH",
		Customer: events.CustomerSnapshot{ID: customerID, Name: "Globex GmbH", Address: testAddress,
			Email: "billing@globex.example", SchemaVersion: events.SnapshotSchemaVersion,
			Identifiers: []events.Identifier{{CountryCode: "DE", Scheme: "vat", Value: "DE123"}}},
		Issuer: events.IssuerSnapshot{ID: uuid.NewString(), LegalName: "Acme SE", TradingName: "Acme",
			Address: testAddress, Email: "ar@acme.example", SchemaVersion: events.SnapshotSchemaVersion,
			Identifiers: []events.Identifier{{Scheme: "lei", Value: "5299000J2N45DDNE4Y28"}}},
		Currency: "EUR", Language: "de-DE", IssueDate: "2026-03-01", DueDate: "2026-03-31",
		Lines: []events.InvoiceLine{
			{Position: 1, Description: "Consulting", Quantity: "1.5", Unit: "h", UnitCode: "HUR", UnitAmountMinor: 333,
				TaxRateBps: 1900, TaxCategory: "S", NetAmountMinor: 7, TaxAmountMinor: 11, TotalAmountMinor: 13},
			{Position: 2, Description: "Licence", Quantity: "2", UnitCode: "C62", UnitAmountMinor: 9007199254740991,
				TaxRateBps: 0, TaxCategory: "E", NetAmountMinor: 9007199254740991, TaxAmountMinor: 0, TotalAmountMinor: 1},
		},
		SubtotalMinor: 17, TaxMinor: 19, TotalMinor: 9007199254740991,
		DocumentTerms: events.DocumentTerms{BuyerReference: "B-1", DeliveryDate: "2026-02-27",
			TaxExemptions:   []events.TaxExemption{{TaxCategory: "E", Reason: "Exempt <&>"}},
			DeliveryAddress: &testAddress, BillingPeriod: &events.Period{Start: "2026-02-01"}},
		TaxBreakdown: []events.TaxBreakdown{{TaxCategory: "S", TaxRateBps: 1900, TaxableAmountMinor: 3, TaxAmountMinor: 5},
			{TaxCategory: "E", TaxableAmountMinor: 8}},
		ExternalReference: "erp-7", PurchaseOrderReference: "PO-1", Notes: "Thanks", Terms: "Net 30",
		CreatedAt: created,
	}
}

func TestInvoiceDraftedProjectsADraftRowThatCopiesTheEvent(t *testing.T) {
	e := newEnv(t)
	created := time.Date(2026, 3, 1, 9, 30, 15, 123456000, time.UTC)
	full := draftedInvoice(created)
	minimal := draftedInvoice(created)
	minimal.DueDate, minimal.ExternalReference, minimal.PurchaseOrderReference, minimal.Notes, minimal.Terms = "", "", "", "", ""
	tests := []struct {
		name                       string
		event                      events.InvoiceDrafted
		due, ref, po, notes, terms *string
	}{
		{"snapshots, lines and amounts are copied, every optional field set", full,
			some(full.DueDate), some(full.ExternalReference), some(full.PurchaseOrderReference), some(full.Notes), some(full.Terms)},
		{"empty optional fields are NULL", minimal, nil, nil, nil, nil, nil},
	}
	streams, datas := make([]string, len(tests)), make([][]byte, len(tests))
	var last events.Position
	for i, tt := range tests {
		streams[i], datas[i], last = appendEvent(t, e.store, "invoice", events.TypeInvoiceDrafted, tt.event)
	}
	runAll(t, e, last)

	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, data := tt.event, datas[i]
			want := invoiceRow{
				ID: d.InvoiceID, CompanyID: d.CompanyID, AccountID: d.AccountID, CustomerID: d.CustomerID,
				Stream: streams[i], CustomerName: d.CustomerName, Customer: eventMember(t, data, "customer"),
				Issuer: eventMember(t, data, "issuer"), Lines: eventMember(t, data, "lines"), Currency: d.Currency,
				Language: d.Language, IssueDate: d.IssueDate, Status: "draft", DueDate: tt.due,
				SubtotalMinor: d.SubtotalMinor, TaxMinor: d.TaxMinor, TotalMinor: d.TotalMinor,
				ExternalReference: tt.ref, PurchaseOrderReference: tt.po, Notes: tt.notes, Terms: tt.terms,
				CreatedAt: created, UpdatedAt: created, Version: 1, Document: documentMembers(t, data),
			}
			if got := readInvoice(t, e.pool, d.InvoiceID); !reflect.DeepEqual(got, want) {
				t.Fatalf("invoices row differs from its event (number, issued_at, void_reason, voided_at must be NULL):\nwant %+v\ngot  %+v", want, got)
			}
		})
	}
}

func TestEachProjectionWritesOnlyItsOwnEventType(t *testing.T) {
	e := newEnv(t)
	created := time.Date(2026, 3, 1, 9, 30, 15, 0, time.UTC)
	eventstoretest.AppendCompanies(t, e.store, 2)
	customer := events.CustomerCreated{CustomerID: uuid.NewString(), CompanyID: uuid.NewString(), AccountID: "acct",
		Name: "Globex", Address: testAddress, CreatedAt: created}
	appendEvent(t, e.store, "customer", events.TypeCustomerCreated, customer)
	_, _, last := appendEvent(t, e.store, "invoice", events.TypeInvoiceDrafted, draftedInvoice(created))
	runAll(t, e, last)

	var companies, customers, invoices int
	err := e.pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM companies),
		(SELECT count(*) FROM customers), (SELECT count(*) FROM invoices)`).Scan(&companies, &customers, &invoices)
	if err != nil {
		t.Fatal(err)
	}
	if companies != 2 || customers != 1 || invoices != 1 {
		t.Fatalf("rows: %d companies, %d customers, %d invoices; want 2, 1, 1", companies, customers, invoices)
	}
}
