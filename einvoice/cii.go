package einvoice

import "strings"

// The namespaces of a UN/CEFACT CII D16B CrossIndustryInvoice.
const (
	ciiRSMNS = "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
	ciiRAMNS = "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"
	ciiUDTNS = "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100"
	ciiQDTNS = "urn:un:unece:uncefact:data:standard:QualifiedDataType:100"
)

// CII scheme ids of tax registrations: VAT identifier (BT-31, BT-48) and
// the seller's tax registration identifier (BT-32).
const (
	ciiSchemeVAT = "VA"
	ciiSchemeTax = "FC"
)

// RenderCII renders d as a UN/CEFACT CII D16B CrossIndustryInvoice
// following EN 16931's CII syntax binding, in the schema's element order.
// Like RenderUBL it fails only when an amount or a text cannot be written.
func RenderCII(d Document) ([]byte, error) {
	exp, err := writableExponent(d.Currency)
	if err != nil {
		return nil, err
	}
	c := ciiWriter{xmlWriter: newXMLWriter(4096 + 1400*len(d.Lines)), d: &d, exp: exp}
	ns := []string{"xmlns:rsm", ciiRSMNS, "xmlns:ram", ciiRAMNS, "xmlns:udt", ciiUDTNS}
	if d.PrecedingInvoice != nil { // only BT-26 is a qualified date: invoices stay as they were
		ns = append(ns, "xmlns:qdt", ciiQDTNS)
	}
	c.open("rsm:CrossIndustryInvoice", ns...)
	c.open("rsm:ExchangedDocumentContext")
	c.open("ram:GuidelineSpecifiedDocumentContextParameter")
	c.leaf("ram:ID", SpecificationID)
	c.close("ram:GuidelineSpecifiedDocumentContextParameter")
	c.close("rsm:ExchangedDocumentContext")
	c.exchangedDocument()
	c.open("rsm:SupplyChainTradeTransaction")
	for _, l := range d.Lines {
		c.line(l)
	}
	c.agreement()
	c.delivery()
	c.settlement()
	c.close("rsm:SupplyChainTradeTransaction")
	c.close("rsm:CrossIndustryInvoice")
	return c.bytes()
}

type ciiWriter struct {
	*xmlWriter
	d   *Document
	exp int
}

func (c *ciiWriter) amount(name string, minor int64) {
	c.leaf(name, formatScaled(minor, c.exp))
}

// date writes a date element holding a format 102 (CCYYMMDD) date string.
func (c *ciiWriter) date(name, inner, date string) {
	c.open(name)
	c.leaf(inner, strings.ReplaceAll(date, "-", ""), "format", "102")
	c.close(name)
}

func (c *ciiWriter) exchangedDocument() {
	d := c.d
	c.open("rsm:ExchangedDocument")
	c.leaf("ram:ID", d.Number)
	c.leaf("ram:TypeCode", d.TypeCode)
	c.date("ram:IssueDateTime", "udt:DateTimeString", d.IssueDate)
	for _, n := range d.Notes {
		if n != "" {
			c.open("ram:IncludedNote")
			c.leaf("ram:Content", n)
			c.close("ram:IncludedNote")
		}
	}
	c.close("rsm:ExchangedDocument")
}

func (c *ciiWriter) line(l Line) {
	c.open("ram:IncludedSupplyChainTradeLineItem")
	c.open("ram:AssociatedDocumentLineDocument")
	c.leaf("ram:LineID", l.ID)
	if l.Note != "" {
		c.open("ram:IncludedNote")
		c.leaf("ram:Content", l.Note)
		c.close("ram:IncludedNote")
	}
	c.close("ram:AssociatedDocumentLineDocument")
	c.open("ram:SpecifiedTradeProduct")
	c.leaf("ram:Name", l.ItemName)
	c.close("ram:SpecifiedTradeProduct")
	c.open("ram:SpecifiedLineTradeAgreement")
	c.open("ram:NetPriceProductTradePrice")
	c.amount("ram:ChargeAmount", l.Price)
	c.close("ram:NetPriceProductTradePrice")
	c.close("ram:SpecifiedLineTradeAgreement")
	c.open("ram:SpecifiedLineTradeDelivery")
	c.leaf("ram:BilledQuantity", l.Quantity, "unitCode", l.UnitCode)
	c.close("ram:SpecifiedLineTradeDelivery")
	c.open("ram:SpecifiedLineTradeSettlement")
	c.open("ram:ApplicableTradeTax")
	c.leaf("ram:TypeCode", "VAT")
	c.leaf("ram:CategoryCode", l.VATCategory)
	if l.VATCategory != CategoryNotSubject { // BR-O-05
		c.leaf("ram:RateApplicablePercent", FormatRate(l.VATRateBps))
	}
	c.close("ram:ApplicableTradeTax")
	c.open("ram:SpecifiedTradeSettlementLineMonetarySummation")
	c.amount("ram:LineTotalAmount", l.NetAmount)
	c.close("ram:SpecifiedTradeSettlementLineMonetarySummation")
	c.close("ram:SpecifiedLineTradeSettlement")
	c.close("ram:IncludedSupplyChainTradeLineItem")
}

