package einvoice

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Problem is one EN 16931 business rule a Document breaks: the rule id
// ("BR-S-02"), the path of the invoice record's field a client would change
// to meet it ("issuer.identifiers", "lines[0].tax_category",
// "tax_exemptions", "currency"), and a message naming the rule.
type Problem struct {
	Rule    string
	Path    string
	Message string
}

// The record paths Check reports. The seller is the invoice's issuer
// snapshot (from the company), the buyer its customer snapshot.
const (
	pathSellerIDs     = "issuer.identifiers"
	pathBuyerIDs      = "customer.identifiers"
	pathExemptions    = "tax_exemptions"
	pathDeliveryDate  = "delivery_date"
	pathDeliveryCtry  = "delivery_address.country_code"
	pathBankAccount   = "issuer.bank_account"
	pathBillingPeriod = "billing_period"
	pathInvoiceNumber = "invoice_number" // a credit note's invoice
)

// categoryRules are the per-category rules of EN 16931 on invoice lines and
// VAT breakdowns; the rule ids follow one pattern per category: -02 the
// identifiers the parties need, -05 the rate, -10 the exemption reason.
type categoryRule struct {
	name       string // as EN 16931 names it in its messages
	prefix     string // rule id prefix: BR-S, BR-IC, …
	rate       rateRule
	sellerID   sellerIDRule
	buyerID    buyerIDRule
	wantReason bool // -10: a reason is required (true) or forbidden (false)
}

type rateRule int

const (
	rateZero        rateRule = iota // rate shall be 0
	ratePositive                    // rate shall be greater than 0
	rateNonNegative                 // rate shall be 0 or greater
	rateAbsent                      // no rate (the model's 0)
)

type sellerIDRule int

const (
	sellerVATOrTax sellerIDRule = iota // BT-31, BT-32 and/or BT-63
	sellerVATOnly                      // BT-31 or BT-63
	sellerNoVAT                        // BT-31 and BT-63 forbidden (not subject to VAT)
)

type buyerIDRule int

const (
	buyerAny        buyerIDRule = iota // no requirement
	buyerVATOrLegal                    // BT-48 and/or BT-47
	buyerVAT                           // BT-48
	buyerNoVAT                         // BT-48 forbidden
)

var categoryRules = map[string]categoryRule{
	CategoryStandard:       {"Standard rated", "BR-S", ratePositive, sellerVATOrTax, buyerAny, false},
	CategoryZero:           {"Zero rated", "BR-Z", rateZero, sellerVATOrTax, buyerAny, false},
	CategoryExempt:         {"Exempt from VAT", "BR-E", rateZero, sellerVATOrTax, buyerAny, true},
	CategoryReverseCharge:  {"Reverse charge", "BR-AE", rateZero, sellerVATOrTax, buyerVATOrLegal, true},
	CategoryIntraCommunity: {"Intra-community supply", "BR-IC", rateZero, sellerVATOnly, buyerVAT, true},
	CategoryExport:         {"Export outside the EU", "BR-G", rateZero, sellerVATOnly, buyerAny, true},
	CategoryNotSubject:     {"Not subject to VAT", "BR-O", rateAbsent, sellerNoVAT, buyerNoVAT, true},
	// EN 16931 and CEN's UBL artefact allow IGIC at 0 %, CEN's CII artefact
	// (1.3.16) wants a rate above 0: the service makes documents both pass.
	CategoryCanaryIslands: {"IGIC", "BR-AF", ratePositive, sellerVATOrTax, buyerAny, false},
	CategoryCeutaMelilla:  {"IPSI", "BR-AG", rateNonNegative, sellerVATOrTax, buyerAny, false},
}

// Check reports every EN 16931 business rule d breaks that the service's
// data decides: mandatory terms, the VAT category rules (identifiers,
// rates, exemption reasons), intra-community supply, "not subject to VAT"
// alone, a seller identifier, a currency EN 16931 can carry. The amounts
// themselves are computed once on the write side and not re-checked here
// (Validate checks them in a document read back). Empty means renderable.
func Check(d Document) []Problem {
	c := checker{d: &d}
	c.run()
	return c.problems
}

