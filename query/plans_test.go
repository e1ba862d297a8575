package query

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/pgtest"
)

// The read-model tables of the plan test: planInvoices invoices, most of
// them in two companies of one account (planBig, planIssued), the rest over
// the other companies; see loadPlanData.
const (
	planCompanies = 2_000
	planCustomers = 20_000
	planInvoices  = 200_000
)

// The generated rows' ids: the row's number and its table's.
const (
	planCompany = iota + 1
	planCustomer
	planInvoice
	planCreditNote
	planPayment
	planEvent
)

func planID(table, n int) string {
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", n, table)
}

// planIDExpr is planID in SQL, of the integer expression n.
func planIDExpr(table int, n string) string {
	return fmt.Sprintf(`(lpad(to_hex(%s), 8, '0') || '-0000-4000-8000-' || lpad(to_hex(%d), 12, '0'))::uuid`, n, table)
}

// The companies of the skew: planBig (account acme) holds 70% of the
// invoices, half of them for one customer (customer 1) and nearly all of
// them drafts; planIssued (acme too) 20%, every one issued; planSmall, an
// account's single company, a few.
const (
	planBig    = 1
	planIssued = 2
	planSmall  = 1_500
)

// loadPlanData fills the read models straight from generate_series, without
// ANALYZE and with autovacuum off, so that the planner sees the tables as
// a freshly rebuilt projection leaves them.
func loadPlanData(t *testing.T, f *fixture) {
	t.Helper()
	for _, table := range []string{"companies", "customers", "invoices", "invoice_payments", "credit_notes", "public_events"} {
		f.exec(`ALTER TABLE ` + table + ` SET (autovacuum_enabled = off)`)
	}
	docs := events.InvoiceDrafted{
		Customer: events.CustomerSnapshot{ID: planID(planCustomer, 1), Name: "Globex GmbH", Address: address, Identifiers: vat, SchemaVersion: 1},
		Issuer:   events.IssuerSnapshot{ID: planID(planCompany, 1), LegalName: "Acme SE", Address: address, Identifiers: vat, SchemaVersion: 1},
		Lines: []events.InvoiceLine{{Position: 1, Description: "Work", Quantity: "1.5", Unit: "h", UnitAmountMinor: 1001,
			TaxRateBps: 1900, NetAmountMinor: 1502, TaxAmountMinor: 285, TotalAmountMinor: 1787}},
	}
	addr, ids := rendered(t, address), rendered(t, vat)
	// acme holds the first 1,000 companies; every other company is its
	// account's only one. 1 in 100 has a reference, 1 in 50 is archived.
	f.exec(fmt.Sprintf(`INSERT INTO companies (position_hi, position_lo, id, account_id, stream_name, legal_name,
			address, default_currency, default_language, default_payment_terms_days, external_reference,
			identifiers, invoice_number_prefix, credit_note_number_prefix, archived_at, created_at, updated_at, version)
		SELECT i / 100, i, %s, CASE WHEN i <= 1000 THEN 'acme' ELSE 'account-' || i END, 'company-' || i, 'Co ' || i,
			$1, 'EUR', 'de', 14, CASE WHEN i %% 100 = 42 THEN 'ref-' || i END,
			$2, 'INV-', 'CN-', CASE WHEN i %% 50 = 7 THEN now() END, now(), now(), 1
		FROM generate_series(1, %d) AS i`, planIDExpr(planCompany, "i"), planCompanies), addr, ids)
	// Half of the customers belong to planBig, a quarter to planIssued.
	f.exec(fmt.Sprintf(`INSERT INTO customers (position_hi, position_lo, id, company_id, account_id, stream_name, name,
			address, external_reference, identifiers, archived_at, created_at, updated_at, version)
		SELECT i / 100, i, %s, %s, CASE WHEN c <= 1000 THEN 'acme' ELSE 'account-' || c END, 'customer-' || i, 'Cu ' || i,
			$1, CASE WHEN i %% 100 = 42 THEN 'ref-' || i END, $2, CASE WHEN i %% 50 = 7 THEN now() END, now(), now(), 1
		FROM generate_series(1, %d) AS i,
			LATERAL (SELECT CASE WHEN i <= %d THEN %d WHEN i <= %d THEN %d ELSE 3 + i %% %d END AS c) AS company`,
		planIDExpr(planCustomer, "i"), planIDExpr(planCompany, "c"), planCustomers,
		planCustomers/2, planBig, planCustomers*3/4, planIssued, planCompanies-2), addr, ids)
	f.exec(fmt.Sprintf(`INSERT INTO invoices (position_hi, position_lo, id, company_id, account_id, customer_id, stream_name,
			customer_name, customer, issuer, currency, language, issue_date, status, lines,
			subtotal_minor, tax_minor, total_minor, external_reference, created_at, updated_at, version, document,
			amount_credited_minor, amount_paid_minor, amount_due_minor, amount_refundable_minor, payment_status, has_payments)
		SELECT i / 100, i, %s, %s, CASE WHEN c <= 1000 THEN 'acme' ELSE 'account-' || c END, %s, 'invoice-' || i,
			'Cu', $1, $2, 'EUR', 'de', '2026-01-02',
			CASE WHEN c = %d THEN 'issued' WHEN i %% 100 < 95 THEN 'draft' WHEN i %% 100 < 99 THEN 'issued' ELSE 'void' END,
			$3, 1502, 285, 1787, CASE WHEN i %% 100 = 42 THEN 'ref-' || i END, now(), now(), 1, '{"tax_breakdown":[]}',
			0, 0, 1787, 0, CASE WHEN i %% 100 = 97 THEN 'paid' WHEN i %% 100 = 98 THEN 'partially_paid' ELSE 'unpaid' END,
			i %% 100 IN (97, 98)
		FROM generate_series(1, %d) AS i,
			LATERAL (SELECT CASE WHEN i %% 10 < 7 THEN %d WHEN i %% 10 < 9 THEN %d ELSE 3 + i %% %d END AS c) AS company,
			LATERAL (SELECT CASE WHEN c = %d AND i %% 2 = 0 THEN 1 WHEN c = %d THEN 1 + i %% %d
				WHEN c = %d THEN %d + i %% %d ELSE %d + i %% %d END AS k) AS customer`,
		planIDExpr(planInvoice, "i"), planIDExpr(planCompany, "c"), planIDExpr(planCustomer, "k"), planIssued, planInvoices,
		planBig, planIssued, planCompanies-2,
		planBig, planBig, planCustomers/2,
		planIssued, planCustomers/2+1, planCustomers/4, planCustomers*3/4+1, planCustomers/4),
		rendered(t, docs.Customer), rendered(t, docs.Issuer), rendered(t, docs.Lines))
	// Two payments of every invoice that has some (those partially paid
	// or paid), and a credit note of every seventh invoice, in its
	// company, half of planBig's on one invoice (7) of the big customer.
	f.exec(fmt.Sprintf(`INSERT INTO invoice_payments (position_hi, position_lo, id, invoice_id, amount_minor, paid_on, recorded_at)
		SELECT i / 100, i * 2 + k, %s, %s, 500, '2026-01-03', now()
		FROM generate_series(1, %d) AS i, generate_series(0, 1) AS k WHERE i %% 100 IN (97, 98)`,
		planIDExpr(planPayment, "i * 2 + k"), planIDExpr(planInvoice, "i"), planInvoices))
	f.exec(fmt.Sprintf(`INSERT INTO credit_notes (position_hi, position_lo, id, company_id, account_id, invoice_id, customer_id,
			stream_name, invoice_number, invoice_issue_date, number, sequence, issue_date, reason, external_reference,
			customer_name, customer, issuer, currency, language, lines, subtotal_minor, tax_minor, total_minor,
			document, issued_at, version)
		SELECT i / 100, i, %s, %s, CASE WHEN c <= 1000 THEN 'acme' ELSE 'account-' || c END,
			%s, %s, 'invoice-' || i, 'INV-' || i, '2026-01-02', 'CN-' || i, i, '2026-01-03', 'Storno',
			CASE WHEN i %% 100 = 42 THEN 'ref-' || i END, 'Cu', $1, $2, 'EUR', 'de', $3, 1502, 285, 1787,
			'{"tax_breakdown":[]}', now(), 1
		FROM generate_series(7, %d, 7) AS i,
			LATERAL (SELECT CASE WHEN i %% 10 < 7 THEN %d WHEN i %% 10 < 9 THEN %d ELSE 3 + i %% %d END AS c) AS company,
			LATERAL (SELECT CASE WHEN c = %d AND i %% 2 = 0 THEN 7 ELSE i END AS n) AS invoice,
			LATERAL (SELECT CASE WHEN c = %d AND i %% 2 = 0 THEN 1 WHEN c = %d THEN 1 + i %% %d
				WHEN c = %d THEN %d + i %% %d ELSE %d + i %% %d END AS k) AS customer`,
		planIDExpr(planCreditNote, "i"), planIDExpr(planCompany, "c"), planIDExpr(planInvoice, "n"), planIDExpr(planCustomer, "k"),
		planInvoices, planBig, planIssued, planCompanies-2, planBig,
		planBig, planBig, planCustomers/2,
		planIssued, planCustomers/2+1, planCustomers/4, planCustomers*3/4+1, planCustomers/4),
		rendered(t, docs.Customer), rendered(t, docs.Issuer), rendered(t, docs.Lines))
	loadPlanEvents(f)
}