func (c *ciiWriter) agreement() {
	d := c.d
	c.open("ram:ApplicableHeaderTradeAgreement")
	c.opt("ram:BuyerReference", d.BuyerReference)
	c.party("ram:SellerTradeParty", d.Seller, true)
	c.party("ram:BuyerTradeParty", d.Buyer, false)
	if d.PurchaseOrderReference != "" {
		c.open("ram:BuyerOrderReferencedDocument")
		c.leaf("ram:IssuerAssignedID", d.PurchaseOrderReference)
		c.close("ram:BuyerOrderReferencedDocument")
	}
	c.close("ram:ApplicableHeaderTradeAgreement")
}

// party writes the seller (BG-4) or the buyer (BG-7) as a TradeParty.
func (c *ciiWriter) party(name string, p Party, seller bool) {
	c.open(name)
	for _, id := range p.Identifiers { // ID before GlobalID in the schema
		if id.Scheme == "" {
			c.leaf("ram:ID", id.Value)
		}
	}
	for _, id := range p.Identifiers {
		if id.Scheme != "" {
			c.leaf("ram:GlobalID", id.Value, "schemeID", id.Scheme)
		}
	}
	c.leaf("ram:Name", p.Name)
	if p.LegalRegistration != nil || p.TradingName != "" {
		c.open("ram:SpecifiedLegalOrganization")
		if lr := p.LegalRegistration; lr != nil {
			c.leaf("ram:ID", lr.Value, schemeAttr(lr.Scheme)...)
		}
		c.opt("ram:TradingBusinessName", p.TradingName)
		c.close("ram:SpecifiedLegalOrganization")
	}
	if p.Email != "" {
		c.open("ram:DefinedTradeContact")
		c.open("ram:EmailURIUniversalCommunication")
		c.leaf("ram:URIID", p.Email)
		c.close("ram:EmailURIUniversalCommunication")
		c.close("ram:DefinedTradeContact")
	}
	c.address(p.Address)
	if ea := p.ElectronicAddress; ea != nil {
		c.open("ram:URIUniversalCommunication")
		c.leaf("ram:URIID", ea.Value, "schemeID", ea.Scheme)
		c.close("ram:URIUniversalCommunication")
	}
	c.taxRegistration(p.VATID, ciiSchemeVAT)
	if seller {
		c.taxRegistration(p.TaxRegistration, ciiSchemeTax)
	}
	c.close(name)
}

func (c *ciiWriter) taxRegistration(id, scheme string) {
	if id == "" {
		return
	}
	c.open("ram:SpecifiedTaxRegistration")
	c.leaf("ram:ID", id, "schemeID", scheme)
	c.close("ram:SpecifiedTaxRegistration")
}

func (c *ciiWriter) address(a Address) {
	c.open("ram:PostalTradeAddress")
	c.opt("ram:PostcodeCode", a.PostalCode)
	c.opt("ram:LineOne", a.Line1)
	c.opt("ram:LineTwo", a.Line2)
	c.opt("ram:CityName", a.City)
	c.leaf("ram:CountryID", a.CountryCode)
	c.opt("ram:CountrySubDivisionName", a.Subdivision)
	c.close("ram:PostalTradeAddress")
}

// delivery writes ApplicableHeaderTradeDelivery, which the schema requires
// even when empty.
func (c *ciiWriter) delivery() {
	c.open("ram:ApplicableHeaderTradeDelivery")
	if dl := c.d.Delivery; dl != nil {
		if dl.Address != nil {
			c.open("ram:ShipToTradeParty")
			c.address(*dl.Address)
			c.close("ram:ShipToTradeParty")
		}
		if dl.Date != "" {
			c.open("ram:ActualDeliverySupplyChainEvent")
			c.date("ram:OccurrenceDateTime", "udt:DateTimeString", dl.Date)
			c.close("ram:ActualDeliverySupplyChainEvent")
		}
	}
	c.close("ram:ApplicableHeaderTradeDelivery")
}

