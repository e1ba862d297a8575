package einvoice

import (
	"fmt"
	"math/big"
	"sort"
	"strings"
)

// The Documents below are built by hand (the mapping from events.Invoice
// is from_invoice.go's): tests of the renderers, the rules and the
// validator share them.

type lineSpec struct {
	qty      string
	price    int64
	category string
	rateBps  int64
}

// seller is a German seller with every identifier a rule may ask for.
func seller() Party {
	return Party{
		Name: "Muster GmbH", TradingName: "Muster",
		Identifiers:       []Identifier{{Scheme: "0088", Value: "4000001000005"}},
		LegalRegistration: &Identifier{Scheme: "0204", Value: "HRB 12345"},
		VATID:             "DE123456789", TaxRegistration: "201/113/40209",
		ElectronicAddress: &ElectronicAddress{Scheme: "EM", Value: "invoices@muster.example"},
		Address:           Address{Line1: "Hauptstraße 1", Line2: "Hinterhaus", City: "Berlin", PostalCode: "10115", Subdivision: "Berlin", CountryCode: "DE"},
		Email:             "billing@muster.example",
	}
}

// buyer is a French buyer with a VAT identifier.
func buyer() Party {
	return Party{
		Name: "Client SARL", TradingName: "Client",
		Identifiers:       []Identifier{{Value: "CUST-42"}},
		LegalRegistration: &Identifier{Scheme: "0002", Value: "732829320"},
		VATID:             "FR61732829320",
		ElectronicAddress: &ElectronicAddress{Scheme: "0009", Value: "73282932000074"},
		Address:           Address{Line1: "1 rue de la Paix", City: "Paris", PostalCode: "75002", CountryCode: "FR"},
		Email:             "compta@client.example",
	}
}

// minimal is the smallest valid document: one standard-rated line, no
// optional business term.
func minimal() Document {
	return build(Document{
		Number: "INV-1", IssueDate: "2026-01-15", Currency: "EUR",
		Seller: Party{Name: "S", VATID: "DE123456789", Address: Address{CountryCode: "DE"}},
		Buyer:  Party{Name: "B", Address: Address{CountryCode: "DE"}},
	}, lineSpec{"1", 10000, "S", 1900})
}

// full has every business term of the model.
func full() Document {
	d := Document{
		Number: "RE-2026/0001", IssueDate: "2026-01-15", Currency: "EUR", DueDate: "2026-02-14",
		BuyerReference: "04011000-12345-34", PurchaseOrderReference: "PO-7781",
		Notes:        []string{"Thank you for your order."},
		PaymentTerms: "Payable within 30 days.\nNo discount for early payment.",
		Seller:       seller(), Buyer: buyer(),
		Delivery:      &Delivery{Date: "2026-01-10", Address: &Address{Line1: "Lager 5", City: "Lyon", PostalCode: "69001", CountryCode: "FR"}},
		BillingPeriod: &Period{Start: "2026-01-01", End: "2026-01-31"},
		PaymentInstructions: &PaymentInstructions{MeansCode: MeansSEPACreditTransfer, RemittanceInformation: "RE-2026/0001",
			IBAN: "DE02120300000000202051", AccountName: "Muster GmbH", BIC: "BYLADEM1001"},
		Status: StatusIssued, Language: "de",
	}
	d = build(d, lineSpec{"2.5", 4000, "S", 1900}, lineSpec{"1", 1999, "S", 700})
	d.Lines[0].Note = "Consulting, January"
	return d
}

