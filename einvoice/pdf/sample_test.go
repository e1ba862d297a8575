package pdf

import (
	"fmt"
	"testing"

	"github.com/invoicing/invoicing/einvoice"
)

// sampleDocument is a representative issued invoice with n lines, mixed
// VAT categories and text a renderer gets wrong easily.
func sampleDocument(n int) einvoice.Document {
	d := einvoice.Document{
		Number:                 "INV-2026-000042",
		IssueDate:              "2026-11-20",
		TypeCode:               einvoice.TypeCommercialInvoice,
		Currency:               "EUR",
		DueDate:                "2026-12-20",
		BuyerReference:         "PO-Dept-7 <&>\"'",
		PurchaseOrderReference: "4500012345",
		Notes:                  []string{"Thank you for your business.\nDelivery took place at the customer's site in Köln."},
		PaymentTerms:           "Payable within 30 days without deduction. 2 % discount when paid within 10 days.",
		Seller: einvoice.Party{
			Name:              "Acme Software GmbH",
			TradingName:       "Acme Cloud",
			VATID:             "DE123456789",
			TaxRegistration:   "143/123/12345",
			LegalRegistration: &einvoice.Identifier{Value: "HRB 123456 B"},
			ElectronicAddress: &einvoice.ElectronicAddress{Scheme: "EM", Value: "invoices@acme.example"},
			Address:           einvoice.Address{Line1: "Hauptstraße 1", City: "Berlin", PostalCode: "10115", CountryCode: "DE"},
			Email:             "billing@acme.example",
		},
		Buyer: einvoice.Party{
			Name:    "Ωμέγα Trading Ελλάς Α.Ε.",
			VATID:   "EL094014201",
			Address: einvoice.Address{Line1: "Λεωφόρος Κηφισίας 12", Line2: "3rd floor", City: "Αθήνα", PostalCode: "115 26", CountryCode: "GR"},
			Email:   "ap@omega.example",
		},
		Delivery:      &einvoice.Delivery{Date: "2026-11-18", Address: &einvoice.Address{Line1: "Industriestraße 5", City: "Köln", PostalCode: "50667", CountryCode: "DE"}},
		BillingPeriod: &einvoice.Period{Start: "2026-11-01", End: "2026-11-30"},
		PaymentInstructions: &einvoice.PaymentInstructions{
			MeansCode: einvoice.MeansSEPACreditTransfer, IBAN: "DE89370400440532013000", BIC: "COBADEFFXXX", AccountName: "Acme Software GmbH",
		},
		Status: einvoice.StatusIssued,
	}
	d.Lines = sampleLines(n)
	return withTotals(d)
}

// sampleLines are n lines cycling through rates 19 %, 7 % and exempt.
func sampleLines(n int) []einvoice.Line {
	names := []string{
		"Consulting — architecture review of the billing platform, including a written report",
		"Software licence «Pro», annual",
		"Support hours (Привет, служба поддержки)",
		"Training: \"E-invoicing with EN 16931\" & <UBL>",
		"Hosting, exempt medical data service",
	}
	units := []string{"HUR", "ANN", "HUR", "DAY", "MON"}
	lines := make([]einvoice.Line, 0, n)
	for i := 0; i < n; i++ {
		qty, price := int64(i%7+1), int64(12500+i*137)
		cat, bps := einvoice.CategoryStandard, int64(1900)
		if i%5 == 4 {
			cat, bps = einvoice.CategoryExempt, 0
		} else if i%5 == 1 {
			bps = 700
		}
		line := einvoice.Line{
			ID: fmt.Sprint(i + 1), Quantity: fmt.Sprint(qty), UnitCode: units[i%5], Price: price, NetAmount: qty * price,
			ItemName: fmt.Sprintf("%s #%d", names[i%len(names)], i+1), VATCategory: cat, VATRateBps: bps,
		}
		if i == 2 {
			line.Quantity = "2.5"
			line.NetAmount = price * 5 / 2
			line.Note = "Billed per started half hour"
		}
		lines = append(lines, line)
	}
	return lines
}

// withTotals computes the VAT breakdown (one per category and rate, tax
// half up on the taxable amount as BR-CO-17 expects) and the totals.
func withTotals(d einvoice.Document) einvoice.Document {
	byRate := map[string]*einvoice.VATBreakdown{}
	var order []string
	for _, line := range d.Lines {
		key := fmt.Sprint(line.VATCategory, line.VATRateBps)
		v, ok := byRate[key]
		if !ok {
			v = &einvoice.VATBreakdown{Category: line.VATCategory, RateBps: line.VATRateBps}
			if line.VATCategory == einvoice.CategoryExempt {
				v.ExemptionReason = "Exempt under Article 132(1)(c) of Directive 2006/112/EC"
				v.ExemptionReasonCode = "VATEX-EU-132-1C"
			}
			byRate[key] = v
			order = append(order, key)
		}
		v.TaxableAmount += line.NetAmount
	}
	d.VATBreakdown, d.Totals = nil, einvoice.Totals{}
	for _, k := range order {
		v := byRate[k]
		v.TaxAmount = (v.TaxableAmount*v.RateBps + 5000) / 10000
		d.VATBreakdown = append(d.VATBreakdown, *v)
		d.Totals.LineTotal += v.TaxableAmount
		d.Totals.Tax += v.TaxAmount
	}
	d.Totals.TaxExclusive = d.Totals.LineTotal
	d.Totals.TaxInclusive = d.Totals.TaxExclusive + d.Totals.Tax
	d.Totals.Payable = d.Totals.TaxInclusive
	return d
}

// sampleXML is the document's CII rendering, what a caller passes in.
func sampleXML(t testing.TB, d einvoice.Document) []byte {
	t.Helper()
	xml, err := einvoice.RenderCII(d)
	if err != nil {
		t.Fatalf("RenderCII: %v", err)
	}
	return xml
}

// sampleCreditNote is the credit note of sampleDocument(n), as
// einvoice.FromCreditNote makes one: type 381, the invoice it corrects
// (BG-3), its reason as note, no due date, terms nor payment instructions.
func sampleCreditNote(n int) einvoice.Document {
	d := sampleDocument(n)
	d.PrecedingInvoice = &einvoice.DocumentReference{Number: d.Number, IssueDate: d.IssueDate}
	d.TypeCode, d.Number, d.IssueDate = einvoice.TypeCreditNote, "CN-000003", "2026-12-01"
	d.Notes = []string{"Two licences returned unused."}
	d.DueDate, d.PaymentTerms, d.PaymentInstructions, d.PurchaseOrderReference = "", "", nil, ""
	return d
}
