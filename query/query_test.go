package query

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/pgtest"
	"github.com/invoicing/invoicing/projections"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// fixture is a fresh read-model database filled by the projections' own
// Apply, so that the tables these queries read are the ones projected.
type fixture struct {
	t     *testing.T
	pool  *pgxpool.Pool
	store *Store
	clock time.Time
	n     int
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := projections.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := projections.Install(ctx, pool, projections.All()); err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, pool: pool, store: New(pool), clock: time.Date(2026, 1, 2, 3, 4, 5, 678901000, time.UTC)}
}

// apply projects payload as the first event of a new stream.
func (f *fixture) apply(p projections.Projection, typ string, payload any) {
	f.t.Helper()
	data, err := json.Marshal(payload)
	if err != nil {
		f.t.Fatal(err)
	}
	f.n++
	stream := fmt.Sprintf("%s-%d", p.Name(), f.n)
	ev := events.RecordedEvent{ID: events.EventID(stream, 0), Type: typ, Data: data, Metadata: []byte(`{}`), Stream: stream,
		Position: events.NewPosition(1000, uint64(f.n))} // projections apply in global order
	ctx := context.Background()
	err = pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		if err := p.Apply(ev, b); err != nil {
			return err
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		f.t.Fatalf("apply %s: %v", typ, err)
	}
}

func (f *fixture) exec(sql string, args ...any) {
	f.t.Helper()
	if _, err := f.pool.Exec(context.Background(), sql, args...); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
}

// now returns a later time at every call: creation times differ per row.
func (f *fixture) now() time.Time {
	f.clock = f.clock.Add(time.Second)
	return f.clock
}

// address has the characters that encoding/json escapes for HTML and the
// API does not.
var address = events.Address{City: "Berlin", CountryCode: "DE", Line1: "Str 1", Line2: "Hof <2> & Garten", PostalCode: "10115", Region: "BE"}

var vat = []events.Identifier{{CountryCode: "DE", Scheme: "vat", Value: "DE123"}}

func (f *fixture) company(account, ref string) events.CompanyCreated {
	f.t.Helper()
	c := events.CompanyCreated{
		CompanyID: uuid.NewString(), AccountID: account, LegalName: "Acme SE", TradingName: "Acme", Address: address,
		DefaultCurrency: "EUR", DefaultLanguage: "de", DefaultPaymentTermsDays: 14, Email: "ar@acme.example",
		ExternalReference: ref, Identifiers: vat, CreatedAt: f.now(),
	}
	f.apply(projections.Companies{}, events.TypeCompanyCreated, c)
	return c
}

func (f *fixture) customer(account, company, ref string) events.CustomerCreated {
	f.t.Helper()
	c := events.CustomerCreated{
		CustomerID: uuid.NewString(), CompanyID: company, AccountID: account, Name: "Globex GmbH", Address: address,
		Email: "billing@globex.example", ExternalReference: ref, Identifiers: vat, CreatedAt: f.now(),
	}
	f.apply(projections.Customers{}, events.TypeCustomerCreated, c)
	return c
}

func (f *fixture) invoice(account, company, customer, ref string) events.InvoiceDrafted {
	f.t.Helper()
	d := events.InvoiceDrafted{
		InvoiceID: uuid.NewString(), CompanyID: company, AccountID: account, CustomerID: customer, CustomerName: "Globex GmbH",
		Customer: events.CustomerSnapshot{ID: customer, Name: "Globex GmbH", Address: address, Identifiers: vat, SchemaVersion: 1},
		Issuer:   events.IssuerSnapshot{ID: company, LegalName: "Acme & Co. <SE>", Address: address, Identifiers: []events.Identifier{}, SchemaVersion: 1},
		Currency: "EUR", Language: "de", IssueDate: "2026-01-02", DueDate: "2026-01-16",
		Lines: []events.InvoiceLine{{Position: 1, Description: "Work", Quantity: "1.5", Unit: "h", UnitAmountMinor: 1001,
			TaxRateBps: 1900, NetAmountMinor: 1502, TaxAmountMinor: 285, TotalAmountMinor: 1787}},
		SubtotalMinor: 1502, TaxMinor: 285, TotalMinor: 1787, ExternalReference: ref,
		PurchaseOrderReference: "PO-9", Notes: "Thanks", Terms: "Net 14", CreatedAt: f.now(),
	}
	f.apply(projections.Invoices{}, events.TypeInvoiceDrafted, d)
	return d
}