func (c *checker) run() {
	c.mandatory()
	c.currency()
	c.lines()
	c.breakdown()
	c.sellerIdentifiers()
	c.vatPrefixes()
	c.electronicAddresses()
	c.payment()
	c.periods()
	c.texts()
}

// checker collects problems. taxRepVAT is the seller tax representative's
// VAT identifier (BT-63), which the service never has; the validator sets
// it for documents of others, and foreign: their amounts are decimals as
// written, so a currency with three decimals is fine as long as each
// amount has at most two (the BR-DEC rules, checked there).
type checker struct {
	d         *Document
	taxRepVAT string
	foreign   bool
	syntax    string // of a document read back
	problems  []Problem
}

func (c *checker) add(rule, path, format string, args ...any) {
	c.problems = append(c.problems, Problem{Rule: rule, Path: path, Message: "[" + rule + "] " + fmt.Sprintf(format, args...)})
}

func (c *checker) mandatory() {
	d := c.d
	for _, m := range []struct{ rule, path, value, what string }{
		{"BR-02", "number", d.Number, "an invoice number (BT-1); a draft has none"},
		{"BR-03", "issue_date", d.IssueDate, "an issue date (BT-2)"},
		{"BR-04", "type_code", d.TypeCode, "an invoice type code (BT-3)"},
		{"BR-05", "currency", d.Currency, "a currency code (BT-5)"},
		{"BR-06", "issuer.legal_name", d.Seller.Name, "the seller name (BT-27)"},
		{"BR-07", "customer.name", d.Buyer.Name, "the buyer name (BT-44)"},
		{"BR-09", "issuer.address.country_code", d.Seller.Address.CountryCode, "the seller country code (BT-40)"},
		{"BR-11", "customer.address.country_code", d.Buyer.Address.CountryCode, "the buyer country code (BT-55)"},
	} {
		if m.value == "" {
			c.add(m.rule, m.path, "an invoice shall have %s", m.what)
		}
	}
	if len(d.Lines) == 0 {
		c.add("BR-16", "lines", "an invoice shall have at least one invoice line (BG-25)")
	}
}

func (c *checker) currency() {
	cur := c.d.Currency
	exp, ok := CurrencyExponent(cur)
	if c.foreign {
		exp, ok = 0, ok || strings.Contains(noMinorUnit, cur) && len(cur) == 3
	}
	switch {
	case cur == "":
	case !ok:
		c.add("BR-CL-04", "currency", "the invoice currency %q is not an ISO 4217 code with a minor unit EN 16931 can carry", cur)
	case exp > MaxDecimals:
		c.add("BR-DEC-09", "currency", "%s has %d decimals; EN 16931 allows at most %d in every amount (BR-DEC-09 to BR-DEC-19), so an invoice in it cannot be rendered", cur, exp, MaxDecimals)
	}
}

// noMinorUnit are the codes of EN 16931's currency list without a minor
// unit (metals, special drawing rights, test codes): valid in a document
// read back, never written by the service.
const noMinorUnit = "XAG XAU XBA XBB XBC XBD XDR XPD XPT XSU XTS XUA XXX"

func linePath(i int, field string) string { return "lines[" + strconv.Itoa(i) + "]." + field }

func (c *checker) lines() {
	seen := map[string]bool{} // categories whose party identifiers were checked
	for i, l := range c.d.Lines {
		c.lineTerms(i, l)
		r, ok := categoryRules[l.VATCategory]
		if !ok && c.splitPayment(l.VATCategory) {
			continue
		}
		if !ok {
			if l.VATCategory == "" {
				c.add("BR-CO-04", linePath(i, "tax_category"), "each invoice line shall be categorized with a VAT category code (BT-151)")
			} else {
				c.add("BR-CL-18", linePath(i, "tax_category"), "VAT category code %q is not one EN 16931 knows (S, Z, E, AE, K, G, O, L, M)", l.VATCategory)
			}
			continue
		}
		c.lineRate(i, l, r)
		if !seen[l.VATCategory] {
			seen[l.VATCategory] = true
			c.partyIDs(r)
		}
	}
	c.notSubjectAlone()
}

