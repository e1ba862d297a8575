package einvoice

// The namespaces of a UBL 2.1 Invoice and CreditNote.
const (
	ublInvoiceNS    = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
	ublCreditNoteNS = "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"
	ublCACNS        = "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
	ublCBCNS        = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"
)

// ublTaxSchemeSellerTax is the tax scheme under which UBL carries the
// seller's tax registration identifier (BT-32): anything but "VAT" says
// "not the VAT identifier"; "FC" (fiscal code) is the common choice.
const ublTaxSchemeSellerTax = "FC"

// ublNames are the names that differ between a UBL Invoice and a UBL
// CreditNote: the root and its namespace, the type code, the line and its
// quantity; the rest of the two schemas is the same sequence.
type ublNames struct {
	root, ns, typeCode, line, quantity string
}

var (
	ublInvoice    = ublNames{"Invoice", ublInvoiceNS, "cbc:InvoiceTypeCode", "cac:InvoiceLine", "cbc:InvoicedQuantity"}
	ublCreditNote = ublNames{"CreditNote", ublCreditNoteNS, "cbc:CreditNoteTypeCode", "cac:CreditNoteLine", "cbc:CreditedQuantity"}
)

// RenderUBL renders d as a UBL 2.1 Invoice, or a UBL 2.1 CreditNote when
// its type code is TypeCreditNote, following EN 16931's UBL syntax
// binding. The element order is the UBL schema's (xsd:sequence),
// which the CEN check enforces. It fails only when an amount or a text
// cannot be written (see FormatAmount, ErrNotXMLText); the business rules
// are Check's job.
func RenderUBL(d Document) ([]byte, error) {
	exp, err := writableExponent(d.Currency)
	if err != nil {
		return nil, err
	}
	u := ublWriter{xmlWriter: newXMLWriter(4096 + 1200*len(d.Lines)), d: &d, exp: exp, names: ublInvoice}
	if d.TypeCode == TypeCreditNote {
		u.names = ublCreditNote
	}
	u.open(u.names.root, "xmlns", u.names.ns, "xmlns:cac", ublCACNS, "xmlns:cbc", ublCBCNS)
	u.header()
	u.party("cac:AccountingSupplierParty", d.Seller, true)
	u.party("cac:AccountingCustomerParty", d.Buyer, false)
	u.delivery()
	u.payment()
	u.taxTotal()
	u.monetaryTotal()
	for _, l := range d.Lines {
		u.line(l)
	}
	u.close(u.names.root)
	return u.bytes()
}

// writableExponent is the currency's exponent, or why it cannot be written.
func writableExponent(currency string) (int, error) {
	exp, ok := CurrencyExponent(currency)
	if !ok || exp > MaxDecimals {
		return 0, &CurrencyError{Currency: currency}
	}
	return exp, nil
}

type ublWriter struct {
	*xmlWriter
	d     *Document
	exp   int
	names ublNames
}

// amount writes a cbc amount element with its currencyID.
func (u *ublWriter) amount(name string, minor int64) {
	u.leaf(name, formatScaled(minor, u.exp), "currencyID", u.d.Currency)
}

func (u *ublWriter) header() {
	d := u.d
	u.leaf("cbc:CustomizationID", SpecificationID)
	u.leaf("cbc:ID", d.Number)
	u.leaf("cbc:IssueDate", d.IssueDate)
	if u.names.root == ublInvoice.root { // a CreditNote has no DueDate here (its BT-9 would go to PaymentMeans)
		u.opt("cbc:DueDate", d.DueDate)
	}
	u.leaf(u.names.typeCode, d.TypeCode)
	for _, n := range d.Notes {
		u.opt("cbc:Note", n)
	}
	u.leaf("cbc:DocumentCurrencyCode", d.Currency)
	u.opt("cbc:BuyerReference", d.BuyerReference)
	if p := d.BillingPeriod; p != nil {
		u.open("cac:InvoicePeriod")
		u.opt("cbc:StartDate", p.Start)
		u.opt("cbc:EndDate", p.End)
		u.close("cac:InvoicePeriod")
	}
	if d.PurchaseOrderReference != "" {
		u.open("cac:OrderReference")
		u.leaf("cbc:ID", d.PurchaseOrderReference)
		u.close("cac:OrderReference")
	}
	if p := d.PrecedingInvoice; p != nil {
		u.open("cac:BillingReference")
		u.open("cac:InvoiceDocumentReference")
		u.leaf("cbc:ID", p.Number)
		u.opt("cbc:IssueDate", p.IssueDate)
		u.close("cac:InvoiceDocumentReference")
		u.close("cac:BillingReference")
	}
}

// party writes the seller (BG-4) or the buyer (BG-7).
func (u *ublWriter) party(role string, p Party, seller bool) {
	u.open(role)
	u.open("cac:Party")
	if ea := p.ElectronicAddress; ea != nil {
		u.leaf("cbc:EndpointID", ea.Value, "schemeID", ea.Scheme)
	}
	for _, id := range p.Identifiers {
		u.open("cac:PartyIdentification")
		u.leaf("cbc:ID", id.Value, schemeAttr(id.Scheme)...)
		u.close("cac:PartyIdentification")
	}
	if p.TradingName != "" {
		u.open("cac:PartyName")
		u.leaf("cbc:Name", p.TradingName)
		u.close("cac:PartyName")
	}
	u.address("cac:PostalAddress", p.Address)
	u.taxScheme(p.VATID, "VAT")
	if seller {
		u.taxScheme(p.TaxRegistration, ublTaxSchemeSellerTax)
	}
	u.open("cac:PartyLegalEntity")
	u.leaf("cbc:RegistrationName", p.Name)
	if lr := p.LegalRegistration; lr != nil {
		u.leaf("cbc:CompanyID", lr.Value, schemeAttr(lr.Scheme)...)
	}
	u.close("cac:PartyLegalEntity")
	if p.Email != "" {
		u.open("cac:Contact")
		u.leaf("cbc:ElectronicMail", p.Email)
		u.close("cac:Contact")
	}
	u.close("cac:Party")
	u.close(role)
}

