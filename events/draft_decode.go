package events

import "reflect"

// The members of an InvoiceDrafted and of what it holds, for scanner: each
// decodes the value of its key and returns the field's number (jsonscan.go).
// A catch-up decodes every draft of the log, and encoding/json's
// reflection was a third of the service's work in one.

// decodeDraftedFast decodes b into d, which must be the zero value, and
// reports whether b was inside what scanner reads; when it was not, d
// holds part of b and must be reset.
func decodeDraftedFast(d *InvoiceDrafted, b []byte) bool {
	s := scanner{b: b}
	s.structOf(d)
	return s.end()
}

// isZeroDraft reports whether d is the zero value, which the fast decode
// needs: encoding/json merges into what d already holds.
func isZeroDraft(d *InvoiceDrafted) bool {
	return reflect.ValueOf(d).Elem().IsZero()
}

func (d *InvoiceDrafted) member(s *scanner, key []byte) int {
	switch string(key) {
	case "invoice_id":
		s.str(&d.InvoiceID)
		return 1
	case "company_id":
		s.str(&d.CompanyID)
		return 2
	case "account_id":
		s.str(&d.AccountID)
		return 3
	case "customer_id":
		s.str(&d.CustomerID)
		return 4
	case "customer_name":
		s.str(&d.CustomerName)
		return 5
	case "customer":
		s.structOf(&d.Customer)
		return 6
	case "issuer":
		s.structOf(&d.Issuer)
		return 7
	case "currency":
		s.str(&d.Currency)
		return 8
	case "language":
		s.str(&d.Language)
		return 9
	case "issue_date":
		s.str(&d.IssueDate)
		return 10
	case "due_date":
		s.str(&d.DueDate)
		return 11
	case "payment_terms_days":
		s.intPtr(&d.PaymentTermsDays)
		return 12
	}
	return d.amountsMember(s, key)
}

func (d *InvoiceDrafted) amountsMember(s *scanner, key []byte) int {
	switch string(key) {
	case "lines":
		objectsOf(s, &d.Lines)
		return 13
	case "subtotal_minor":
		s.int64(&d.SubtotalMinor)
		return 14
	case "tax_minor":
		s.int64(&d.TaxMinor)
		return 15
	case "total_minor":
		s.int64(&d.TotalMinor)
		return 16
	case "tax_breakdown":
		objectsOf(s, &d.TaxBreakdown)
		return 17
	case "created_at":
		if err := d.CreatedAt.UnmarshalJSON(s.raw()); err != nil {
			s.fail()
		}
		return 18
	}
	return d.textMember(s, key)
}

func (d *InvoiceDrafted) textMember(s *scanner, key []byte) int {
	switch string(key) {
	case "external_reference":
		s.str(&d.ExternalReference)
		return 19
	case "purchase_order_reference":
		s.str(&d.PurchaseOrderReference)
		return 20
	case "notes":
		s.str(&d.Notes)
		return 21
	case "terms":
		s.str(&d.Terms)
		return 22
	}
	if n := d.DocumentTerms.member(s, key); n != 0 {
		return 22 + n
	}
	return 0
}

func (t *DocumentTerms) member(s *scanner, key []byte) int {
	switch string(key) {
	case "buyer_reference":
		s.str(&t.BuyerReference)
		return 1
	case "tax_exemptions":
		objectsOf(s, &t.TaxExemptions)
		return 2
	case "delivery_date":
		s.str(&t.DeliveryDate)
		return 3
	case "delivery_address":
		pointerTo(s, &t.DeliveryAddress)
		return 4
	case "billing_period":
		pointerTo(s, &t.BillingPeriod)
		return 5
	}
	return 0
}

func (c *CustomerSnapshot) member(s *scanner, key []byte) int {
	switch string(key) {
	case "id":
		s.str(&c.ID)
		return 1
	case "name":
		s.str(&c.Name)
		return 2
	case "address":
		s.structOf(&c.Address)
		return 3
	case "email":
		s.str(&c.Email)
		return 4
	case "identifiers":
		objectsOf(s, &c.Identifiers)
		return 5
	case "electronic_address":
		pointerTo(s, &c.ElectronicAddress)
		return 6
	case "schema_version":
		s.int(&c.SchemaVersion)
		return 7
	}
	return 0
}

