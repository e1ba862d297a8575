package einvoice

import "strings"

// readUBL reads the business terms of a UBL Invoice or CreditNote.
func readUBL(root *node) *readBack {
	rb := &readBack{specID: root.str("CustomizationID")}
	d := &rb.doc
	names := ublInvoice
	if root.local == ublCreditNote.root {
		names = ublCreditNote
	}
	lineName, qtyName, typeName := local(names.line), local(names.quantity), local(names.typeCode)
	d.Number, d.IssueDate, d.DueDate = root.str("ID"), root.str("IssueDate"), root.str("DueDate")
	d.TypeCode, d.Currency = root.str(typeName), root.str("DocumentCurrencyCode")
	d.BuyerReference, d.PurchaseOrderReference = root.str("BuyerReference"), root.str("OrderReference", "ID")
	for _, n := range root.all("Note") {
		d.Notes = append(d.Notes, n.text.String())
	}
	d.PaymentTerms = root.raw("PaymentTerms", "Note")
	if r := root.at("BillingReference", "InvoiceDocumentReference"); r != nil {
		d.PrecedingInvoice = &DocumentReference{Number: r.str("ID"), IssueDate: r.str("IssueDate")}
	}
	d.Seller, rb.sellerAddress = ublParty(root.at("AccountingSupplierParty", "Party"), true)
	d.Buyer, rb.buyerAddress = ublParty(root.at("AccountingCustomerParty", "Party"), false)
	rb.taxRepVAT = root.str("TaxRepresentativeParty", "PartyTaxScheme", "CompanyID")
	if dl := root.at("Delivery"); dl != nil {
		d.Delivery = &Delivery{Date: dl.str("ActualDeliveryDate")}
		if a := dl.at("DeliveryLocation", "Address"); a != nil {
			addr := ublAddress(a)
			d.Delivery.Address = &addr
		}
	}
	if p := root.at("InvoicePeriod"); p != nil {
		d.BillingPeriod = &Period{Start: p.str("StartDate"), End: p.str("EndDate")}
	}
	if pm := root.at("PaymentMeans"); pm != nil {
		d.PaymentInstructions = &PaymentInstructions{MeansCode: pm.str("PaymentMeansCode"), RemittanceInformation: pm.str("PaymentID"),
			IBAN: pm.str("PayeeFinancialAccount", "ID"), AccountName: pm.str("PayeeFinancialAccount", "Name"),
			BIC: pm.str("PayeeFinancialAccount", "FinancialInstitutionBranch", "ID")}
	}
	for _, l := range root.all(lineName) {
		rb.ublLine(l, qtyName)
	}
	rb.ublTaxes(root)
	for _, ac := range root.all("AllowanceCharge") {
		rb.allowances = append(rb.allowances, rbAllowance{charge: ac.str("ChargeIndicator") == "true",
			amount: rb.amount(ac.str("Amount")), category: ac.str("TaxCategory", "ID"), rate: rb.amount(ac.str("TaxCategory", "Percent"))})
	}
	rb.ublTotals(root.at("LegalMonetaryTotal"))
	return rb
}

// local is a prefixed name without its prefix.
func local(name string) string {
	_, l, _ := strings.Cut(name, ":")
	return l
}

func ublParty(p *node, seller bool) (Party, bool) {
	if p == nil {
		return Party{}, false
	}
	party := Party{Name: p.str("PartyLegalEntity", "RegistrationName"), TradingName: p.str("PartyName", "Name"),
		Email: p.str("Contact", "ElectronicMail")}
	if e := p.at("EndpointID"); e != nil {
		party.ElectronicAddress = &ElectronicAddress{Scheme: e.attr("schemeID"), Value: p.str("EndpointID")}
	}
	for _, id := range p.all("PartyIdentification") {
		party.Identifiers = append(party.Identifiers, Identifier{Scheme: id.at("ID").attr("schemeID"), Value: id.str("ID")})
	}
	if lr := p.at("PartyLegalEntity", "CompanyID"); lr != nil {
		party.LegalRegistration = &Identifier{Scheme: lr.attr("schemeID"), Value: p.str("PartyLegalEntity", "CompanyID")}
	}
	for _, ts := range p.all("PartyTaxScheme") {
		if ts.str("TaxScheme", "ID") == "VAT" {
			party.VATID = ts.str("CompanyID")
		} else if seller {
			party.TaxRegistration = ts.str("CompanyID")
		}
	}
	a := p.at("PostalAddress")
	if a != nil {
		party.Address = ublAddress(a)
	}
	return party, a != nil
}