// loadPlanEvents indexes an event of every invoice in the feed, in its
// company, 2,000 of planBig's on one invoice (7), nearly all of them
// invoice.drafted, a few invoice.issued and fewer company.archived.
func loadPlanEvents(f *fixture) {
	f.exec(fmt.Sprintf(`INSERT INTO public_events (position_hi, position_lo, id, account_id, company_id, resource_id, type,
			stream_name, revision, created_at, version)
		SELECT i / 100, i, %s, CASE WHEN c <= 1000 THEN 'acme' ELSE 'account-' || c END, %s, %s,
			CASE WHEN i %% 100 < 90 THEN 'invoice.drafted' WHEN i %% 100 < 99 THEN 'invoice.issued' ELSE 'company.archived' END,
			'invoice-' || n, 0, now(), 1
		FROM generate_series(1, %d) AS i,
			LATERAL (SELECT CASE WHEN i %% 10 < 7 THEN %d WHEN i %% 10 < 9 THEN %d ELSE 3 + i %% %d END AS c) AS company,
			LATERAL (SELECT CASE WHEN c = %d AND i %% 100 = 0 THEN 7 ELSE i END AS n) AS invoice`,
		planIDExpr(planEvent, "i"), planIDExpr(planCompany, "c"), planIDExpr(planInvoice, "n"),
		planInvoices, planBig, planIssued, planCompanies-2, planBig))
}