func (c *IssuerSnapshot) member(s *scanner, key []byte) int {
	switch string(key) {
	case "id":
		s.str(&c.ID)
		return 1
	case "legal_name":
		s.str(&c.LegalName)
		return 2
	case "trading_name":
		s.str(&c.TradingName)
		return 3
	case "address":
		s.structOf(&c.Address)
		return 4
	case "email":
		s.str(&c.Email)
		return 5
	case "identifiers":
		objectsOf(s, &c.Identifiers)
		return 6
	case "bank_account":
		pointerTo(s, &c.BankAccount)
		return 7
	case "electronic_address":
		pointerTo(s, &c.ElectronicAddress)
		return 8
	case "schema_version":
		s.int(&c.SchemaVersion)
		return 9
	}
	return 0
}

func (l *InvoiceLine) member(s *scanner, key []byte) int {
	switch string(key) {
	case "position":
		s.int(&l.Position)
		return 1
	case "description":
		s.str(&l.Description)
		return 2
	case "quantity":
		s.str(&l.Quantity)
		return 3
	case "unit":
		s.str(&l.Unit)
		return 4
	case "unit_code":
		s.str(&l.UnitCode)
		return 5
	case "tax_category":
		s.str(&l.TaxCategory)
		return 6
	}
	return l.amountMember(s, key)
}

func (l *InvoiceLine) amountMember(s *scanner, key []byte) int {
	switch string(key) {
	case "unit_amount_minor":
		s.int64(&l.UnitAmountMinor)
		return 7
	case "tax_rate_bps":
		s.int64(&l.TaxRateBps)
		return 8
	case "net_amount_minor":
		s.int64(&l.NetAmountMinor)
		return 9
	case "tax_amount_minor":
		s.int64(&l.TaxAmountMinor)
		return 10
	case "total_amount_minor":
		s.int64(&l.TotalAmountMinor)
		return 11
	}
	return 0
}

func (t *TaxBreakdown) member(s *scanner, key []byte) int {
	switch string(key) {
	case "tax_category":
		s.str(&t.TaxCategory)
		return 1
	case "tax_rate_bps":
		s.int64(&t.TaxRateBps)
		return 2
	case "taxable_amount_minor":
		s.int64(&t.TaxableAmountMinor)
		return 3
	case "tax_amount_minor":
		s.int64(&t.TaxAmountMinor)
		return 4
	}
	return 0
}

func (a *Address) member(s *scanner, key []byte) int {
	switch string(key) {
	case "city":
		s.str(&a.City)
		return 1
	case "country_code":
		s.str(&a.CountryCode)
		return 2
	case "line_1":
		s.str(&a.Line1)
		return 3
	case "line_2":
		s.str(&a.Line2)
		return 4
	case "postal_code":
		s.str(&a.PostalCode)
		return 5
	case "region":
		s.str(&a.Region)
		return 6
	}
	return 0
}

func (id *Identifier) member(s *scanner, key []byte) int {
	return stringMember(s, key, []string{"country_code", "scheme", "value"}, &id.CountryCode, &id.Scheme, &id.Value)
}

func (b *BankAccount) member(s *scanner, key []byte) int {
	return stringMember(s, key, []string{"iban", "bic", "account_name"}, &b.IBAN, &b.BIC, &b.AccountName)
}

func (e *ElectronicAddress) member(s *scanner, key []byte) int {
	return stringMember(s, key, []string{"scheme", "value"}, &e.Scheme, &e.Value)
}

func (p *Period) member(s *scanner, key []byte) int {
	return stringMember(s, key, []string{"start", "end"}, &p.Start, &p.End)
}

func (e *TaxExemption) member(s *scanner, key []byte) int {
	return stringMember(s, key, []string{"tax_category", "reason", "reason_code"}, &e.TaxCategory, &e.Reason, &e.ReasonCode)
}

// stringMember decodes the member of an object whose fields are all
// strings: keys[i] names fields[i].
func stringMember(s *scanner, key []byte, keys []string, fields ...*string) int {
	for i, k := range keys {
		if string(key) == k {
			s.str(fields[i])
			return i + 1
		}
	}
	return 0
}
