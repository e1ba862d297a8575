package einvoice

import (
	"strconv"

	"github.com/invoicing/invoicing/events"
)

// Identifier schemes of companies and customers that map onto business
// terms (docs/decisions.md): the VAT identifier, the seller's tax
// registration, the legal registration. Any other scheme is a party
// identifier (BT-29 / BT-46), with its ISO 6523 ICD code when the scheme
// is one of icdSchemes or is spelled "iso6523.<code>".
const (
	SchemeVAT   = "vat"   // BT-31 seller / BT-48 buyer VAT identifier
	SchemeTax   = "tax"   // BT-32 seller tax registration identifier
	SchemeLegal = "legal" // BT-30 seller / BT-47 buyer legal registration identifier
	// SchemeISO6523 prefixes an ICD code: "iso6523.0088".
	SchemeISO6523 = "iso6523."
)

// icdSchemes are the identifier schemes with a name of their own and
// their ISO 6523 ICD codes.
var icdSchemes = map[string]string{
	"gln":   "0088", // GS1 Global Location Number
	"duns":  "0060", // Dun & Bradstreet
	"siren": "0002", // French SIRENE
	"siret": "0009", // French SIRET
	"lei":   "0199", // Legal Entity Identifier
}

// FromInvoice maps an invoice, as its events make it, onto the EN 16931
// business terms: the number, dates, currency and references, the issuer
// and customer snapshots (never the current records), the lines, the VAT
// breakdown and totals the write side computed, the exemption reasons,
// the delivery, the billing period, the payment instructions from the
// issuer's bank account (SEPA credit transfer, means code 58), and what
// has been paid (BT-113; the amount due, BT-115, is the total less it,
// BR-CO-16). Credit notes do not lower BT-115: they are documents of
// their own. It is a pure function: the same invoice gives the same
// Document.
func FromInvoice(inv events.Invoice) (Document, error) {
	d := fromSnapshot(snapshot{number: inv.Number, issueDate: inv.IssueDate, currency: inv.Currency, language: inv.Language,
		issuer: inv.Issuer, customer: inv.Customer, lines: inv.Lines, subtotal: inv.SubtotalMinor, tax: inv.TaxMinor,
		total: inv.TotalMinor, terms: inv.DocumentTerms, breakdown: inv.TaxBreakdown})
	d.TypeCode, d.Status, d.VoidReason = TypeCommercialInvoice, inv.Status, inv.VoidReason
	d.DueDate, d.PurchaseOrderReference, d.PaymentTerms = inv.DueDate, inv.PurchaseOrderReference, inv.Terms
	d.Notes = nonEmpty(inv.Notes)
	if b := inv.Issuer.BankAccount; b != nil && b.IBAN != "" {
		d.PaymentInstructions = &PaymentInstructions{MeansCode: MeansSEPACreditTransfer, RemittanceInformation: inv.Number,
			IBAN: b.IBAN, AccountName: b.AccountName, BIC: b.BIC}
	}
	if paid := inv.Settlement().AmountPaidMinor; paid > 0 {
		d.Totals.Paid, d.Totals.Payable = paid, inv.TotalMinor-paid
	}
	return d, nil
}

// FromCreditNote maps a credit note onto the EN 16931 business terms of a
// credit note (type 381): its own number and issue date, the invoice it
// corrects as the preceding invoice reference (BG-3), the frozen snapshots,
// lines, VAT breakdown and totals it carries (positive amounts, as EN 16931
// wants of a credit note), its document terms, and its reason as a note
// (BT-22). The amount due (BT-115) is its total: what the seller owes back
// or sets off. It has no due date nor payment instructions. A pure
// function, like FromInvoice.
func FromCreditNote(cn events.CreditNoteIssued) (Document, error) {
	d := fromSnapshot(snapshot{number: cn.Number, issueDate: cn.IssueDate, currency: cn.Currency, language: cn.Language,
		issuer: cn.Issuer, customer: cn.Customer, lines: cn.Lines, subtotal: cn.SubtotalMinor, tax: cn.TaxMinor,
		total: cn.TotalMinor, terms: cn.DocumentTerms, breakdown: cn.TaxBreakdown})
	d.TypeCode, d.Status = TypeCreditNote, StatusIssued
	d.PrecedingInvoice = &DocumentReference{Number: cn.InvoiceNumber, IssueDate: cn.InvoiceIssueDate}
	d.Notes = nonEmpty(cn.Reason)
	return d, nil
}

// snapshot is what an invoice and a credit note share: the frozen parties,
// the lines and amounts the write side computed, the document terms.
type snapshot struct {
	number, issueDate, currency, language string
	issuer                                events.IssuerSnapshot
	customer                              events.CustomerSnapshot
	lines                                 []events.InvoiceLine
	subtotal, tax, total                  int64
	terms                                 events.DocumentTerms
	breakdown                             []events.TaxBreakdown
}