func ublAddress(a *node) Address {
	return Address{Line1: a.str("StreetName"), Line2: a.str("AdditionalStreetName"), City: a.str("CityName"),
		PostalCode: a.str("PostalZone"), Subdivision: a.str("CountrySubentity"), CountryCode: a.str("Country", "IdentificationCode")}
}

func (rb *readBack) ublLine(l *node, qtyName string) {
	q := l.at(qtyName)
	line := Line{ID: l.str("ID"), Note: l.raw("Note"), Quantity: l.str(qtyName), UnitCode: q.attr("unitCode"),
		ItemName: l.str("Item", "Name"), VATCategory: l.str("Item", "ClassifiedTaxCategory", "ID")}
	rl := rbLine{net: rb.limited("BR-DEC-23", "BT-131", l.str("LineExtensionAmount")), price: rb.amount(l.str("Price", "PriceAmount")),
		category: line.VATCategory, rate: rb.amount(l.str("Item", "ClassifiedTaxCategory", "Percent"))}
	line.VATRateBps, line.Price = rateBps(rl.rate), ratSign(rl.price)
	rb.doc.Lines = append(rb.doc.Lines, line)
	rb.lines = append(rb.lines, rl)
}

// ublTaxes reads the TaxTotal in the document currency (a second one may
// carry the VAT in accounting currency, BT-111, without subtotals).
func (rb *readBack) ublTaxes(root *node) {
	for _, tt := range root.all("TaxTotal") {
		if tt.at("TaxAmount").attr("currencyID") != rb.doc.Currency && tt.at("TaxSubtotal") == nil {
			continue
		}
		rb.tax = rb.limited("BR-DEC-13", "BT-110", tt.str("TaxAmount"))
		for _, st := range tt.all("TaxSubtotal") {
			b := VATBreakdown{Category: st.str("TaxCategory", "ID"), ExemptionReason: st.raw("TaxCategory", "TaxExemptionReason"),
				ExemptionReasonCode: st.str("TaxCategory", "TaxExemptionReasonCode")}
			t := rbTax{taxable: rb.limited("BR-DEC-19", "BT-116", st.str("TaxableAmount")), tax: rb.limited("BR-DEC-20", "BT-117", st.str("TaxAmount")),
				category: b.Category, rate: rb.amount(st.str("TaxCategory", "Percent"))}
			b.RateBps = rateBps(t.rate)
			rb.doc.VATBreakdown = append(rb.doc.VATBreakdown, b)
			rb.taxes = append(rb.taxes, t)
		}
		return
	}
}

func (rb *readBack) ublTotals(t *node) {
	if t == nil {
		return
	}
	rb.lineTotal = rb.limited("BR-DEC-09", "BT-106", t.str("LineExtensionAmount"))
	rb.allowanceTotal = rb.limited("BR-DEC-10", "BT-107", t.str("AllowanceTotalAmount"))
	rb.chargeTotal = rb.limited("BR-DEC-11", "BT-108", t.str("ChargeTotalAmount"))
	rb.taxExclusive = rb.limited("BR-DEC-12", "BT-109", t.str("TaxExclusiveAmount"))
	rb.taxInclusive = rb.limited("BR-DEC-14", "BT-112", t.str("TaxInclusiveAmount"))
	rb.paid = rb.limited("BR-DEC-16", "BT-113", t.str("PrepaidAmount"))
	rb.rounding = rb.limited("BR-DEC-17", "BT-114", t.str("PayableRoundingAmount"))
	rb.payable = rb.limited("BR-DEC-18", "BT-115", t.str("PayableAmount"))
}

