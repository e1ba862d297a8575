package command

import (
	"math/big"
	"regexp"
	"slices"
	"strings"

	"github.com/invoicing/invoicing/events"
)

// The values of issue 22 (the invoice as a legal document): payment and
// delivery details, VAT categories, exemption reasons. All optional.
var (
	// unitCode is a UN/ECE Recommendation 20 or 21 code (C62, HUR, KGM, XBX).
	unitCode = text{min: 2, max: 3, pattern: regexp.MustCompile(`^[A-Z0-9]{2,3}$`), hint: "a UN/ECE Recommendation 20 or 21 unit code such as C62, HUR or KGM"}
	// easScheme is a code of the EAS code list: four digits (ISO 6523
	// ICD, such as 0088 or 9930) or letters (EM, AN, AQ, AS, AU).
	easScheme = text{min: 2, max: 4, pattern: regexp.MustCompile(`^(?:[0-9]{4}|[A-Z]{2})$`), hint: "an EAS code such as 0088, 9930 or EM"}
	// bic is ISO 9362: bank, country, location and an optional branch.
	bic         = text{min: 8, max: 11, pattern: regexp.MustCompile(`^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}(?:[A-Z0-9]{3})?$`), hint: "a BIC (ISO 9362) of 8 or 11 characters"}
	ibanShape   = regexp.MustCompile(`^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$`)
	vatexCode   = text{min: 1, max: 64, pattern: regexp.MustCompile(`^[A-Z0-9][A-Z0-9-]{0,63}$`), hint: "a VATEX code such as VATEX-EU-132"}
	reasonText  = text{min: 1, max: 1000, multiline: true}
	exemptTaxes = []string{events.TaxExempt, events.TaxReverseCharge, events.TaxIntraCommunity, events.TaxExport, events.TaxNotSubject}
)

// bankAccount reads an optional bank account: an IBAN (ISO 13616, its
// check digits verified), a BIC and an account name.
func (o object) bankAccount(field string) *events.BankAccount {
	v, ok := o.get(field)
	if !ok {
		return nil
	}
	path := join(o.path, field)
	b, ok := o.r.openObject(path, v, "iban", "bic", "account_name")
	if !ok {
		return nil
	}
	a := &events.BankAccount{
		IBAN:        b.reqStr("iban", text{min: 15, max: 34}),
		BIC:         b.str("bic", bic),
		AccountName: b.str("account_name", name200),
	}
	if a.IBAN != "" && !validIBAN(a.IBAN) {
		o.r.add(join(path, "iban"), "must be an IBAN (ISO 13616: country, check digits, account; uppercase, no spaces) whose check digits are right")
	}
	return a
}

// validIBAN checks an IBAN's shape and its ISO 7064 mod 97-10 check
// digits: moved to the end, letters as 10..35, the number mod 97 is 1.
func validIBAN(s string) bool {
	if !ibanShape.MatchString(s) {
		return false
	}
	var digits strings.Builder
	for _, c := range s[4:] + s[:4] {
		if c >= 'A' && c <= 'Z' {
			digits.WriteString(big.NewInt(int64(c-'A') + 10).String())
		} else {
			digits.WriteRune(c)
		}
	}
	n, ok := new(big.Int).SetString(digits.String(), 10)
	return ok && new(big.Int).Mod(n, big.NewInt(97)).Int64() == 1
}

// electronicAddress reads an optional electronic address {scheme, value}.
func (o object) electronicAddress(field string) *events.ElectronicAddress {
	v, ok := o.get(field)
	if !ok {
		return nil
	}
	e, ok := o.r.openObject(join(o.path, field), v, "scheme", "value")
	if !ok {
		return nil
	}
	return &events.ElectronicAddress{Scheme: e.reqStr("scheme", easScheme), Value: e.reqStr("value", text{min: 1, max: 200})}
}

// documentTerms reads the invoice's optional document fields.
func (o object) documentTerms() events.DocumentTerms {
	t := events.DocumentTerms{
		BuyerReference: o.str("buyer_reference", reference),
		DeliveryDate:   o.str("delivery_date", text{min: 1, max: 10}),
		TaxExemptions:  o.taxExemptions("tax_exemptions"),
	}
	parseDate(o.r, "delivery_date", t.DeliveryDate)
	if v, ok := o.get("delivery_address"); ok {
		a := o.r.address("delivery_address", v)
		t.DeliveryAddress = &a
	}
	t.BillingPeriod = o.period("billing_period")
	return t
}