// planCase is one statement of the query package and the index it must be
// read through.
type planCase struct {
	name, index string
	st          statement
	list        bool // a page: the index condition must hold the cursor
	// archived: a list of archived records, which the planner may read as
	// a bitmap scan of the list's own index from the cursor on, then sort
	// what it found, when it expects fewer rows than a page (archived
	// records are a few of an account's). The scan is the list's index
	// alone and starts at the cursor; with more rows expected the planner
	// walks the index in order, as for the other lists.
	archived bool
	// also is the index of a subquery's scan besides index's: the list by
	// customer reads a void invoice's reason (byCustomerFields).
	also string
	// calls is the index that the one statement of the function the
	// statement calls reads: the full invoice's payments
	// (paymentsColumn), whose plan EXPLAIN does not show.
	calls string
	// indexOnly: the rows come from the index alone, never the table
	// (invoices_by_customer holds the list's columns).
	indexOnly bool
	// account: all of an account's rows in the index's order (no page),
	// read by the account alone.
	account bool
}

// planCases lists every statement the package issues: the gets by id
// (companies and customers serve the command side's directory too), and
// each list with each filter and combination, on a big, a skewed, a small
// and an unknown company, from the first page, the middle and the end.
func planCases() []planCase {
	const acme = "acme"
	big, issued, small := planID(planCompany, planBig), planID(planCompany, planIssued), planID(planCompany, planSmall)
	smallAccount := fmt.Sprintf("account-%d", planSmall)
	unknown := planID(planCompany, planCompanies+1)
	whale, someCustomer := planID(planCustomer, 1), planID(planCustomer, 4242)
	cases := []planCase{
		{name: "company by id", index: "companies_pkey", st: companyByID(acme, big)},
		{name: "customer by id", index: "customers_pkey", st: customerByID(acme, big, whale)},
		{name: "invoice by id", index: "invoices_pkey", st: invoiceByID(acme, big, planID(planInvoice, 10))},
		{name: "invoice with payments by id", index: "invoices_pkey", calls: "invoice_payments_by_invoice", st: invoiceByID(acme, issued, planID(planInvoice, 97))},
		{name: "invoice by id, another company", index: "invoices_pkey", st: invoiceByID(acme, issued, planID(planInvoice, 10))},
		{name: "credit note by id", index: "credit_notes_pkey", st: creditNoteByID(acme, big, planID(planCreditNote, 14))},
		{name: "invoice stream by id", index: "invoices_pkey", st: invoiceStreamByID(acme, big, planID(planInvoice, 10))},
		{name: "company stream by id", index: "companies_pkey", st: companyStreamByID(acme, big)},
		{name: "customer stream by id", index: "customers_pkey", st: customerStreamByID(acme, big, whale)},
		{name: "event by id", index: "public_events_pkey", st: eventByID(acme, planID(planEvent, 14))},
		{name: "webhook endpoint by id", index: "webhook_endpoints_pkey", st: webhookEndpointByID(acme, big)},
		{name: "webhook endpoint stream by id", index: "webhook_endpoints_pkey", st: webhookEndpointStreamByID(acme, big)},
		{name: "enabled webhook endpoints of an account", index: "webhook_endpoints_enabled_by_account", st: webhookEndpointsFor(acme), account: true},
	}
	cursors := map[string]rowKey{
		"first page": {},
		"middle":     {hi: planInvoices / 2 / 100, lo: planInvoices / 2},
		"end":        {hi: planInvoices / 100, lo: planInvoices},
	}
	addWith := func(name, index, also string, l listing) {
		for at, after := range cursors {
			cases = append(cases, planCase{name: name + ", " + at, index: index, also: also, st: l.page(after, MaxLimit), list: true,
				archived: strings.Contains(index, "_archived_"), indexOnly: index == "invoices_by_customer"})
		}
	}
	add := func(name, index string, l listing) { addWith(name, index, "", l) }
	add("webhook endpoints", "webhook_endpoints_by_account", webhookEndpointList(acme))
	add("companies", "companies_active_by_account", companyList(acme, CompanyFilter{}))
	add("companies of a one-company account", "companies_active_by_account", companyList(smallAccount, CompanyFilter{}))
	add("companies of an unknown account", "companies_active_by_account", companyList("nobody", CompanyFilter{}))
	add("companies by reference", "companies_active_by_reference", companyList(acme, CompanyFilter{ExternalReference: "ref-42"}))
	add("archived companies", "companies_archived_by_account", companyList(acme, CompanyFilter{Archived: true}))
	add("archived companies of an unknown account", "companies_archived_by_account", companyList("nobody", CompanyFilter{Archived: true}))
	add("archived companies by reference", "companies_archived_by_reference",
		companyList(acme, CompanyFilter{ExternalReference: "ref-42", Archived: true}))
	for name, account := range map[string]string{"acme": acme, "a one-company account": smallAccount, "an unknown account": "nobody"} {
		add("events of "+name, "public_events_by_account", eventList(account, EventFilter{}))
		for _, typ := range []string{"invoice.drafted", "invoice.issued", "company.archived", "customer.created"} {
			add("events of "+name+" by type "+typ, "public_events_by_type", eventList(account, EventFilter{Type: typ}))
		}
		add("events of "+name+" of the big invoice", "public_events_by_resource", eventList(account, EventFilter{ResourceID: planID(planInvoice, 7)}))
		add("events of "+name+" of an invoice", "public_events_by_resource", eventList(account, EventFilter{ResourceID: planID(planInvoice, 4243)}))
	}
	for name, company := range map[string]string{"big": big, "all issued": issued, "small": small, "unknown": unknown} {
		account := acme
		if company == small {
			account = smallAccount
		}
		events := func(filter string, f EventFilter, index string) {
			f.CompanyID = company
			add("events of the "+name+" company"+filter, index, eventList(account, f))
		}
		// A resource's events and another company: nothing is found, and
		// the planner, expecting a few rows, may read them as an archived
		// list's (a bitmap scan of the resource's index from the cursor,
		// then a sort of those few).
		fewEvents := func(filter string, f EventFilter) {
			f.CompanyID = company
			for at, after := range cursors {
				cases = append(cases, planCase{name: "events of the " + name + " company" + filter + ", " + at,
					index: "public_events_by_resource", st: eventList(account, f).page(after, MaxLimit), list: true, archived: true})
			}
		}
		events("", EventFilter{}, "public_events_by_company")
		events(" by type", EventFilter{Type: "invoice.issued"}, "public_events_by_company")
		if company == big {
			events(" of the big invoice", EventFilter{ResourceID: planID(planInvoice, 7)}, "public_events_by_resource")
			events(" by every filter", EventFilter{ResourceID: planID(planInvoice, 7), Type: "invoice.drafted"}, "public_events_by_resource")
		} else {
			fewEvents(" of the big invoice", EventFilter{ResourceID: planID(planInvoice, 7)})
			fewEvents(" by every filter", EventFilter{ResourceID: planID(planInvoice, 7), Type: "invoice.drafted"})
		}
	}
	for name, company := range map[string]string{"big": big, "all issued": issued, "small": small, "unknown": unknown} {
		account := acme
		if company == small {
			account = smallAccount
		}
		add("customers of the "+name+" company", "customers_active_by_company", customerList(account, company, CustomerFilter{}))
		add("customers by reference, "+name, "customers_active_by_reference",
			customerList(account, company, CustomerFilter{ExternalReference: "ref-4242"}))
		add("archived customers of the "+name+" company", "customers_archived_by_company",
			customerList(account, company, CustomerFilter{Archived: true}))
		add("archived customers by reference, "+name, "customers_archived_by_reference",
			customerList(account, company, CustomerFilter{ExternalReference: "ref-4242", Archived: true}))
		invoices := func(filter string, f InvoiceFilter, index string) {
			also := ""
			if index == "invoices_by_customer" {
				also = "invoices_pkey"
			}
			addWith("invoices of the "+name+" company"+filter, index, also, invoiceList(account, company, f))
		}
		invoices("", InvoiceFilter{}, "invoices_by_company")
		invoices(" by the big customer", InvoiceFilter{CustomerID: whale}, "invoices_by_customer")
		invoices(" by a customer", InvoiceFilter{CustomerID: someCustomer}, "invoices_by_customer")
		invoices(" by reference", InvoiceFilter{ExternalReference: "ref-4242"}, "invoices_by_reference")
		for _, status := range []string{"draft", "issued", "void"} {
			invoices(" by status "+status, InvoiceFilter{Status: status}, "invoices_by_status")
			invoices(" by customer and status "+status, InvoiceFilter{CustomerID: whale, Status: status}, "invoices_by_customer")
			invoices(" by reference and status "+status, InvoiceFilter{ExternalReference: "ref-42", Status: status}, "invoices_by_reference")
		}
		invoices(" by reference and customer", InvoiceFilter{ExternalReference: "ref-42", CustomerID: whale}, "invoices_by_reference")
		invoices(" by every filter", InvoiceFilter{CustomerID: whale, ExternalReference: "ref-42", Status: "draft"}, "invoices_by_reference")
		for _, ps := range events.PaymentStatuses {
			invoices(" by payment status "+ps, InvoiceFilter{PaymentStatus: ps}, "invoices_by_payment_status")
			invoices(" by status and payment status "+ps, InvoiceFilter{Status: "issued", PaymentStatus: ps}, "invoices_by_status")
			invoices(" by customer and payment status "+ps, InvoiceFilter{CustomerID: whale, PaymentStatus: ps}, "invoices_by_customer")
			invoices(" by reference and payment status "+ps, InvoiceFilter{ExternalReference: "ref-42", PaymentStatus: ps}, "invoices_by_reference")
		}
		creditNotes := func(filter string, f CreditNoteFilter, index string) {
			add("credit notes of the "+name+" company"+filter, index, creditNoteList(account, company, f))
		}
		creditNotes("", CreditNoteFilter{}, "credit_notes_by_company")
		creditNotes(" of the big invoice", CreditNoteFilter{InvoiceID: planID(planInvoice, 7)}, "credit_notes_by_invoice")
		creditNotes(" of an invoice", CreditNoteFilter{InvoiceID: planID(planInvoice, 4242)}, "credit_notes_by_invoice")
		creditNotes(" by the big customer", CreditNoteFilter{CustomerID: whale}, "credit_notes_by_customer")
		creditNotes(" by a customer", CreditNoteFilter{CustomerID: someCustomer}, "credit_notes_by_customer")
		creditNotes(" by reference", CreditNoteFilter{ExternalReference: "ref-42"}, "credit_notes_by_reference")
		creditNotes(" by invoice and customer", CreditNoteFilter{InvoiceID: planID(planInvoice, 7), CustomerID: whale}, "credit_notes_by_invoice")
		creditNotes(" by every filter", CreditNoteFilter{InvoiceID: planID(planInvoice, 7), CustomerID: whale, ExternalReference: "ref-42"},
			"credit_notes_by_reference")
	}
	return cases
}