// splitPayment: category B (Italian split payment) is in EN 16931's list
// but not among the service's categories; in a document read back it is
// accepted, its own rules (BR-B-*) are not checked.
func (c *checker) splitPayment(category string) bool {
	return c.foreign && category == "B"
}

func (c *checker) lineTerms(i int, l Line) {
	for _, m := range []struct{ rule, field, value, what string }{
		{"BR-21", "position", l.ID, "an invoice line identifier (BT-126)"},
		{"BR-22", "quantity", l.Quantity, "an invoiced quantity (BT-129)"},
		{"BR-23", "unit_code", l.UnitCode, "a unit of measure code (BT-130)"},
		{"BR-25", "description", l.ItemName, "an item name (BT-153)"},
	} {
		if m.value == "" {
			c.add(m.rule, linePath(i, m.field), "each invoice line shall have %s", m.what)
		}
	}
	if l.Price < 0 {
		c.add("BR-27", linePath(i, "unit_amount_minor"), "the item net price (BT-146) shall not be negative")
	}
}

func (c *checker) lineRate(i int, l Line, r categoryRule) {
	if c.foreign && c.syntax == SyntaxUBL && l.VATCategory == CategoryCanaryIslands {
		r.rate = rateNonNegative // what CEN's UBL artefact checks
	}
	bad := false
	switch r.rate {
	case rateZero, rateAbsent:
		bad = l.VATRateBps != 0
	case ratePositive:
		bad = l.VATRateBps <= 0
	case rateNonNegative:
		bad = l.VATRateBps < 0
	}
	if !bad {
		return
	}
	want := map[rateRule]string{rateZero: "shall be 0", ratePositive: "shall be greater than 0",
		rateNonNegative: "shall be 0 or greater", rateAbsent: "shall be absent (0 here)"}[r.rate]
	c.add(r.prefix+"-05", linePath(i, "tax_rate_bps"), "in an invoice line with VAT category %q (%s) the VAT rate (BT-152) %s", l.VATCategory, r.name, want)
}

// partyIDs checks rule -02 of a category used on a line: the identifiers
// the seller and the buyer must (or must not) have.
func (c *checker) partyIDs(r categoryRule) {
	s, b := c.d.Seller, c.d.Buyer
	rule := r.prefix + "-02"
	switch r.sellerID {
	case sellerVATOrTax:
		if s.VATID == "" && s.TaxRegistration == "" && c.taxRepVAT == "" {
			c.add(rule, pathSellerIDs, "an invoice with %s lines shall contain the seller VAT identifier (BT-31) or the seller tax registration identifier (BT-32)", r.name)
		}
	case sellerVATOnly:
		if s.VATID == "" && c.taxRepVAT == "" {
			c.add(rule, pathSellerIDs, "an invoice with %s lines shall contain the seller VAT identifier (BT-31)", r.name)
		}
	case sellerNoVAT:
		if s.VATID != "" || c.taxRepVAT != "" {
			c.add(rule, pathSellerIDs, "an invoice with %s lines shall not contain the seller VAT identifier (BT-31)", r.name)
		}
	}
	switch r.buyerID {
	case buyerVATOrLegal:
		if b.VATID == "" && b.LegalRegistration == nil {
			c.add(rule, pathBuyerIDs, "an invoice with %s lines shall contain the buyer VAT identifier (BT-48) or legal registration identifier (BT-47)", r.name)
		}
	case buyerVAT:
		if b.VATID == "" {
			c.add(rule, pathBuyerIDs, "an invoice with %s lines shall contain the buyer VAT identifier (BT-48)", r.name)
		}
	case buyerNoVAT:
		if b.VATID != "" {
			c.add(rule, pathBuyerIDs, "an invoice with %s lines shall not contain the buyer VAT identifier (BT-48)", r.name)
		}
	}
}