// record is what a list decides on: tenancy, filter values, archival.
type record struct {
	id, account, company, customer, ref, status string
	archived                                    bool
}

// world holds two accounts: acme with companies A and B (siblings) and
// globex with company G. Every list of acme/A is interleaved with rows of
// B and G that match the same filters, and holds one archived row.
type world struct {
	*fixture
	a, b, g                        events.CompanyCreated
	x, y                           events.CustomerCreated // customers of acme/A
	companies, customers, invoices []record
}

// refs holds exact matches of "erp-1" and near misses.
var refs = []string{"erp-1", "erp-10", "erp-1", "ERP-1", "erp-1", "erp-1 ", ""}

var statuses = []string{"draft", "issued", "void"}

// rows is the number of seeding rounds. The unfiltered invoice list of
// acme/A holds that many rows; limits 1, 2 and 7 divide it, so its last page
// is full and must still come without a next cursor.
const rows = 14

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{fixture: newFixture(t)}
	w.a, w.b, w.g = w.company("acme", ""), w.company("acme", ""), w.company("globex", "erp-1")
	w.companies = []record{{id: w.a.CompanyID, account: "acme"}, {id: w.b.CompanyID, account: "acme"},
		{id: w.g.CompanyID, account: "globex", ref: "erp-1"}}
	for i := range rows {
		w.seedRound(i)
	}
	return w
}

// seedRound adds the i-th company, customer and invoice of acme/A, each
// followed by look-alikes in the sibling company and in the other account.
func (w *world) seedRound(i int) {
	w.t.Helper()
	ref, status := refs[i%7], statuses[i%3]
	co := w.company("acme", ref)
	w.companies = append(w.companies, record{id: co.CompanyID, account: "acme", ref: ref, archived: i == 2},
		record{id: w.company("globex", "erp-1").CompanyID, account: "globex", ref: "erp-1"})
	if i == 2 {
		w.archive("companies", co.CompanyID)
	}

	cu := w.customer("acme", w.a.CompanyID, ref)
	w.customers = append(w.customers, record{id: cu.CustomerID, account: "acme", company: w.a.CompanyID, ref: ref, archived: i == 4},
		record{id: w.customer("acme", w.b.CompanyID, "erp-1").CustomerID, account: "acme", company: w.b.CompanyID, ref: "erp-1"},
		record{id: w.customer("globex", w.g.CompanyID, "erp-1").CustomerID, account: "globex", company: w.g.CompanyID, ref: "erp-1"})
	switch i {
	case 0:
		w.x = cu
	case 1:
		w.y = cu
	case 4:
		w.archive("customers", cu.CustomerID)
	}

	customer := w.y.CustomerID
	if i%2 == 0 {
		customer = w.x.CustomerID
	}
	inv := w.invoice("acme", w.a.CompanyID, customer, ref)
	if status != "draft" {
		w.exec(`UPDATE invoices SET status = $2 WHERE id = $1`, inv.InvoiceID, status)
	}
	w.invoices = append(w.invoices,
		record{id: inv.InvoiceID, account: "acme", company: w.a.CompanyID, customer: customer, ref: ref, status: status},
		record{id: w.invoice("acme", w.b.CompanyID, w.x.CustomerID, "erp-1").InvoiceID, account: "acme",
			company: w.b.CompanyID, customer: w.x.CustomerID, ref: "erp-1", status: "draft"},
		record{id: w.invoice("globex", w.g.CompanyID, w.x.CustomerID, "erp-1").InvoiceID, account: "globex",
			company: w.g.CompanyID, customer: w.x.CustomerID, ref: "erp-1", status: "draft"})
}