func TestEveryReadModelQueryIsReadThroughItsIndexWhateverTheStatistics(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 200,000 invoices")
	}
	f := newFixture(t)
	start := time.Now()
	loadPlanData(t, f)
	t.Logf("loaded %d invoices in %s", planInvoices, time.Since(start).Round(time.Millisecond))
	cases := planCases()
	t.Run("unanalysed", func(t *testing.T) { checkPlans(t, f.pool, cases) })
	f.exec(`ANALYZE companies, customers, invoices, invoice_payments, credit_notes, public_events`)
	t.Run("analysed", func(t *testing.T) { checkPlans(t, f.pool, cases) })
}

// checkPlans explains every case as the pool runs it: pgx prepares each
// statement, and PostgreSQL plans the first executions for their values
// (custom plans) and may then keep a plan for any value (generic). Both
// must be the case's index.
func checkPlans(t *testing.T, pool *pgxpool.Pool, cases []planCase) {
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, mode := range pgtest.PlanModes {
		for i, c := range cases {
			plan, err := pgtest.Explain(ctx, conn.Conn(), fmt.Sprintf("plan_%d", i), mode, c.st.sql, c.st.args...)
			if err != nil {
				t.Fatalf("%s (%s): %v\n%s", c.name, mode, err, c.st.sql)
			}
			if problem := planProblem(plan, c); problem != "" {
				t.Errorf("%s (%s): %s\n%s\n%s", c.name, mode, problem, c.st.sql, pgtest.IndentPlan(plan))
			}
			if c.calls != "" {
				checkCalledPlan(t, pool.Config().ConnString(), mode, c)
			}
		}
	}
}

