package projections

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/invoicing/invoicing/events"
)

// appendChange appends payload at revision of an existing stream.
func appendChange(t *testing.T, store events.Store, stream string, revision uint64, typ string, payload any) events.Position {
	t.Helper()
	data, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	res, err := store.Append(context.Background(), stream, events.AtRevision(revision-1), events.EventData{
		ID: events.EventID(stream, revision), Type: typ, Data: data, Metadata: []byte(`{}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	return res.Position
}

// TestCustomerChangesOverwriteTheRow: an update overwrites every field of
// the row with the event's state (an absent optional field becomes NULL),
// archiving sets archived_at and restoring clears it; each sets updated_at
// and version.
func TestCustomerChangesOverwriteTheRow(t *testing.T) {
	e := newEnv(t)
	created := time.Date(2026, 3, 1, 9, 30, 15, 123456000, time.UTC)
	c := events.CustomerCreated{CustomerID: uuid.NewString(), CompanyID: uuid.NewString(), AccountID: "acct",
		Name: "Globex", Address: testAddress, Email: "a@b.example", ExternalReference: "crm-1", CreatedAt: created}
	stream, _, _ := appendEvent(t, e.store, "customer", events.TypeCustomerCreated, c)
	updated := events.CustomerUpdated{CustomerID: c.CustomerID, CompanyID: c.CompanyID, AccountID: "acct", Name: "Globex Inc",
		Address:     events.Address{City: "Paris", CountryCode: "FR", Line1: "Rue 2", PostalCode: "75001"},
		Identifiers: []events.Identifier{{Scheme: "vat", Value: "FR1"}}, Changed: []string{"address", "email", "external_reference", "identifiers", "name"},
		UpdatedAt: created.Add(time.Hour)}
	pos := appendChange(t, e.store, stream, 1, events.TypeCustomerUpdated, updated)
	runAll(t, e, pos)
	want := customerRow{ID: c.CustomerID, CompanyID: c.CompanyID, AccountID: "acct", Stream: stream, Name: "Globex Inc",
		Address:     decodeJSON(t, []byte(`{"city":"Paris","country_code":"FR","line_1":"Rue 2","postal_code":"75001"}`)),
		Identifiers: decodeJSON(t, []byte(`[{"scheme":"vat","value":"FR1"}]`)), CreatedAt: created, UpdatedAt: updated.UpdatedAt, Version: 2}
	if got := readCustomer(t, e.pool, c.CustomerID); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the update:\nwant %+v\ngot  %+v", want, got)
	}

	archivedAt := created.Add(2 * time.Hour)
	pos = appendChange(t, e.store, stream, 2, events.TypeCustomerArchived, events.CustomerArchived{CustomerID: c.CustomerID, ArchivedAt: archivedAt})
	runAll(t, e, pos)
	got := readCustomer(t, e.pool, c.CustomerID)
	if got.ArchivedAt == nil || !got.ArchivedAt.Equal(archivedAt) || !got.UpdatedAt.Equal(archivedAt) || got.Version != 3 || got.Name != "Globex Inc" {
		t.Fatalf("after archiving: %+v", got)
	}
	pos = appendChange(t, e.store, stream, 3, events.TypeCustomerUnarchived, events.CustomerUnarchived{CustomerID: c.CustomerID, UnarchivedAt: archivedAt.Add(time.Hour)})
	runAll(t, e, pos)
	if got := readCustomer(t, e.pool, c.CustomerID); got.ArchivedAt != nil || got.Version != 4 || !got.UpdatedAt.Equal(archivedAt.Add(time.Hour)) {
		t.Fatalf("after restoring: %+v", got)
	}
}

func TestCompanyChangesOverwriteTheRow(t *testing.T) {
	e := newEnv(t)
	created := time.Date(2026, 3, 1, 9, 30, 15, 0, time.UTC)
	c := events.CompanyCreated{CompanyID: uuid.NewString(), AccountID: "acct", LegalName: "Acme", TradingName: "A",
		Address: testAddress, DefaultCurrency: "EUR", DefaultLanguage: "de", DefaultPaymentTermsDays: 14,
		InvoiceNumberPrefix: "A-", CreatedAt: created}
	stream, _, _ := appendEvent(t, e.store, "company", events.TypeCompanyCreated, c)
	u := events.CompanyUpdated{CompanyID: c.CompanyID, AccountID: "acct", LegalName: "Acme SE", Address: testAddress,
		DefaultCurrency: "USD", DefaultLanguage: "en", DefaultPaymentTermsDays: 30, Email: "x@y.example",
		Identifiers: []events.Identifier{}, Changed: []string{"default_currency"}, UpdatedAt: created.Add(time.Minute)}
	appendChange(t, e.store, stream, 1, events.TypeCompanyUpdated, u)
	pos := appendChange(t, e.store, stream, 2, events.TypeCompanyArchived, events.CompanyArchived{CompanyID: c.CompanyID, ArchivedAt: created.Add(time.Hour)})
	runAll(t, e, pos)
	var (
		legal, currency, language, prefix string
		trading, email                    *string
		terms, version                    int
		archivedAt, updatedAt             *time.Time
	)
	err := e.pool.QueryRow(context.Background(), `SELECT legal_name, trading_name, default_currency, default_language,
		default_payment_terms_days, email, invoice_number_prefix, archived_at, updated_at, version FROM companies WHERE id = $1`,
		c.CompanyID).Scan(&legal, &trading, &currency, &language, &terms, &email, &prefix, &archivedAt, &updatedAt, &version)
	if err != nil {
		t.Fatal(err)
	}
	if legal != "Acme SE" || trading != nil || currency != "USD" || language != "en" || terms != 30 || email == nil ||
		prefix != "" || archivedAt == nil || !updatedAt.Equal(created.Add(time.Hour)) || version != 3 {
		t.Fatalf("row: %s %v %s %s %d %v %q %v %v %d", legal, trading, currency, language, terms, email, prefix, archivedAt, updatedAt, version)
	}
}