// schemeAttr is the schemeID attribute, or none for an empty scheme.
func schemeAttr(scheme string) []string {
	if scheme == "" {
		return nil
	}
	return []string{"schemeID", scheme}
}

func (u *ublWriter) taxScheme(companyID, scheme string) {
	if companyID == "" {
		return
	}
	u.open("cac:PartyTaxScheme")
	u.leaf("cbc:CompanyID", companyID)
	u.open("cac:TaxScheme")
	u.leaf("cbc:ID", scheme)
	u.close("cac:TaxScheme")
	u.close("cac:PartyTaxScheme")
}

func (u *ublWriter) address(name string, a Address) {
	u.open(name)
	u.opt("cbc:StreetName", a.Line1)
	u.opt("cbc:AdditionalStreetName", a.Line2)
	u.opt("cbc:CityName", a.City)
	u.opt("cbc:PostalZone", a.PostalCode)
	u.opt("cbc:CountrySubentity", a.Subdivision)
	u.open("cac:Country")
	u.leaf("cbc:IdentificationCode", a.CountryCode)
	u.close("cac:Country")
	u.close(name)
}

func (u *ublWriter) delivery() {
	dl := u.d.Delivery
	if dl == nil || (dl.Date == "" && dl.Address == nil) {
		return
	}
	u.open("cac:Delivery")
	u.opt("cbc:ActualDeliveryDate", dl.Date)
	if dl.Address != nil {
		u.open("cac:DeliveryLocation")
		u.address("cac:Address", *dl.Address)
		u.close("cac:DeliveryLocation")
	}
	u.close("cac:Delivery")
}

// payment writes the payment instructions (BG-16) and terms (BT-20).
func (u *ublWriter) payment() {
	if pi := u.d.PaymentInstructions; pi != nil {
		u.open("cac:PaymentMeans")
		u.leaf("cbc:PaymentMeansCode", pi.MeansCode)
		u.opt("cbc:PaymentID", pi.RemittanceInformation)
		if pi.IBAN != "" {
			u.open("cac:PayeeFinancialAccount")
			u.leaf("cbc:ID", pi.IBAN)
			u.opt("cbc:Name", pi.AccountName)
			if pi.BIC != "" {
				u.open("cac:FinancialInstitutionBranch")
				u.leaf("cbc:ID", pi.BIC)
				u.close("cac:FinancialInstitutionBranch")
			}
			u.close("cac:PayeeFinancialAccount")
		}
		u.close("cac:PaymentMeans")
	}
	if u.d.PaymentTerms != "" {
		u.open("cac:PaymentTerms")
		u.leaf("cbc:Note", u.d.PaymentTerms)
		u.close("cac:PaymentTerms")
	}
}

func (u *ublWriter) taxTotal() {
	u.open("cac:TaxTotal")
	u.amount("cbc:TaxAmount", u.d.Totals.Tax)
	for _, b := range u.d.VATBreakdown {
		u.open("cac:TaxSubtotal")
		u.amount("cbc:TaxableAmount", b.TaxableAmount)
		u.amount("cbc:TaxAmount", b.TaxAmount)
		u.open("cac:TaxCategory")
		u.leaf("cbc:ID", b.Category)
		if b.Category != CategoryNotSubject { // BR-O-09: no rate when not subject to VAT
			u.leaf("cbc:Percent", FormatRate(b.RateBps))
		}
		u.opt("cbc:TaxExemptionReasonCode", b.ExemptionReasonCode)
		u.opt("cbc:TaxExemptionReason", b.ExemptionReason)
		u.vatScheme()
		u.close("cac:TaxCategory")
		u.close("cac:TaxSubtotal")
	}
	u.close("cac:TaxTotal")
}

func (u *ublWriter) vatScheme() {
	u.open("cac:TaxScheme")
	u.leaf("cbc:ID", "VAT")
	u.close("cac:TaxScheme")
}

func (u *ublWriter) monetaryTotal() {
	t := u.d.Totals
	u.open("cac:LegalMonetaryTotal")
	u.amount("cbc:LineExtensionAmount", t.LineTotal)
	u.amount("cbc:TaxExclusiveAmount", t.TaxExclusive)
	u.amount("cbc:TaxInclusiveAmount", t.TaxInclusive)
	if t.Paid != 0 {
		u.amount("cbc:PrepaidAmount", t.Paid)
	}
	u.amount("cbc:PayableAmount", t.Payable)
	u.close("cac:LegalMonetaryTotal")
}

func (u *ublWriter) line(l Line) {
	u.open(u.names.line)
	u.leaf("cbc:ID", l.ID)
	u.opt("cbc:Note", l.Note)
	u.leaf(u.names.quantity, l.Quantity, "unitCode", l.UnitCode)
	u.amount("cbc:LineExtensionAmount", l.NetAmount)
	u.open("cac:Item")
	u.leaf("cbc:Name", l.ItemName)
	u.open("cac:ClassifiedTaxCategory")
	u.leaf("cbc:ID", l.VATCategory)
	if l.VATCategory != CategoryNotSubject { // BR-O-05
		u.leaf("cbc:Percent", FormatRate(l.VATRateBps))
	}
	u.vatScheme()
	u.close("cac:ClassifiedTaxCategory")
	u.close("cac:Item")
	u.open("cac:Price")
	u.amount("cbc:PriceAmount", l.Price)
	u.close("cac:Price")
	u.close(u.names.line)
}