// notSubjectAlone: BR-O-11/12, "not subject to VAT" excludes every other
// category on the same invoice.
func (c *checker) notSubjectAlone() {
	hasO := false
	for _, l := range c.d.Lines {
		hasO = hasO || l.VATCategory == CategoryNotSubject
	}
	if !hasO {
		return
	}
	for i, l := range c.d.Lines {
		if l.VATCategory != CategoryNotSubject {
			c.add("BR-O-12", linePath(i, "tax_category"), "an invoice with \"Not subject to VAT\" lines shall not contain lines of category %q", l.VATCategory)
		}
	}
	for _, b := range c.d.VATBreakdown {
		if b.Category != CategoryNotSubject {
			c.add("BR-O-11", "lines", "an invoice with a \"Not subject to VAT\" VAT breakdown shall not contain other VAT breakdowns (here %q)", b.Category)
			return
		}
	}
}

// breakdown checks the exemption reasons (-10) and intra-community supply
// (BR-IC-11/12) on each VAT breakdown.
func (c *checker) breakdown() {
	if len(c.d.VATBreakdown) == 0 && len(c.d.Lines) > 0 {
		c.add("BR-CO-18", "lines", "an invoice shall have at least one VAT breakdown (BG-23)")
	}
	for _, b := range c.d.VATBreakdown {
		r, ok := categoryRules[b.Category]
		if !ok && c.splitPayment(b.Category) {
			continue
		}
		if !ok {
			c.add("BR-CL-17", "lines", "VAT breakdown category code %q is not one EN 16931 knows", b.Category)
			continue
		}
		hasReason := b.ExemptionReason != "" || b.ExemptionReasonCode != ""
		switch {
		case r.wantReason && !hasReason:
			c.add(r.prefix+"-10", pathExemptions, "a VAT breakdown of category %q (%s) shall have an exemption reason (BT-120) or reason code (BT-121)", b.Category, r.name)
		case !r.wantReason && hasReason:
			c.add(r.prefix+"-10", pathExemptions, "a VAT breakdown of category %q (%s) shall not have an exemption reason (BT-120) or reason code (BT-121)", b.Category, r.name)
		}
		if b.Category == CategoryIntraCommunity {
			c.intraCommunity()
		}
	}
}

func (c *checker) intraCommunity() {
	dl, p := c.d.Delivery, c.d.BillingPeriod
	if (dl == nil || dl.Date == "") && (p == nil || (p.Start == "" && p.End == "")) {
		c.add("BR-IC-11", pathDeliveryDate, "an intra-community supply shall have the actual delivery date (BT-72) or the invoicing period (BG-14)")
	}
	if dl == nil || dl.Address == nil || dl.Address.CountryCode == "" {
		c.add("BR-IC-12", pathDeliveryCtry, "an intra-community supply shall have the deliver to country code (BT-80)")
	}
}

// sellerIdentifiers: BR-CO-26, a buyer must be able to identify the seller.
func (c *checker) sellerIdentifiers() {
	s := c.d.Seller
	if len(s.Identifiers) == 0 && s.LegalRegistration == nil && s.VATID == "" {
		c.add("BR-CO-26", pathSellerIDs, "the seller identifier (BT-29), the seller legal registration identifier (BT-30) and/or the seller VAT identifier (BT-31) shall be present")
	}
}

// vatPrefixes: BR-CO-09, a VAT identifier starts with its ISO 3166-1
// alpha-2 country prefix (EL for Greece).
func (c *checker) vatPrefixes() {
	for _, v := range []struct{ id, path, what string }{
		{c.d.Seller.VATID, pathSellerIDs, "seller VAT identifier (BT-31)"},
		{c.taxRepVAT, pathSellerIDs, "seller tax representative VAT identifier (BT-63)"},
		{c.d.Buyer.VATID, pathBuyerIDs, "buyer VAT identifier (BT-48)"},
	} {
		if v.id != "" && !(len(v.id) > 2 && isUpper(v.id[0]) && isUpper(v.id[1])) {
			c.add("BR-CO-09", v.path, "the %s shall start with an ISO 3166-1 alpha-2 country prefix", v.what)
		}
	}
}

func isUpper(b byte) bool { return b >= 'A' && b <= 'Z' }

