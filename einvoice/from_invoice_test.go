package einvoice

import (
	"reflect"
	"testing"

	"github.com/invoicing/invoicing/events"
)

// FromInvoice maps every business term an invoice holds, from its
// snapshots; identifiers go to their terms by scheme.
func TestFromInvoiceMapsEveryTerm(t *testing.T) {
	addr := events.Address{Line1: "Hauptstr. 1", Line2: "Hof", City: "Berlin", PostalCode: "10115", Region: "BE", CountryCode: "DE"}
	inv := events.Invoice{Status: events.StatusIssued, Number: "INV-000007", VoidReason: "",
		InvoiceDrafted: events.InvoiceDrafted{
			Currency: "EUR", Language: "de", IssueDate: "2025-01-15", DueDate: "2025-02-14",
			PurchaseOrderReference: "PO-1", Notes: "Thanks\nagain", Terms: "Net 30",
			Issuer: events.IssuerSnapshot{LegalName: "Acme GmbH", TradingName: "Acme", Address: addr, Email: "ar@acme.example",
				Identifiers: []events.Identifier{{Scheme: "vat", Value: "DE123456789"}, {Scheme: "tax", Value: "12/345"},
					{Scheme: "legal", Value: "HRB 1"}, {Scheme: "gln", Value: "4000001000005"}, {Scheme: "iso6523.0204", Value: "991-1"},
					{Scheme: "de.hrb", Value: "x"}, {Scheme: "vat", Value: "DE999"}},
				BankAccount:       &events.BankAccount{IBAN: "DE89370400440532013000", BIC: "COBADEFFXXX", AccountName: "Acme"},
				ElectronicAddress: &events.ElectronicAddress{Scheme: "0088", Value: "4000001000005"}},
			Customer: events.CustomerSnapshot{Name: "Globex", Address: addr, Email: "ap@globex.example",
				Identifiers:       []events.Identifier{{Scheme: "vat", Value: "FR123"}, {Scheme: "tax", Value: "t"}, {Scheme: "legal", Value: "L"}},
				ElectronicAddress: &events.ElectronicAddress{Scheme: "EM", Value: "ap@globex.example"}},
			Lines: []events.InvoiceLine{
				{Position: 1, Description: "A", Quantity: "1.5", UnitCode: "HUR", UnitAmountMinor: 1000, TaxRateBps: 1900, TaxCategory: "S", NetAmountMinor: 1500, TaxAmountMinor: 285, TotalAmountMinor: 1785},
				{Position: 2, Description: "B", Quantity: "1", UnitCode: "C62", UnitAmountMinor: 500, TaxCategory: "E", NetAmountMinor: 500, TotalAmountMinor: 500}},
			SubtotalMinor: 2000, TaxMinor: 285, TotalMinor: 2285,
			DocumentTerms: events.DocumentTerms{BuyerReference: "BR-1", TaxExemptions: []events.TaxExemption{{TaxCategory: "E", Reason: "Art. 132", ReasonCode: "VATEX-EU-132"}},
				DeliveryDate: "2025-01-10", DeliveryAddress: &addr, BillingPeriod: &events.Period{Start: "2025-01-01", End: "2025-01-31"}},
			TaxBreakdown: []events.TaxBreakdown{{TaxCategory: "S", TaxRateBps: 1900, TaxableAmountMinor: 1500, TaxAmountMinor: 285},
				{TaxCategory: "E", TaxableAmountMinor: 500}},
		}}
	d, err := FromInvoice(inv)
	if err != nil {
		t.Fatal(err)
	}
	a := Address{Line1: "Hauptstr. 1", Line2: "Hof", City: "Berlin", PostalCode: "10115", Subdivision: "BE", CountryCode: "DE"}
	want := Document{Number: "INV-000007", IssueDate: "2025-01-15", TypeCode: "380", Currency: "EUR", DueDate: "2025-02-14",
		BuyerReference: "BR-1", PurchaseOrderReference: "PO-1", Notes: []string{"Thanks\nagain"}, PaymentTerms: "Net 30",
		Seller: Party{Name: "Acme GmbH", TradingName: "Acme", VATID: "DE123456789", TaxRegistration: "12/345",
			LegalRegistration: &Identifier{Value: "HRB 1"},
			Identifiers:       []Identifier{{Scheme: "0088", Value: "4000001000005"}, {Scheme: "0204", Value: "991-1"}, {Value: "x"}, {Value: "DE999"}},
			ElectronicAddress: &ElectronicAddress{Scheme: "0088", Value: "4000001000005"}, Address: a, Email: "ar@acme.example"},
		Buyer: Party{Name: "Globex", VATID: "FR123", LegalRegistration: &Identifier{Value: "L"}, Identifiers: []Identifier{{Value: "t"}},
			ElectronicAddress: &ElectronicAddress{Scheme: "EM", Value: "ap@globex.example"}, Address: a, Email: "ap@globex.example"},
		Delivery:      &Delivery{Date: "2025-01-10", Address: &a},
		BillingPeriod: &Period{Start: "2025-01-01", End: "2025-01-31"},
		PaymentInstructions: &PaymentInstructions{MeansCode: "58", RemittanceInformation: "INV-000007", IBAN: "DE89370400440532013000",
			AccountName: "Acme", BIC: "COBADEFFXXX"},
		Lines: []Line{{ID: "1", Quantity: "1.5", UnitCode: "HUR", NetAmount: 1500, ItemName: "A", Price: 1000, VATCategory: "S", VATRateBps: 1900},
			{ID: "2", Quantity: "1", UnitCode: "C62", NetAmount: 500, ItemName: "B", Price: 500, VATCategory: "E"}},
		VATBreakdown: []VATBreakdown{{TaxableAmount: 1500, TaxAmount: 285, Category: "S", RateBps: 1900},
			{TaxableAmount: 500, Category: "E", ExemptionReason: "Art. 132", ExemptionReasonCode: "VATEX-EU-132"}},
		Totals: Totals{LineTotal: 2000, TaxExclusive: 2000, Tax: 285, TaxInclusive: 2285, Payable: 2285},
		Status: "issued", Language: "de",
	}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("FromInvoice:\n got %+v\nwant %+v", d, want)
	}
	if problems := Check(d); len(problems) != 0 {
		t.Errorf("Check: %+v", problems)
	}
	// Absent optional groups stay absent.
	inv.Issuer.BankAccount, inv.DeliveryDate, inv.DeliveryAddress, inv.BillingPeriod, inv.Notes = nil, "", nil, nil, ""
	d, _ = FromInvoice(inv)
	if d.PaymentInstructions != nil || d.Delivery != nil || d.BillingPeriod != nil || d.Notes != nil {
		t.Errorf("absent groups rendered: %+v %+v %+v %+v", d.PaymentInstructions, d.Delivery, d.BillingPeriod, d.Notes)
	}
}

