package events

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// fullDraft is a draft with every optional field set and text that
// json.Marshal escapes or that is not ASCII.
func fullDraft() InvoiceDrafted {
	terms := 30
	d := InvoiceDrafted{
		InvoiceID: "i", CompanyID: "c", AccountID: "a", CustomerID: "cu", CustomerName: "Müller & Söhne <GmbH>",
		Customer: CustomerSnapshot{ID: "cu", Name: "Müller \"quoted\"\n\ttab", Email: "x@example.com",
			Address:           Address{Line1: "1", Line2: "2", City: "Zürich", PostalCode: "8000", CountryCode: "CH", Region: "ZH"},
			Identifiers:       []Identifier{{CountryCode: "CH", Scheme: "vat", Value: "CHE-1"}, {Scheme: "gln", Value: "4000001000005"}},
			ElectronicAddress: &ElectronicAddress{Scheme: "0088", Value: "4000001000005"}, SchemaVersion: 1},
		Issuer: IssuerSnapshot{ID: "c", LegalName: "Acme", TradingName: "Acme ✓", Email: "b@example.com",
			Address:     Address{Line1: "Hauptstr. 1", City: "Berlin", PostalCode: "10115", CountryCode: "DE"},
			Identifiers: []Identifier{}, BankAccount: &BankAccount{IBAN: "DE89370400440532013000", BIC: "COBADEFFXXX", AccountName: "Acme"},
			ElectronicAddress: &ElectronicAddress{Scheme: "EM", Value: "e@example.com"}, SchemaVersion: 1},
		Currency: "EUR", Language: "de", IssueDate: "2026-03-01", DueDate: "2026-03-31", PaymentTermsDays: &terms,
		SubtotalMinor: -9223372036854775808, TaxMinor: 9223372036854775807, TotalMinor: 0,
		ExternalReference: "erp\u2028", PurchaseOrderReference: "po\\1", Notes: "\u0001", Terms: "😀",
		DocumentTerms: DocumentTerms{BuyerReference: "br", DeliveryDate: "2026-03-02",
			TaxExemptions:   []TaxExemption{{TaxCategory: TaxExempt, Reason: "r", ReasonCode: "VATEX-EU-132"}},
			DeliveryAddress: &Address{Line1: "Dock 4", City: "Hamburg", PostalCode: "20457", CountryCode: "DE"},
			BillingPeriod:   &Period{Start: "2026-02-01", End: "2026-02-28"}},
		Lines: []InvoiceLine{{Position: 1, Description: "d", Quantity: "1", Unit: "h", UnitCode: "HUR", UnitAmountMinor: 1,
			TaxRateBps: 0, TaxCategory: TaxExempt, NetAmountMinor: 1, TaxAmountMinor: 0, TotalAmountMinor: 1}},
		CreatedAt: time.Date(2026, 3, 1, 9, 30, 15, 1, time.FixedZone("", 2*3600)),
	}
	d.TaxBreakdown = LineTaxBreakdown(d.Lines)
	return d
}

// TestMarshalledDraftsAreDecodedWithoutReflection: what json.Marshal
// writes for a draft, the scanner reads in full, to the value encoding/json
// reads; if it fell back, catch-ups would be slow again without a sign.
func TestMarshalledDraftsAreDecodedWithoutReflection(t *testing.T) {
	oldShape := fullDraft()
	oldShape.Lines[0].UnitCode, oldShape.Lines[0].TaxCategory, oldShape.TaxBreakdown = "", "", nil
	for name, d := range map[string]InvoiceDrafted{
		"bench": mustDecodeDraft(t, benchDraft(t, 5)), "full": fullDraft(), "zero": {}, "old shape": oldShape,
	} {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			var fast InvoiceDrafted
			if !decodeDraftedFast(&fast, b) {
				t.Fatalf("the scanner did not read %s", b)
			}
			setLineDefaults(fast.Lines)
			fast.defaultBreakdown()
			assertSameDraft(t, b, fast, nil)
		})
	}
}

