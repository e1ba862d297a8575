package command

import (
	"reflect"
	"testing"
	"time"

	"github.com/invoicing/invoicing/events"
)

// TestARecordRendersAsTheCreateThatMakesIt: an update patches the record as
// its create request renders it; that request, read back by the create's
// reader, must make the same record, or an empty patch would change it.
func TestARecordRendersAsTheCreateThatMakesIt(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []events.CompanyCreated{
		{CompanyID: "c1", AccountID: "a", LegalName: "Acme", Address: events.Address{City: "B", CountryCode: "DE", Line1: "L", PostalCode: "1"},
			DefaultCurrency: "EUR", DefaultLanguage: "en", DefaultPaymentTermsDays: 30, Identifiers: []events.Identifier{},
			CreditNoteNumberPrefix: ptr(events.DefaultCreditNoteNumberPrefix), CreatedAt: created},
		{CompanyID: "c1", AccountID: "a", LegalName: "Acme", TradingName: "A", Email: "a@b.example", ExternalReference: "r",
			Address:         events.Address{City: "B", CountryCode: "DE", Line1: "L", Line2: "L2", PostalCode: "1", Region: "R"},
			DefaultCurrency: "EUR", DefaultLanguage: "de-CH", DefaultPaymentTermsDays: 0, InvoiceNumberPrefix: "X/", CreditNoteNumberPrefix: ptr("CR/"),
			Identifiers: []events.Identifier{{Scheme: "vat", Value: "1", CountryCode: "DE"}}, CreatedAt: created},
	} {
		obj, err := asObject(companyRequest(c))
		if err != nil {
			t.Fatal(err)
		}
		r := &reader{}
		got := readCreateCompany(r, obj).event(c.CompanyID, c.AccountID, c.CreatedAt)
		if err := r.err(); err != nil || !reflect.DeepEqual(got, c) {
			t.Errorf("company %+v read back as %+v (%v)", c, got, err)
		}
	}
	cu := events.CustomerCreated{CustomerID: "u", CompanyID: "c", AccountID: "a", Name: "N",
		Address: events.Address{City: "B", CountryCode: "DE", Line1: "L", PostalCode: "1"}, Identifiers: []events.Identifier{}, CreatedAt: created}
	obj, err := asObject(customerRequest(cu))
	if err != nil {
		t.Fatal(err)
	}
	r := &reader{}
	if got := readCreateCustomer(r, obj).event(cu.CustomerID, cu.CompanyID, cu.AccountID, cu.CreatedAt); r.err() != nil || !reflect.DeepEqual(got, cu) {
		t.Errorf("customer %+v read back as %+v (%v)", cu, got, r.err())
	}
}

func TestArchivable(t *testing.T) {
	for _, tc := range []struct {
		archived, archive, ok bool
	}{{false, true, true}, {true, true, false}, {true, false, true}, {false, false, false}} {
		if err := archivable("company", tc.archived, tc.archive); (err == nil) != tc.ok {
			t.Errorf("archived %v, archive %v: %v", tc.archived, tc.archive, err)
		}
	}
}