// FromCreditNote maps a credit note: type 381, its own number and date,
// the invoice it corrects (BG-3), its reason as note, its own positive
// amounts and terms, payable = its total, no payment instructions even
// when the issuer has a bank account.
func TestFromCreditNoteMapsEveryTerm(t *testing.T) {
	addr := events.Address{Line1: "Hauptstr. 1", City: "Berlin", PostalCode: "10115", CountryCode: "DE"}
	cn := events.CreditNoteIssued{InvoiceNumber: "INV-000007", InvoiceIssueDate: "2025-01-15", Number: "CN-000001",
		IssueDate: "2025-02-01", Reason: "Two hours billed twice", Currency: "EUR", Language: "fr",
		Issuer: events.IssuerSnapshot{LegalName: "Acme GmbH", Address: addr, Identifiers: []events.Identifier{{Scheme: "vat", Value: "DE123456789"}},
			BankAccount: &events.BankAccount{IBAN: "DE89370400440532013000"}},
		Customer: events.CustomerSnapshot{Name: "Globex", Address: addr},
		Lines: []events.InvoiceLine{{Position: 1, Description: "A", Quantity: "2", UnitCode: "HUR", UnitAmountMinor: 1000, TaxRateBps: 1900,
			TaxCategory: "S", NetAmountMinor: 2000, TaxAmountMinor: 380, TotalAmountMinor: 2380},
			{Position: 2, Description: "B", Quantity: "1", UnitCode: "C62", UnitAmountMinor: 500, TaxCategory: "E", NetAmountMinor: 500, TotalAmountMinor: 500}},
		SubtotalMinor: 2500, TaxMinor: 380, TotalMinor: 2880,
		DocumentTerms: events.DocumentTerms{BuyerReference: "BR-1", TaxExemptions: []events.TaxExemption{{TaxCategory: "E", Reason: "Art. 132", ReasonCode: "VATEX-EU-132"}},
			DeliveryDate: "2025-01-10", DeliveryAddress: &addr, BillingPeriod: &events.Period{Start: "2025-01-01", End: "2025-01-31"}},
		TaxBreakdown: []events.TaxBreakdown{{TaxCategory: "S", TaxRateBps: 1900, TaxableAmountMinor: 2000, TaxAmountMinor: 380},
			{TaxCategory: "E", TaxableAmountMinor: 500}},
		Invoice: events.Settlement{AmountCreditedMinor: 2880, AmountPaidMinor: 1000},
	}
	d, err := FromCreditNote(cn)
	if err != nil {
		t.Fatal(err)
	}
	a := address(addr)
	want := Document{Number: "CN-000001", IssueDate: "2025-02-01", TypeCode: "381", Currency: "EUR", BuyerReference: "BR-1",
		Notes: []string{"Two hours billed twice"}, PrecedingInvoice: &DocumentReference{Number: "INV-000007", IssueDate: "2025-01-15"},
		Seller: Party{Name: "Acme GmbH", VATID: "DE123456789", Address: a}, Buyer: Party{Name: "Globex", Address: a},
		Delivery: &Delivery{Date: "2025-01-10", Address: &a}, BillingPeriod: &Period{Start: "2025-01-01", End: "2025-01-31"},
		Lines: []Line{{ID: "1", Quantity: "2", UnitCode: "HUR", NetAmount: 2000, ItemName: "A", Price: 1000, VATCategory: "S", VATRateBps: 1900},
			{ID: "2", Quantity: "1", UnitCode: "C62", NetAmount: 500, ItemName: "B", Price: 500, VATCategory: "E"}},
		VATBreakdown: []VATBreakdown{{TaxableAmount: 2000, TaxAmount: 380, Category: "S", RateBps: 1900},
			{TaxableAmount: 500, Category: "E", ExemptionReason: "Art. 132", ExemptionReasonCode: "VATEX-EU-132"}},
		Totals: Totals{LineTotal: 2500, TaxExclusive: 2500, Tax: 380, TaxInclusive: 2880, Payable: 2880},
		Status: "issued", Language: "fr",
	}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("FromCreditNote:\n got %+v\nwant %+v", d, want)
	}
	if problems := Check(d); len(problems) != 0 {
		t.Errorf("Check: %+v", problems)
	}
}