func mustDecodeDraft(t *testing.T, b []byte) InvoiceDrafted {
	var d InvoiceDrafted
	if err := d.unmarshalReflect(b); err != nil {
		t.Fatal(err)
	}
	return d
}

// assertSameDraft fails unless got and gotErr are what encoding/json
// makes of b.
func assertSameDraft(t *testing.T, b []byte, got InvoiceDrafted, gotErr error) {
	t.Helper()
	var want InvoiceDrafted
	wantErr := want.unmarshalReflect(b)
	if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		t.Fatalf("%q: error %v, encoding/json's %v", b, gotErr, wantErr)
	}
	if !got.CreatedAt.Equal(want.CreatedAt) || got.CreatedAt.Format(time.RFC3339Nano) != want.CreatedAt.Format(time.RFC3339Nano) {
		t.Fatalf("%q: created_at %v, encoding/json's %v", b, got.CreatedAt, want.CreatedAt)
	}
	got.CreatedAt, want.CreatedAt = time.Time{}, time.Time{} // each parse has its own zone
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %#v\nwant %#v", b, got, want)
	}
}

// FuzzDraftDecodeAgreesWithEncodingJSON: for any input, UnmarshalJSON
// gives what encoding/json gives, value and error.
func FuzzDraftDecodeAgreesWithEncodingJSON(f *testing.F) {
	full, err := json.Marshal(fullDraft())
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		string(benchDraft(f, 1)), string(full), `{}`, `null`, ` {"lines":[]} `, `{"lines":null,"tax_breakdown":[]}`,
		`{"Invoice_ID":"x"}`, `{"invoice\u005fid":"x"}`, `{"invoice_id":"x","invoice_id":"y"}`, `{"unknown":1}`,
		`{"customer":{"name":"a"},"customer":{"id":"b"}}`, `{"lines":[{"unit":"a"}],"lines":[{"position":2}]}`,
		`{"subtotal_minor":1.0}`, `{"subtotal_minor":1e2}`, `{"subtotal_minor":01}`, `{"subtotal_minor":-}`,
		`{"subtotal_minor":9223372036854775808}`, `{"subtotal_minor":"1"}`, `{"notes":1}`, `{"notes":true}`,
		"{\"notes\":\"\xff\"}", "{\"notes\":\"a\tb\"}", `{"notes":"\ud800"}`, `{"notes":"\x"}`, `{"invoice_id":"x"} x`,
		`{"invoice_id":"x",}`, `{"lines":[{},]}`, `{"created_at":"2026-13-01T00:00:00Z"}`, `{"created_at":null}`,
		`{"created_at":"2026-03-01T09:30:15+02:00"}`, `{"payment_terms_days":null}`, `{"payment_terms_days":-0}`,
		`{"customer":null,"issuer":{"bank_account":null,"identifiers":[null]}}`, `{"delivery_address":{}}`,
		`{"billing_period":{"start":"a","start":"b"}}`, `[]`, `"x"`, ``, `{"lines":[{"position":1}]`,
	} {
		f.Add([]byte(s))
	}
	for _, name := range []string{"invoice_drafted_due_from_terms", "invoice_drafted_due_from_client"} {
		b, err := os.ReadFile(filepath.Join("testdata", name+".golden"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got InvoiceDrafted
		err := got.UnmarshalJSON(b)
		assertSameDraft(t, b, got, err)
	})
}

// TestDecodeIntoAFilledDraftMergesAsEncodingJSON: a draft that already
// holds values is read by encoding/json, which keeps what b does not name.
func TestDecodeIntoAFilledDraftMergesAsEncodingJSON(t *testing.T) {
	b := []byte(`{"invoice_id":"new"}`)
	got := InvoiceDrafted{CompanyID: "kept"}
	if err := got.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	if got.InvoiceID != "new" || got.CompanyID != "kept" {
		t.Fatalf("got %+v, want invoice_id new and company_id kept", got)
	}
}