func (c *checker) electronicAddresses() {
	if ea := c.d.Seller.ElectronicAddress; ea != nil && ea.Scheme == "" {
		c.add("BR-62", "issuer.electronic_address.scheme", "the seller electronic address (BT-34) shall have a scheme identifier")
	}
	if ea := c.d.Buyer.ElectronicAddress; ea != nil && ea.Scheme == "" {
		c.add("BR-63", "customer.electronic_address.scheme", "the buyer electronic address (BT-49) shall have a scheme identifier")
	}
}

func (c *checker) payment() {
	pi := c.d.PaymentInstructions
	if pi == nil {
		return
	}
	if pi.MeansCode == "" {
		c.add("BR-49", pathBankAccount, "a payment instruction (BG-16) shall specify the payment means type code (BT-81)")
	}
	if pi.IBAN == "" && (pi.MeansCode == "30" || pi.MeansCode == "58") {
		c.add("BR-61", pathBankAccount, "a credit transfer (payment means %s) shall have the payment account identifier (BT-84)", pi.MeansCode)
	}
}

// periods: BR-29 (the invoicing period ends on or after its start; dates
// compare as strings in YYYY-MM-DD), BR-57 (a deliver to address has a
// country) and BR-55 (a preceding invoice reference names the invoice).
func (c *checker) periods() {
	if p := c.d.BillingPeriod; p != nil {
		if p.Start == "" && p.End == "" {
			c.add("BR-CO-19", pathBillingPeriod, "an invoicing period (BG-14) shall have a start date (BT-73) or an end date (BT-74)")
		}
		if p.Start != "" && p.End != "" && p.End < p.Start {
			c.add("BR-29", pathBillingPeriod, "the invoicing period end date (BT-74) shall be on or after its start date (BT-73)")
		}
	}
	if dl := c.d.Delivery; dl != nil && dl.Address != nil && dl.Address.CountryCode == "" {
		c.add("BR-57", pathDeliveryCtry, "each deliver to address (BG-15) shall contain a deliver to country code (BT-80)")
	}
	if p := c.d.PrecedingInvoice; p != nil && p.Number == "" {
		c.add("BR-55", pathInvoiceNumber, "each preceding invoice reference (BG-3) shall contain a preceding invoice reference (BT-25)")
	}
}

// texts finds text XML 1.0 cannot carry (U+FFFE, U+FFFF; control
// characters never pass the write side's text rules): such a document
// cannot be written at all. The rule id is the XML specification's
// production, not a BR rule.
func (c *checker) texts() {
	d := c.d
	fields := []struct{ path, value string }{
		{"issuer.legal_name", d.Seller.Name}, {"issuer.trading_name", d.Seller.TradingName},
		{"issuer.address", d.Seller.Address.Line1 + d.Seller.Address.Line2 + d.Seller.Address.City + d.Seller.Address.PostalCode + d.Seller.Address.Subdivision},
		{"customer.name", d.Buyer.Name},
		{"customer.address", d.Buyer.Address.Line1 + d.Buyer.Address.Line2 + d.Buyer.Address.City + d.Buyer.Address.PostalCode + d.Buyer.Address.Subdivision},
		{"buyer_reference", d.BuyerReference}, {"purchase_order_reference", d.PurchaseOrderReference},
		{"terms", d.PaymentTerms},
	}
	notes := "notes"
	if d.TypeCode == TypeCreditNote { // its note is its reason
		notes = "reason"
	}
	for _, n := range d.Notes {
		fields = append(fields, struct{ path, value string }{notes, n})
	}
	for i, l := range d.Lines {
		fields = append(fields, struct{ path, value string }{linePath(i, "description"), l.ItemName + l.Note})
	}
	for _, f := range fields {
		if !xmlText(f.value) {
			c.add("XML-Char", f.path, "the text holds a character XML 1.0 cannot carry (such as U+FFFE or U+FFFF)")
		}
	}
}

func xmlText(s string) bool {
	for _, r := range s {
		if !isXMLChar(r) || (r == utf8.RuneError && !utf8.ValidString(s)) {
			return false
		}
	}
	return true
}