// FromInvoice shows what was paid (payments not reversed) as BT-113 and
// the rest as BT-115; credit notes leave both alone.
func TestFromInvoiceShowsThePaidAmount(t *testing.T) {
	inv := events.Invoice{Status: events.StatusIssued, Number: "INV-1", InvoiceDrafted: events.InvoiceDrafted{
		Currency: "EUR", IssueDate: "2025-01-15", SubtotalMinor: 10000, TaxMinor: 1900, TotalMinor: 11900}}
	pay := func(amount int64, reversed bool) events.Payment {
		p := events.Payment{PaymentRecorded: events.PaymentRecorded{AmountMinor: amount}}
		if reversed {
			p.Reversal = &events.PaymentReversed{}
		}
		return p
	}
	for _, c := range []struct {
		name          string
		payments      []events.Payment
		credited      int64
		paid, payable int64
	}{
		{"none", nil, 0, 0, 11900},
		{"partial", []events.Payment{pay(4000, false), pay(900, false)}, 0, 4900, 7000},
		{"reversed", []events.Payment{pay(4000, true), pay(900, false)}, 0, 900, 11000},
		{"full", []events.Payment{pay(11900, false)}, 0, 11900, 0},
		{"credited and paid", []events.Payment{pay(5000, false)}, 6900, 5000, 6900},
	} {
		inv.Payments, inv.CreditNotes = c.payments, nil
		if c.credited > 0 {
			inv.CreditNotes = []events.CreditNoteIssued{{TotalMinor: c.credited}}
		}
		d, err := FromInvoice(inv)
		if err != nil {
			t.Fatal(err)
		}
		if d.Totals.Paid != c.paid || d.Totals.Payable != c.payable || d.Totals.TaxInclusive != 11900 {
			t.Errorf("%s: totals %+v, want paid %d payable %d", c.name, d.Totals, c.paid, c.payable)
		}
	}
}