// archive sets archived_at as a future archive event would.
func (f *fixture) archive(table, id string) {
	f.t.Helper()
	f.exec(`UPDATE `+pgx.Identifier{table}.Sanitize()+` SET archived_at = $2 WHERE id = $1`, id, f.now())
}

// pick returns, in creation order, the ids of the active records that keep
// says a list should hold.
func pick(records []record, keep func(record) bool) []string {
	ids := []string{}
	for _, r := range records {
		if !r.archived && keep(r) {
			ids = append(ids, r.id)
		}
	}
	return ids
}

// list is one list with its filters fixed: it returns a page's ids.
type list func(PageRequest) (ids []string, next string, err error)

func ids[T any](items []T, id func(T) string) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, id(it))
	}
	return out
}

func (s *Store) companyList(account string, f CompanyFilter) list {
	return func(p PageRequest) ([]string, string, error) {
		page, err := s.Companies(context.Background(), account, f, p)
		return ids(page.Items, func(c Company) string { return c.ID }), page.NextCursor, err
	}
}

func (s *Store) customerList(account, company string, f CustomerFilter) list {
	return func(p PageRequest) ([]string, string, error) {
		page, err := s.Customers(context.Background(), account, company, f, p)
		return ids(page.Items, func(c Customer) string { return c.ID }), page.NextCursor, err
	}
}

func (s *Store) invoiceList(account, company string, f InvoiceFilter) list {
	return func(p PageRequest) ([]string, string, error) {
		page, err := s.Invoices(context.Background(), account, company, f, p)
		return ids(page.Items, func(i InvoiceSummary) string { return i.ID }), page.NextCursor, err
	}
}

// walk follows the cursors from the first page to the last, checking that
// pages are full until the last and that only the last has no cursor.
func walk(t *testing.T, l list, limit int) []string {
	t.Helper()
	var all []string
	after := ""
	for range 1000 {
		got, next, err := l(PageRequest{After: after, Limit: limit})
		if err != nil {
			t.Fatalf("page after %q: %v", after, err)
		}
		if len(got) > limit || (next != "" && len(got) != limit) || (after != "" && len(got) == 0) {
			t.Fatalf("page after %q with limit %d holds %d items, next cursor %q", after, limit, len(got), next)
		}
		all = append(all, got...)
		if next == "" {
			return all
		}
		after = next
	}
	t.Fatal("the walk did not end")
	return nil
}

func TestListsHoldExactlyTheirActiveRowsOnceInCreationOrder(t *testing.T) {
	w := newWorld(t)
	a, x, y := w.a.CompanyID, w.x.CustomerID, w.y.CustomerID
	inA := func(r record) bool { return r.account == "acme" && r.company == a }
	tests := []struct {
		name string
		list list
		want []string
	}{
		{"companies: the account's active ones, never another account's",
			w.store.companyList("acme", CompanyFilter{}), pick(w.companies, func(r record) bool { return r.account == "acme" })},
		{"companies by external_reference: exact, case- and space-sensitive",
			w.store.companyList("acme", CompanyFilter{ExternalReference: "erp-1"}),
			pick(w.companies, func(r record) bool { return r.account == "acme" && r.ref == "erp-1" })},
		{"customers: the company's active ones, never a sibling's or another account's",
			w.store.customerList("acme", a, CustomerFilter{}), pick(w.customers, inA)},
		{"customers by external_reference: exact",
			w.store.customerList("acme", a, CustomerFilter{ExternalReference: "erp-1"}),
			pick(w.customers, func(r record) bool { return inA(r) && r.ref == "erp-1" })},
		{"invoices: every status of the company, never a sibling's or another account's",
			w.store.invoiceList("acme", a, InvoiceFilter{}), pick(w.invoices, inA)},
		{"invoices by customer_id",
			w.store.invoiceList("acme", a, InvoiceFilter{CustomerID: y}),
			pick(w.invoices, func(r record) bool { return inA(r) && r.customer == y })},
		{"invoices by external_reference: exact",
			w.store.invoiceList("acme", a, InvoiceFilter{ExternalReference: "erp-1"}),
			pick(w.invoices, func(r record) bool { return inA(r) && r.ref == "erp-1" })},
		{"invoices by status",
			w.store.invoiceList("acme", a, InvoiceFilter{Status: "issued"}),
			pick(w.invoices, func(r record) bool { return inA(r) && r.status == "issued" })},
		{"invoices by every filter at once",
			w.store.invoiceList("acme", a, InvoiceFilter{CustomerID: x, ExternalReference: "erp-1", Status: "draft"}),
			pick(w.invoices, func(r record) bool {
				return inA(r) && r.customer == x && r.ref == "erp-1" && r.status == "draft"
			})},
		{"invoices of a customer of another company: none",
			w.store.invoiceList("acme", w.b.CompanyID, InvoiceFilter{CustomerID: y}), []string{}},
		{"a company of another account lists nothing",
			w.store.customerList("globex", a, CustomerFilter{}), []string{}},
	}
	for _, tt := range tests {
		for _, limit := range []int{1, 2, 7, 100} {
			t.Run(fmt.Sprintf("%s/limit %d", tt.name, limit), func(t *testing.T) {
				if got := walk(t, tt.list, limit); !slices.Equal(got, tt.want) {
					t.Fatalf("walk = %d ids %v\nwant %d ids %v", len(got), got, len(tt.want), tt.want)
				}
			})
		}
	}
}