func (c *ciiWriter) settlement() {
	d := c.d
	c.open("ram:ApplicableHeaderTradeSettlement")
	if pi := d.PaymentInstructions; pi != nil {
		c.opt("ram:PaymentReference", pi.RemittanceInformation)
	}
	c.leaf("ram:InvoiceCurrencyCode", d.Currency)
	c.paymentMeans()
	for _, b := range d.VATBreakdown {
		c.tradeTax(b)
	}
	if p := d.BillingPeriod; p != nil {
		c.open("ram:BillingSpecifiedPeriod")
		if p.Start != "" {
			c.date("ram:StartDateTime", "udt:DateTimeString", p.Start)
		}
		if p.End != "" {
			c.date("ram:EndDateTime", "udt:DateTimeString", p.End)
		}
		c.close("ram:BillingSpecifiedPeriod")
	}
	if d.PaymentTerms != "" || d.DueDate != "" {
		c.open("ram:SpecifiedTradePaymentTerms")
		c.opt("ram:Description", d.PaymentTerms)
		if d.DueDate != "" {
			c.date("ram:DueDateDateTime", "udt:DateTimeString", d.DueDate)
		}
		c.close("ram:SpecifiedTradePaymentTerms")
	}
	c.monetarySummation()
	c.precedingInvoice()
	c.close("ram:ApplicableHeaderTradeSettlement")
}

// precedingInvoice writes BG-3, the invoice a credit note corrects.
func (c *ciiWriter) precedingInvoice() {
	p := c.d.PrecedingInvoice
	if p == nil {
		return
	}
	c.open("ram:InvoiceReferencedDocument")
	c.leaf("ram:IssuerAssignedID", p.Number)
	if p.IssueDate != "" {
		c.date("ram:FormattedIssueDateTime", "qdt:DateTimeString", p.IssueDate)
	}
	c.close("ram:InvoiceReferencedDocument")
}

func (c *ciiWriter) paymentMeans() {
	pi := c.d.PaymentInstructions
	if pi == nil {
		return
	}
	c.open("ram:SpecifiedTradeSettlementPaymentMeans")
	c.leaf("ram:TypeCode", pi.MeansCode)
	if pi.IBAN != "" {
		c.open("ram:PayeePartyCreditorFinancialAccount")
		c.leaf("ram:IBANID", pi.IBAN)
		c.opt("ram:AccountName", pi.AccountName)
		c.close("ram:PayeePartyCreditorFinancialAccount")
	}
	if pi.BIC != "" {
		c.open("ram:PayeeSpecifiedCreditorFinancialInstitution")
		c.leaf("ram:BICID", pi.BIC)
		c.close("ram:PayeeSpecifiedCreditorFinancialInstitution")
	}
	c.close("ram:SpecifiedTradeSettlementPaymentMeans")
}

func (c *ciiWriter) tradeTax(b VATBreakdown) {
	c.open("ram:ApplicableTradeTax")
	c.amount("ram:CalculatedAmount", b.TaxAmount)
	c.leaf("ram:TypeCode", "VAT")
	c.opt("ram:ExemptionReason", b.ExemptionReason)
	c.amount("ram:BasisAmount", b.TaxableAmount)
	c.leaf("ram:CategoryCode", b.Category)
	c.opt("ram:ExemptionReasonCode", b.ExemptionReasonCode)
	if b.Category != CategoryNotSubject { // BR-O-09
		c.leaf("ram:RateApplicablePercent", FormatRate(b.RateBps))
	}
	c.close("ram:ApplicableTradeTax")
}

func (c *ciiWriter) monetarySummation() {
	t := c.d.Totals
	c.open("ram:SpecifiedTradeSettlementHeaderMonetarySummation")
	c.amount("ram:LineTotalAmount", t.LineTotal)
	c.amount("ram:TaxBasisTotalAmount", t.TaxExclusive)
	c.leaf("ram:TaxTotalAmount", formatScaled(t.Tax, c.exp), "currencyID", c.d.Currency)
	c.amount("ram:GrandTotalAmount", t.TaxInclusive)
	if t.Paid != 0 {
		c.amount("ram:TotalPrepaidAmount", t.Paid)
	}
	c.amount("ram:DuePayableAmount", t.Payable)
	c.close("ram:SpecifiedTradeSettlementHeaderMonetarySummation")
}