// period reads an optional {start, end}: at least one, end not before
// start.
func (o object) period(field string) *events.Period {
	v, ok := o.get(field)
	if !ok {
		return nil
	}
	path := join(o.path, field)
	p, ok := o.r.openObject(path, v, "start", "end")
	if !ok {
		return nil
	}
	out := &events.Period{Start: p.str("start", text{min: 1, max: 10}), End: p.str("end", text{min: 1, max: 10})}
	start, startOK := parseDate(o.r, join(path, "start"), out.Start)
	end, endOK := parseDate(o.r, join(path, "end"), out.End)
	switch {
	case out.Start == "" && out.End == "":
		o.r.add(path, "must have a start, an end or both")
	case startOK && endOK && end.Before(start):
		o.r.add(join(path, "end"), "must not be before start")
	}
	return out
}

// taxExemptions reads the exemption reasons: one entry per category, each
// one of E, AE, K, G, O with a reason, a reason code or both.
func (o object) taxExemptions(field string) []events.TaxExemption {
	items, ok := o.array(field, 0, len(exemptTaxes), false)
	if !ok {
		return nil
	}
	path := join(o.path, field)
	var out []events.TaxExemption
	seen := map[string]bool{}
	for i, item := range items {
		p := index(path, i)
		e, ok := o.r.openObject(p, item, "tax_category", "reason", "reason_code")
		if !ok {
			continue
		}
		x := events.TaxExemption{TaxCategory: e.reqStr("tax_category", text{min: 1, max: 2}),
			Reason: e.str("reason", reasonText), ReasonCode: e.str("reason_code", vatexCode)}
		switch {
		case x.TaxCategory != "" && !slices.Contains(exemptTaxes, x.TaxCategory):
			o.r.add(join(p, "tax_category"), "must be one of E, AE, K, G, O (the categories that need an exemption reason)")
		case seen[x.TaxCategory]:
			o.r.add(join(p, "tax_category"), "must not repeat a category of an earlier entry")
		}
		if _, r := e.get("reason"); !r {
			if _, c := e.get("reason_code"); !c {
				o.r.add(p, "must have a reason, a reason_code or both")
			}
		}
		seen[x.TaxCategory] = true
		out = append(out, x)
	}
	return out
}

// lineTax reads a line's unit code and VAT category and checks the
// category against the rate (when the rate itself is valid): S needs a
// rate above 0, Z, E, AE, K, G and O forbid one.
func (o object) lineTax(l *LineInput, rateOK bool) {
	l.UnitCode = o.str("unit_code", unitCode)
	l.TaxCategory = o.str("tax_category", text{min: 1, max: 2})
	path := join(o.path, "tax_category")
	if l.TaxCategory == "" {
		return
	}
	if !slices.Contains(events.TaxCategories, l.TaxCategory) {
		o.r.add(path, "must be one of %s", strings.Join(events.TaxCategories, ", "))
		return
	}
	if !rateOK {
		return
	}
	switch needs, forbids := events.RateRule(l.TaxCategory); {
	case needs && l.TaxRateBps == 0:
		o.r.add(path, "%s (standard rated) needs a tax_rate_bps above 0", l.TaxCategory)
	case forbids && l.TaxRateBps != 0:
		o.r.add(path, "%s bears no VAT: tax_rate_bps must be 0", l.TaxCategory)
	}
}

// notSubjectAlone refuses O (not subject to VAT) next to any other
// category on one invoice (EN 16931 BR-O-11/12), at each other line.
func notSubjectAlone(r *reader, lines []LineInput) {
	cats := make([]string, len(lines))
	hasO := false
	for i, l := range lines {
		cats[i] = l.TaxCategory
		if cats[i] == "" {
			cats[i] = events.DefaultTaxCategory(l.TaxRateBps)
		}
		hasO = hasO || cats[i] == events.TaxNotSubject
	}
	if !hasO {
		return
	}
	for i, c := range cats {
		if c != events.TaxNotSubject {
			r.add(join(index(lineFields, i), "tax_category"), "must be O: an invoice with O (not subject to VAT) lines has no lines of other categories (BR-O-11, BR-O-12)")
		}
	}
}