// checkCalledPlan runs c's statement and checks the plan of the one
// statement that the function it calls ran: c.calls's index, never the
// whole table.
func checkCalledPlan(t *testing.T, connString, mode string, c planCase) {
	t.Helper()
	plans, err := pgtest.NestedPlans(context.Background(), connString, mode, c.st.sql, c.st.args...)
	if err != nil {
		t.Fatalf("%s (%s): %v\n%s", c.name, mode, err, c.st.sql)
	}
	if len(plans) != 1 {
		t.Errorf("%s (%s): the functions it calls ran %d statements, want 1: %v", c.name, mode, len(plans), plans)
	}
	for sql, plan := range plans {
		if problem := subPlanProblem(plan, c.calls); problem != "" {
			t.Errorf("%s (%s), its function's %s: %s\n%s", c.name, mode, sql, problem, pgtest.IndentPlan(plan))
		}
	}
}

// planProblem says what is wrong with plan for c, or "": every scan is an
// index scan on c's index, nothing is sorted, and a page's index condition
// holds its cursor (the scan starts there, however deep).
func planProblem(plan map[string]any, c planCase) string {
	var scans []map[string]any
	var walk func(map[string]any) string
	walk = func(n map[string]any) string {
		if c.also != "" && n["Parent Relationship"] == "SubPlan" {
			return subPlanProblem(n, c.also)
		}
		switch typ := n["Node Type"]; {
		case c.archived && (typ == "Sort" || typ == "Bitmap Heap Scan"):
		case c.archived && typ == "Bitmap Index Scan":
			scans = append(scans, n)
		case typ == "Seq Scan", typ == "Sort", typ == "Incremental Sort", typ == "Bitmap Heap Scan", typ == "Bitmap Index Scan":
			return fmt.Sprintf("a %s node", typ)
		case typ == "Index Scan", typ == "Index Only Scan":
			scans = append(scans, n)
		}
		children, _ := n["Plans"].([]any)
		for _, child := range children {
			if p := walk(child.(map[string]any)); p != "" {
				return p
			}
		}
		return ""
	}
	if p := walk(plan); p != "" {
		return p
	}
	if len(scans) != 1 {
		return fmt.Sprintf("%d index scans, want 1", len(scans))
	}
	if index := scans[0]["Index Name"]; index != c.index {
		return fmt.Sprintf("reads index %v, want %s", index, c.index)
	}
	if c.indexOnly && scans[0]["Node Type"] != "Index Only Scan" {
		return fmt.Sprintf("a %v, want an Index Only Scan", scans[0]["Node Type"])
	}
	cond, _ := scans[0]["Index Cond"].(string)
	if c.account {
		if !strings.HasPrefix(cond, "(account_id = ") {
			return fmt.Sprintf("the index condition %q is not the account alone", cond)
		}
		return ""
	}
	if c.list && !strings.Contains(cond, "position_hi") {
		return fmt.Sprintf("the index condition %q does not start at the cursor", cond)
	}
	if !c.list && !strings.HasPrefix(cond, "(id = ") {
		return fmt.Sprintf("the index condition %q is not the id alone", cond)
	}
	return ""
}

// subPlanProblem says what is wrong with a subquery's plan, or "": it reads
// its rows through index alone (an index scan, or a bitmap scan of the
// few rows of one invoice), never the whole table.
func subPlanProblem(n map[string]any, index string) string {
	found := 0
	var walk func(map[string]any) string
	walk = func(n map[string]any) string {
		switch typ := n["Node Type"]; typ {
		case "Seq Scan":
			return "its subquery reads a whole table"
		case "Index Scan", "Index Only Scan", "Bitmap Index Scan":
			if n["Index Name"] != index {
				return fmt.Sprintf("its subquery reads index %v, want %s", n["Index Name"], index)
			}
			found++
		}
		children, _ := n["Plans"].([]any)
		for _, child := range children {
			if p := walk(child.(map[string]any)); p != "" {
				return p
			}
		}
		return ""
	}
	if p := walk(n); p != "" {
		return p
	}
	if found != 1 {
		return fmt.Sprintf("its subquery has %d index scans, want 1", found)
	}
	return ""
}