// build adds lines to d and computes what EN 16931 computes: line net
// amounts (half up), one VAT breakdown per category and rate (tax half up
// on the category's taxable amount, as BR-CO-17 expects) and the totals.
// Exempt categories get a reason; the type code defaults to 380.
func build(d Document, specs ...lineSpec) Document {
	if d.TypeCode == "" {
		d.TypeCode = TypeCommercialInvoice
	}
	type key struct {
		cat  string
		rate int64
	}
	sums := map[key]int64{}
	var order []key
	for i, s := range specs {
		net := mulQty(s.qty, s.price)
		d.Lines = append(d.Lines, Line{ID: fmt.Sprint(i + 1), Quantity: s.qty, UnitCode: "C62", NetAmount: net,
			ItemName: fmt.Sprintf("Item %d", i+1), Price: s.price, VATCategory: s.category, VATRateBps: s.rateBps})
		k := key{s.category, s.rateBps}
		if _, ok := sums[k]; !ok {
			order = append(order, k)
		}
		sums[k] += net
		d.Totals.LineTotal += net
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].cat < order[j].cat })
	for _, k := range order {
		b := VATBreakdown{Category: k.cat, RateBps: k.rate, TaxableAmount: sums[k], TaxAmount: halfUp(sums[k], k.rate, 10000)}
		if reason, ok := exemptReasons[k.cat]; ok {
			b.ExemptionReasonCode, b.ExemptionReason = reason[0], reason[1]
		}
		d.VATBreakdown = append(d.VATBreakdown, b)
		d.Totals.Tax += b.TaxAmount
	}
	d.Totals.TaxExclusive = d.Totals.LineTotal
	d.Totals.TaxInclusive = d.Totals.TaxExclusive + d.Totals.Tax
	d.Totals.Payable = d.Totals.TaxInclusive - d.Totals.Paid
	return d
}

var exemptReasons = map[string][2]string{
	"E":  {"VATEX-EU-132-1I", "Exempt: medical care (Art. 132(1)(c))"},
	"AE": {"VATEX-EU-AE", "Reverse charge"},
	"K":  {"VATEX-EU-IC", "Intra-community supply"},
	"G":  {"VATEX-EU-G", "Export outside the EU"},
	"O":  {"VATEX-EU-O", "Not subject to VAT"},
}

// mulQty is qty × price, rounded half up, exactly.
func mulQty(qty string, price int64) int64 {
	intPart, frac, _ := strings.Cut(qty, ".")
	frac = (frac + "000")[:3]
	var t big.Int
	t.SetString(intPart+frac, 10)
	return halfUp(price, t.Int64(), 1000)
}

// halfUp is a×b/d rounded half up, through big.Int so that the largest
// amounts cannot overflow.
func halfUp(a, b, d int64) int64 {
	var p, q, r big.Int
	p.Mul(big.NewInt(a), big.NewInt(b))
	q.QuoRem(&p, big.NewInt(d), &r)
	if 2*r.Int64() >= d {
		q.Add(&q, big.NewInt(1))
	}
	return q.Int64()
}

// creditNote turns an invoice Document into the credit note that corrects
// it, as FromCreditNote makes one: type 381, its own number, the invoice
// as preceding invoice reference (BG-3), the reason as its note, no due
// date, terms, payment instructions nor order reference (the event has
// none); the same positive amounts.
func creditNote(d Document) Document {
	d.PrecedingInvoice = &DocumentReference{Number: d.Number, IssueDate: d.IssueDate}
	d.TypeCode, d.Number, d.IssueDate = TypeCreditNote, "CN-000001", "2026-02-03"
	d.Notes = []string{"Returned goods: two items damaged in transit."}
	d.DueDate, d.PaymentTerms, d.PaymentInstructions, d.PurchaseOrderReference = "", "", nil, ""
	return d
}

// paid is d after a payment of amount: BT-113, and BT-115 lowered by it.
func paid(d Document, amount int64) Document {
	d.Totals.Paid = amount
	d.Totals.Payable = d.Totals.TaxInclusive - amount
	return d
}

// remainder is a credit note of what was left of an invoice after a
// partial credit: half of the first line, and one line per category and
// rate for the rest, quantity 1.
func remainder() Document {
	d := withLines(full(), lineSpec{"0.5", 4000, "S", 1900}, lineSpec{"1", 7999, "S", 1900}, lineSpec{"1", 1999, "S", 700})
	d.Lines[1].ItemName = "Remainder of invoice RE-2026/0001 (S 19 %)"
	d.Lines[2].ItemName = "Remainder of invoice RE-2026/0001 (S 7 %)"
	return creditNote(d)
}