// fromSnapshot maps the shared terms; the amount due is the total until
// the caller knows better.
func fromSnapshot(s snapshot) Document {
	d := Document{
		Number: s.number, IssueDate: s.issueDate, Currency: s.currency, Language: s.language,
		BuyerReference: s.terms.BuyerReference,
		Seller:         sellerParty(s.issuer),
		Buyer:          buyerParty(s.customer),
		Totals: Totals{LineTotal: s.subtotal, TaxExclusive: s.subtotal, Tax: s.tax,
			TaxInclusive: s.total, Payable: s.total},
	}
	if s.terms.DeliveryDate != "" || s.terms.DeliveryAddress != nil {
		d.Delivery = &Delivery{Date: s.terms.DeliveryDate}
		if s.terms.DeliveryAddress != nil {
			a := address(*s.terms.DeliveryAddress)
			d.Delivery.Address = &a
		}
	}
	if p := s.terms.BillingPeriod; p != nil {
		d.BillingPeriod = &Period{Start: p.Start, End: p.End}
	}
	for _, l := range s.lines {
		d.Lines = append(d.Lines, Line{ID: strconv.Itoa(l.Position), Quantity: l.Quantity, UnitCode: l.UnitCode,
			NetAmount: l.NetAmountMinor, ItemName: l.Description, Price: l.UnitAmountMinor,
			VATCategory: l.TaxCategory, VATRateBps: l.TaxRateBps})
	}
	d.VATBreakdown = breakdown(s.breakdown, s.terms.TaxExemptions)
	return d
}

// nonEmpty is a one-note list, or none for "".
func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func breakdown(groups []events.TaxBreakdown, exemptions []events.TaxExemption) []VATBreakdown {
	out := make([]VATBreakdown, 0, len(groups))
	for _, g := range groups {
		b := VATBreakdown{TaxableAmount: g.TaxableAmountMinor, TaxAmount: g.TaxAmountMinor,
			Category: g.TaxCategory, RateBps: g.TaxRateBps}
		for _, x := range exemptions {
			if x.TaxCategory == g.TaxCategory {
				b.ExemptionReason, b.ExemptionReasonCode = x.Reason, x.ReasonCode
			}
		}
		out = append(out, b)
	}
	return out
}

func sellerParty(s events.IssuerSnapshot) Party {
	p := party(s.Identifiers, true)
	p.Name, p.TradingName, p.Address, p.Email = s.LegalName, s.TradingName, address(s.Address), s.Email
	p.ElectronicAddress = electronicAddress(s.ElectronicAddress)
	return p
}

func buyerParty(c events.CustomerSnapshot) Party {
	p := party(c.Identifiers, false)
	p.Name, p.Address, p.Email = c.Name, address(c.Address), c.Email
	p.ElectronicAddress = electronicAddress(c.ElectronicAddress)
	return p
}

// party sorts identifiers onto the business terms by scheme; the first of
// a scheme with a term of its own wins, later ones are party identifiers.
// Only the seller has a tax registration (BT-32).
func party(ids []events.Identifier, isSeller bool) Party {
	var p Party
	for _, id := range ids {
		switch {
		case id.Scheme == SchemeVAT && p.VATID == "":
			p.VATID = id.Value
		case id.Scheme == SchemeTax && isSeller && p.TaxRegistration == "":
			p.TaxRegistration = id.Value
		case id.Scheme == SchemeLegal && p.LegalRegistration == nil:
			p.LegalRegistration = &Identifier{Value: id.Value}
		default:
			p.Identifiers = append(p.Identifiers, Identifier{Scheme: icdScheme(id.Scheme), Value: id.Value})
		}
	}
	return p
}

// icdScheme is the ISO 6523 ICD code of an identifier scheme, "" when it
// has none.
func icdScheme(scheme string) string {
	if code, ok := icdSchemes[scheme]; ok {
		return code
	}
	if len(scheme) == len(SchemeISO6523)+4 && scheme[:len(SchemeISO6523)] == SchemeISO6523 {
		return scheme[len(SchemeISO6523):]
	}
	return ""
}

func address(a events.Address) Address {
	return Address{Line1: a.Line1, Line2: a.Line2, City: a.City, PostalCode: a.PostalCode,
		Subdivision: a.Region, CountryCode: a.CountryCode}
}

func electronicAddress(e *events.ElectronicAddress) *ElectronicAddress {
	if e == nil {
		return nil
	}
	return &ElectronicAddress{Scheme: e.Scheme, Value: e.Value}
}