// readCII reads the business terms of a CII CrossIndustryInvoice.
func readCII(root *node) *readBack {
	rb := &readBack{specID: root.str("ExchangedDocumentContext", "GuidelineSpecifiedDocumentContextParameter", "ID")}
	d := &rb.doc
	ed := root.at("ExchangedDocument")
	d.Number, d.TypeCode, d.IssueDate = ed.str("ID"), ed.str("TypeCode"), ed.str("IssueDateTime", "DateTimeString")
	for _, n := range ed.all("IncludedNote") {
		d.Notes = append(d.Notes, n.raw("Content"))
	}
	tx := root.at("SupplyChainTradeTransaction")
	agr, dlv, set := tx.at("ApplicableHeaderTradeAgreement"), tx.at("ApplicableHeaderTradeDelivery"), tx.at("ApplicableHeaderTradeSettlement")
	d.BuyerReference, d.PurchaseOrderReference = agr.str("BuyerReference"), agr.str("BuyerOrderReferencedDocument", "IssuerAssignedID")
	d.Seller, rb.sellerAddress = ciiParty(agr.at("SellerTradeParty"))
	d.Buyer, rb.buyerAddress = ciiParty(agr.at("BuyerTradeParty"))
	for _, tr := range agr.all("SpecifiedTaxRegistration", "SellerTaxRepresentativeTradeParty") {
		rb.taxRepVAT = tr.str("ID")
	}
	if dlv.at("ShipToTradeParty") != nil || dlv.at("ActualDeliverySupplyChainEvent") != nil {
		d.Delivery = &Delivery{Date: dlv.str("ActualDeliverySupplyChainEvent", "OccurrenceDateTime", "DateTimeString")}
		if a := dlv.at("ShipToTradeParty", "PostalTradeAddress"); a != nil {
			addr := ciiAddress(a)
			d.Delivery.Address = &addr
		}
	}
	for _, l := range tx.all("IncludedSupplyChainTradeLineItem") {
		rb.ciiLine(l)
	}
	rb.ciiSettlement(set)
	return rb
}

func ciiParty(p *node) (Party, bool) {
	if p == nil {
		return Party{}, false
	}
	party := Party{Name: p.str("Name"), TradingName: p.str("SpecifiedLegalOrganization", "TradingBusinessName"),
		Email: p.str("DefinedTradeContact", "EmailURIUniversalCommunication", "URIID")}
	for _, k := range p.kids {
		if k.local == "ID" || k.local == "GlobalID" {
			party.Identifiers = append(party.Identifiers, Identifier{Scheme: k.attr("schemeID"), Value: p.str(k.local)})
		}
	}
	if lr := p.at("SpecifiedLegalOrganization", "ID"); lr != nil {
		party.LegalRegistration = &Identifier{Scheme: lr.attr("schemeID"), Value: p.str("SpecifiedLegalOrganization", "ID")}
	}
	if e := p.at("URIUniversalCommunication", "URIID"); e != nil {
		party.ElectronicAddress = &ElectronicAddress{Scheme: e.attr("schemeID"), Value: p.str("URIUniversalCommunication", "URIID")}
	}
	for _, tr := range p.all("SpecifiedTaxRegistration") {
		switch tr.at("ID").attr("schemeID") {
		case ciiSchemeVAT:
			party.VATID = tr.str("ID")
		case ciiSchemeTax:
			party.TaxRegistration = tr.str("ID")
		}
	}
	a := p.at("PostalTradeAddress")
	if a != nil {
		party.Address = ciiAddress(a)
	}
	return party, a != nil
}

func ciiAddress(a *node) Address {
	return Address{Line1: a.str("LineOne"), Line2: a.str("LineTwo"), City: a.str("CityName"),
		PostalCode: a.str("PostcodeCode"), Subdivision: a.str("CountrySubDivisionName"), CountryCode: a.str("CountryID")}
}

func (rb *readBack) ciiLine(l *node) {
	set := l.at("SpecifiedLineTradeSettlement")
	tax := set.at("ApplicableTradeTax")
	line := Line{ID: l.str("AssociatedDocumentLineDocument", "LineID"), Note: l.raw("AssociatedDocumentLineDocument", "IncludedNote", "Content"),
		Quantity: l.str("SpecifiedLineTradeDelivery", "BilledQuantity"), UnitCode: l.at("SpecifiedLineTradeDelivery", "BilledQuantity").attr("unitCode"),
		ItemName: l.str("SpecifiedTradeProduct", "Name"), VATCategory: tax.str("CategoryCode")}
	rl := rbLine{net: rb.limited("BR-DEC-23", "BT-131", set.str("SpecifiedTradeSettlementLineMonetarySummation", "LineTotalAmount")),
		price:    rb.amount(l.str("SpecifiedLineTradeAgreement", "NetPriceProductTradePrice", "ChargeAmount")),
		category: line.VATCategory, rate: rb.amount(tax.str("RateApplicablePercent"))}
	line.VATRateBps, line.Price = rateBps(rl.rate), ratSign(rl.price)
	rb.doc.Lines = append(rb.doc.Lines, line)
	rb.lines = append(rb.lines, rl)
}