func TestRowsAddedDuringAWalkComeOnceAtItsEnd(t *testing.T) {
	w := newWorld(t)
	l := w.store.invoiceList("acme", w.a.CompanyID, InvoiceFilter{CustomerID: w.x.CustomerID})
	first, next, err := l(PageRequest{Limit: 3})
	if err != nil || next == "" {
		t.Fatalf("first page: %v, next %q", err, next)
	}
	added := w.invoice("acme", w.a.CompanyID, w.x.CustomerID, "").InvoiceID
	rest := walk(t, func(p PageRequest) ([]string, string, error) {
		if p.After == "" {
			p.After = next
		}
		return l(p)
	}, 3)
	want := append(pick(w.invoices, func(r record) bool {
		return r.company == w.a.CompanyID && r.customer == w.x.CustomerID
	}), added)
	if got := append(first, rest...); !slices.Equal(got, want) {
		t.Fatalf("walk = %v\nwant %v", got, want)
	}
}

func TestGetFindsARecordOnlyInItsAccountAndCompany(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	a, b, g, x := w.a.CompanyID, w.b.CompanyID, w.g.CompanyID, w.x.CustomerID
	archivedCompany, archivedCustomer := w.companies[7].id, w.customers[12].id // rounds 2 and 4
	inv := w.invoices[0].id
	company := func(account, id string) func() error {
		return func() error { _, err := w.store.Company(ctx, account, id); return err }
	}
	customer := func(account, company, id string) func() error {
		return func() error { _, err := w.store.Customer(ctx, account, company, id); return err }
	}
	invoice := func(account, company, id string) func() error {
		return func() error { _, err := w.store.Invoice(ctx, account, company, id); return err }
	}
	tests := []struct {
		name string
		get  func() error
		want error
	}{
		{"a company is found in its account", company("acme", a), nil},
		{"an archived company is still found", company("acme", archivedCompany), nil},
		{"a company of another account is not found", company("globex", a), events.ErrNotFound},
		{"an unknown company is not found", company("acme", uuid.NewString()), events.ErrNotFound},
		{"a customer is found in its account and company", customer("acme", a, x), nil},
		{"an archived customer is still found", customer("acme", a, archivedCustomer), nil},
		{"a customer under a sibling company of its account is not found", customer("acme", b, x), events.ErrNotFound},
		{"a customer under its company id but another account is not found", customer("globex", a, x), events.ErrNotFound},
		{"a customer under another account's company is not found", customer("globex", g, x), events.ErrNotFound},
		{"an unknown customer is not found", customer("acme", a, uuid.NewString()), events.ErrNotFound},
		{"an invoice id is not a customer id", customer("acme", a, inv), events.ErrNotFound},
		{"an invoice is found in its account and company", invoice("acme", a, inv), nil},
		{"an invoice under a sibling company of its account is not found", invoice("acme", b, inv), events.ErrNotFound},
		{"an invoice under its company id but another account is not found", invoice("globex", a, inv), events.ErrNotFound},
		{"an invoice under another account's company is not found", invoice("globex", g, inv), events.ErrNotFound},
		{"an unknown invoice is not found", invoice("acme", a, uuid.NewString()), events.ErrNotFound},
		{"a company by its id in braces is not found", company("acme", "{"+a+"}"), events.ErrNotFound},
		{"a customer by its id as a URN is not found", customer("acme", a, "urn:uuid:"+x), events.ErrNotFound},
		{"an invoice by its id without hyphens is not found", invoice("acme", a, strings.ReplaceAll(inv, "-", "")), events.ErrNotFound},
	}
	if !w.companies[7].archived || !w.customers[12].archived {
		t.Fatal("setup: the archived records moved")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.get(); !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

// inUTC puts times read from PostgreSQL (local zone) in UTC, as events are.
func inUTC(times ...*time.Time) {
	for _, t := range times {
		if t != nil {
			*t = t.UTC()
		}
	}
}

// CompanyAndCustomer reads in one round trip what Company and Customer
// read in two, with the same owners: a new invoice's parties never come
// from another account or another company.
func TestCompanyAndCustomerReadWhatTheirTwoGetsRead(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	a, b, g, x := w.a.CompanyID, w.b.CompanyID, w.g.CompanyID, w.x.CustomerID
	archivedCompany, archivedCustomer := w.companies[7].id, w.customers[12].id
	tests := []struct{ name, account, company, customer string }{
		{"a company and its customer", "acme", a, x},
		{"a company and its archived customer", "acme", a, archivedCustomer},
		{"an archived company", "acme", archivedCompany, x},
		{"a customer of a sibling company", "acme", b, x},
		{"a company of another account", "globex", a, x},
		{"another account's company and a customer of ours", "globex", g, x},
		{"an unknown customer", "acme", a, uuid.NewString()},
		{"an invoice id as the customer", "acme", a, w.invoices[0].id},
		{"a customer id as a URN", "acme", a, "urn:uuid:" + x},
		{"a company id in braces", "acme", "{" + a + "}", x},
		{"an unknown company", "acme", uuid.NewString(), x},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantCompany, companyErr := w.store.Company(ctx, tt.account, tt.company)
			var wantCustomer *Customer
			if c, err := w.store.Customer(ctx, tt.account, tt.company, tt.customer); err == nil {
				wantCustomer = &c
			} else if !errors.Is(err, events.ErrNotFound) {
				t.Fatal(err)
			}
			gotCompany, gotCustomer, err := w.store.CompanyAndCustomer(ctx, tt.account, tt.company, tt.customer)
			if !errors.Is(err, companyErr) || (companyErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v (Company's)", err, companyErr)
			}
			if companyErr != nil {
				wantCustomer = nil // the company's miss is the answer
			}
			if !reflect.DeepEqual(gotCompany, wantCompany) || !reflect.DeepEqual(gotCustomer, wantCustomer) {
				t.Errorf("CompanyAndCustomer = %+v, %+v\nwant %+v, %+v", gotCompany, gotCustomer, wantCompany, wantCustomer)
			}
		})
	}
	t.Run("a failed read is not a miss", func(t *testing.T) {
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if _, _, err := w.store.CompanyAndCustomer(cancelled, "acme", a, x); err == nil || errors.Is(err, events.ErrNotFound) {
			t.Fatalf("err = %v, want the read's failure", err)
		}
	})
}

func TestGetReadsBackEveryColumnOfACompanyAndACustomer(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	c := f.company("acme", "erp-1")
	gotCompany, err := f.store.Company(ctx, "acme", c.CompanyID)
	if err != nil {
		t.Fatal(err)
	}
	inUTC(&gotCompany.CreatedAt, &gotCompany.UpdatedAt)
	wantCompany := Company{ID: c.CompanyID, LegalName: c.LegalName, TradingName: c.TradingName, Address: rendered(t, c.Address),
		DefaultCurrency: c.DefaultCurrency, DefaultLanguage: c.DefaultLanguage, DefaultPaymentTermsDays: c.DefaultPaymentTermsDays,
		Email: c.Email, ExternalReference: c.ExternalReference, Identifiers: rendered(t, c.Identifiers),
		CreditNoteNumberPrefix: c.CreditNotePrefix(), CreatedAt: c.CreatedAt, UpdatedAt: c.CreatedAt, Version: 1}
	if !reflect.DeepEqual(gotCompany, wantCompany) {
		t.Errorf("Company:\nwant %+v\ngot  %+v", wantCompany, gotCompany)
	}

	cu := f.customer("acme", c.CompanyID, "crm-7")
	gotCustomer, err := f.store.Customer(ctx, "acme", c.CompanyID, cu.CustomerID)
	if err != nil {
		t.Fatal(err)
	}
	inUTC(&gotCustomer.CreatedAt, &gotCustomer.UpdatedAt)
	wantCustomer := Customer{ID: cu.CustomerID, CompanyID: c.CompanyID, Name: cu.Name, Address: rendered(t, cu.Address), Email: cu.Email,
		ExternalReference: cu.ExternalReference, Identifiers: rendered(t, cu.Identifiers), CreatedAt: cu.CreatedAt, UpdatedAt: cu.CreatedAt, Version: 1}
	if !reflect.DeepEqual(gotCustomer, wantCustomer) {
		t.Errorf("Customer:\nwant %+v\ngot  %+v", wantCustomer, gotCustomer)
	}

	f.apply(projections.Customers{}, events.TypeCustomerCreated, events.CustomerCreated{CustomerID: uuid.NewString(),
		CompanyID: c.CompanyID, AccountID: "acme", Name: "No ids", Address: address, CreatedAt: f.now()})
	page, err := f.store.Customers(ctx, "acme", c.CompanyID, CustomerFilter{}, PageRequest{Limit: 2})
	if err != nil || len(page.Items) != 2 {
		t.Fatalf("customers = %+v, %v; want 2", page, err)
	}
	if ids := string(page.Items[1].Identifiers); ids != "[]" {
		t.Errorf("a customer without identifiers reads %s, want []", ids)
	}
}

func TestGetAndListReadBackEveryColumnOfAnInvoice(t *testing.T) {
	f := newFixture(t)
	draft := f.invoice("acme", uuid.NewString(), uuid.NewString(), "erp-1")
	voided := f.invoice("acme", draft.CompanyID, draft.CustomerID, "")
	issuedAt, voidedAt := f.now(), f.now()
	f.exec(`UPDATE invoices SET status = 'void', number = 'INV-7', issued_at = $2, void_reason = 'duplicate',
		voided_at = $3, updated_at = $3, version = 3, due_date = NULL WHERE id = $1`, voided.InvoiceID, issuedAt, voidedAt)

	full := func(d events.InvoiceDrafted) Invoice {
		d = asRead(t, d)
		return Invoice{
			InvoiceSummary: InvoiceSummary{ID: d.InvoiceID, CompanyID: d.CompanyID, CustomerID: d.CustomerID,
				CustomerName: d.CustomerName, Currency: d.Currency, IssueDate: d.IssueDate, DueDate: &d.DueDate,
				Status: "draft", SubtotalMinor: d.SubtotalMinor, TaxMinor: d.TaxMinor, TotalMinor: d.TotalMinor,
				AmountDueMinor: d.TotalMinor, PaymentStatus: events.PaymentUnpaid,
				CreatedAt: d.CreatedAt, UpdatedAt: d.CreatedAt, Version: 1, ExternalReference: d.ExternalReference},
			Customer: rendered(t, d.Customer), Issuer: rendered(t, d.Issuer), Language: d.Language, Lines: rendered(t, d.Lines),
			PurchaseOrderReference: d.PurchaseOrderReference, Notes: d.Notes, Terms: d.Terms,
			Document: rendered(t, d.DocumentFields()), Payments: []Payment{},
		}
	}
	wantVoided := full(voided)
	number, reason := "INV-7", "duplicate"
	wantVoided.Status, wantVoided.Number, wantVoided.IssuedAt, wantVoided.VoidReason, wantVoided.VoidedAt = "void", &number, &issuedAt, &reason, &voidedAt
	wantVoided.UpdatedAt, wantVoided.Version, wantVoided.DueDate = voidedAt, 3, nil
	want := []Invoice{full(draft), wantVoided}

	page, err := f.store.Invoices(context.Background(), "acme", draft.CompanyID, InvoiceFilter{}, PageRequest{Limit: 10})
	if err != nil || len(page.Items) != 2 {
		t.Fatalf("list = %d items, %v; want 2", len(page.Items), err)
	}
	for i, w := range want {
		got, err := f.store.Invoice(context.Background(), "acme", w.CompanyID, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		summary := page.Items[i]
		for _, s := range []*InvoiceSummary{&got.InvoiceSummary, &summary} {
			inUTC(&s.CreatedAt, &s.UpdatedAt, s.IssuedAt, s.VoidedAt)
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("Invoice %s:\nwant %+v\ngot  %+v", w.Status, w, got)
		}
		if !reflect.DeepEqual(summary, w.InvoiceSummary) {
			t.Errorf("list summary %s:\nwant %+v\ngot  %+v", w.Status, w.InvoiceSummary, summary)
		}
	}
}

// TestAnInvoicesPaymentsAreReadInItsRowsSnapshot: the GET reads an
// invoice's payments through invoice_payments_json (paymentsColumn), which
// must be STABLE. PostgreSQL runs a STABLE function's statements in the
// snapshot of the statement that calls it; a VOLATILE one (the default
// when a function says nothing) takes a new snapshot for each, and could
// list a payment that committed after the row was read, so that the
// payments no longer add up to its amount_paid_minor.
func TestAnInvoicesPaymentsAreReadInItsRowsSnapshot(t *testing.T) {
	f := newFixture(t)
	var volatility string
	err := f.pool.QueryRow(context.Background(),
		`SELECT provolatile::text FROM pg_proc WHERE oid = 'invoice_payments_json(uuid)'::regprocedure`).Scan(&volatility)
	if err != nil {
		t.Fatal(err)
	}
	if volatility != "s" {
		t.Fatalf("invoice_payments_json's volatility is %q, want s (STABLE)", volatility)
	}
}

// asRead is d as a reader of the log sees it: with the defaults of the
// fields its fixture leaves out (unit_code, tax_category, tax_breakdown).
func asRead(t *testing.T, d events.InvoiceDrafted) events.InvoiceDrafted {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var out events.InvoiceDrafted
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// rendered is v as the API renders it, which the invoices read model
// stores: encoding/json without HTML escaping.
func rendered(t *testing.T, v any) json.RawMessage {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// cursorOf returns the cursor after the first row of l.
func cursorOf(t *testing.T, l list) string {
	t.Helper()
	_, next, err := l(PageRequest{Limit: 1})
	if err != nil || next == "" {
		t.Fatalf("setup: first page: %v, next cursor %q", err, next)
	}
	return next
}

func TestACursorWorksOnlyOnTheListAndFiltersThatIssuedIt(t *testing.T) {
	w := newWorld(t)
	s, a, b := w.store, w.a.CompanyID, w.b.CompanyID
	x, y := w.x.CustomerID, w.y.CustomerID
	companies := s.companyList("acme", CompanyFilter{})
	customers := s.customerList("acme", a, CustomerFilter{})
	invoices := s.invoiceList("acme", a, InvoiceFilter{})
	byCustomer := s.invoiceList("acme", a, InvoiceFilter{CustomerID: x})
	tests := []struct {
		name     string
		from, on list
		want     error
	}{
		{"the same list takes it", byCustomer, s.invoiceList("acme", a, InvoiceFilter{CustomerID: x}), nil},
		{"companies of another account", companies, s.companyList("globex", CompanyFilter{}), ErrInvalidCursor},
		{"companies under a filter", companies, s.companyList("acme", CompanyFilter{ExternalReference: "erp-1"}), ErrInvalidCursor},
		{"companies under another filter value", s.companyList("acme", CompanyFilter{ExternalReference: "erp-1"}),
			s.companyList("acme", CompanyFilter{ExternalReference: "erp-10"}), ErrInvalidCursor},
		{"customers of a sibling company", customers, s.customerList("acme", b, CustomerFilter{}), ErrInvalidCursor},
		{"customers of another account", customers, s.customerList("globex", a, CustomerFilter{}), ErrInvalidCursor},
		{"customers without the filter", s.customerList("acme", a, CustomerFilter{ExternalReference: "erp-1"}), customers, ErrInvalidCursor},
		{"invoices of a sibling company", invoices, s.invoiceList("acme", b, InvoiceFilter{}), ErrInvalidCursor},
		{"invoices of another customer", byCustomer, s.invoiceList("acme", a, InvoiceFilter{CustomerID: y}), ErrInvalidCursor},
		{"invoices without the filter", byCustomer, invoices, ErrInvalidCursor},
		{"invoices with one more filter", byCustomer, s.invoiceList("acme", a, InvoiceFilter{CustomerID: x, Status: "draft"}), ErrInvalidCursor},
		{"invoices with the value moved to another filter", byCustomer,
			s.invoiceList("acme", a, InvoiceFilter{ExternalReference: x}), ErrInvalidCursor},
		{"the customers list, from the invoices list", invoices, customers, ErrInvalidCursor},
		{"the invoices list, from the customers list", customers, invoices, ErrInvalidCursor},
		{"the customers list, from the companies list", companies, customers, ErrInvalidCursor},
		{"the companies list, from the customers list", customers, companies, ErrInvalidCursor},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			after := cursorOf(t, tt.from)
			if _, _, err := tt.on(PageRequest{After: after, Limit: 5}); !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestATamperedCursorIsInvalid(t *testing.T) {
	w := newWorld(t)
	l := w.store.customerList("acme", w.a.CompanyID, CustomerFilter{ExternalReference: "erp-1"})
	good := cursorOf(t, l)
	sc := scope("customers", "acme", w.a.CompanyID, "erp-1")
	signed := func(version byte, hi uint64) string {
		body := append([]byte{version}, binary.BigEndian.AppendUint64(nil, hi)...)
		body = binary.BigEndian.AppendUint64(body, 1)
		return base64.RawURLEncoding.EncodeToString(append(body, cursorCheck(sc, body)...))
	}
	if _, _, err := l(PageRequest{After: signed(cursorVersion, 1), Limit: 1}); err != nil {
		t.Fatalf("setup: a cursor signed like the list's own is refused: %v", err)
	}
	tampered := map[string]string{
		"truncated":                    good[:len(good)-1],
		"extended":                     good + "A",
		"padded":                       good + "=",
		"outside base64url":            "!" + good[1:],
		"standard base64 alphabet":     "+/" + good[2:],
		"an unknown version, checked":  signed(cursorVersion+1, 1),
		"a negative position, checked": signed(cursorVersion, 1<<63),
		"base64url of something else":  base64.RawURLEncoding.EncodeToString([]byte("not a cursor at all")),
	}
	for i := range good { // every character: no bit of the cursor goes unchecked
		c := []byte(good)
		if c[i] == 'A' {
			c[i] = 'B'
		} else {
			c[i] = 'A'
		}
		tampered[fmt.Sprintf("character %d changed", i)] = string(c)
	}
	for name, after := range tampered {
		t.Run(name, func(t *testing.T) {
			if _, _, err := l(PageRequest{After: after, Limit: 1}); !errors.Is(err, ErrInvalidCursor) {
				t.Fatalf("cursor %q: err = %v, want ErrInvalidCursor", after, err)
			}
		})
	}
}