func (rb *readBack) ciiSettlement(set *node) {
	d := &rb.doc
	d.Currency = set.str("InvoiceCurrencyCode")
	if pm := set.at("SpecifiedTradeSettlementPaymentMeans"); pm != nil {
		iban := pm.str("PayeePartyCreditorFinancialAccount", "IBANID")
		if iban == "" {
			iban = pm.str("PayeePartyCreditorFinancialAccount", "ProprietaryID")
		}
		d.PaymentInstructions = &PaymentInstructions{MeansCode: pm.str("TypeCode"), RemittanceInformation: set.str("PaymentReference"),
			IBAN: iban, AccountName: pm.str("PayeePartyCreditorFinancialAccount", "AccountName"),
			BIC: pm.str("PayeeSpecifiedCreditorFinancialInstitution", "BICID")}
	}
	for _, t := range set.all("ApplicableTradeTax") {
		b := VATBreakdown{Category: t.str("CategoryCode"), ExemptionReason: t.raw("ExemptionReason"), ExemptionReasonCode: t.str("ExemptionReasonCode")}
		rt := rbTax{taxable: rb.limited("BR-DEC-19", "BT-116", t.str("BasisAmount")), tax: rb.limited("BR-DEC-20", "BT-117", t.str("CalculatedAmount")),
			category: b.Category, rate: rb.amount(t.str("RateApplicablePercent"))}
		b.RateBps = rateBps(rt.rate)
		d.VATBreakdown = append(d.VATBreakdown, b)
		rb.taxes = append(rb.taxes, rt)
	}
	if p := set.at("BillingSpecifiedPeriod"); p != nil {
		d.BillingPeriod = &Period{Start: p.str("StartDateTime", "DateTimeString"), End: p.str("EndDateTime", "DateTimeString")}
	}
	d.PaymentTerms = set.raw("SpecifiedTradePaymentTerms", "Description")
	if r := set.at("InvoiceReferencedDocument"); r != nil {
		d.PrecedingInvoice = &DocumentReference{Number: r.str("IssuerAssignedID"), IssueDate: r.str("FormattedIssueDateTime", "DateTimeString")}
	}
	d.DueDate = set.str("SpecifiedTradePaymentTerms", "DueDateDateTime", "DateTimeString")
	for _, ac := range set.all("SpecifiedTradeAllowanceCharge") {
		rb.allowances = append(rb.allowances, rbAllowance{charge: ac.str("ChargeIndicator", "Indicator") == "true",
			amount: rb.amount(ac.str("ActualAmount")), category: ac.str("CategoryTradeTax", "CategoryCode"),
			rate: rb.amount(ac.str("CategoryTradeTax", "RateApplicablePercent"))})
	}
	rb.ciiTotals(set.at("SpecifiedTradeSettlementHeaderMonetarySummation"))
}

func (rb *readBack) ciiTotals(t *node) {
	if t == nil {
		return
	}
	rb.lineTotal = rb.limited("BR-DEC-09", "BT-106", t.str("LineTotalAmount"))
	rb.allowanceTotal = rb.limited("BR-DEC-10", "BT-107", t.str("AllowanceTotalAmount"))
	rb.chargeTotal = rb.limited("BR-DEC-11", "BT-108", t.str("ChargeTotalAmount"))
	rb.taxExclusive = rb.limited("BR-DEC-12", "BT-109", t.str("TaxBasisTotalAmount"))
	for _, tt := range t.all("TaxTotalAmount") {
		if tt.attr("currencyID") == rb.doc.Currency {
			rb.tax = rb.limited("BR-DEC-13", "BT-110", strings.TrimSpace(tt.text.String()))
		}
	}
	rb.taxInclusive = rb.limited("BR-DEC-14", "BT-112", t.str("GrandTotalAmount"))
	rb.paid = rb.limited("BR-DEC-16", "BT-113", t.str("TotalPrepaidAmount"))
	rb.rounding = rb.limited("BR-DEC-17", "BT-114", t.str("RoundingAmount"))
	rb.payable = rb.limited("BR-DEC-18", "BT-115", t.str("DuePayableAmount"))
}
