package events

// Address is a postal address, as sent by clients and frozen in snapshots.
type Address struct {
	City        string `json:"city"`
	CountryCode string `json:"country_code"`
	Line1       string `json:"line_1"`
	Line2       string `json:"line_2,omitempty"`
	PostalCode  string `json:"postal_code"`
	Region      string `json:"region,omitempty"`
}

// Identifier is a registration or tax identifier of a company or customer.
type Identifier struct {
	CountryCode string `json:"country_code,omitempty"`
	Scheme      string `json:"scheme"`
	Value       string `json:"value"`
}

// BankAccount is the account a company is paid into: the payment
// instructions of its invoices (EN 16931 BG-16/BG-17).
type BankAccount struct {
	IBAN        string `json:"iban"`
	BIC         string `json:"bic,omitempty"`
	AccountName string `json:"account_name,omitempty"`
}

// ElectronicAddress is where a party receives electronic invoices
// (EN 16931 BT-34/BT-49): a value and its scheme from the EAS code list
// ("0088" GLN, "EM" email, ...).
type ElectronicAddress struct {
	Scheme string `json:"scheme"`
	Value  string `json:"value"`
}

// Period is a date range (an invoice's billing period, EN 16931 BG-14);
// either end may be absent, and end is never before start.
type Period struct {
	Start string `json:"start,omitempty"`
	End   string `json:"end,omitempty"`
}

// TaxExemption is why an invoice's lines of one VAT category bear no VAT
// (EN 16931 BT-120 reason text, BT-121 VATEX reason code): one or both.
type TaxExemption struct {
	TaxCategory string `json:"tax_category"`
	Reason      string `json:"reason,omitempty"`
	ReasonCode  string `json:"reason_code,omitempty"`
}

// DocumentTerms are the optional invoice fields that exist for the legal
// document (issue 22): the buyer's reference, the exemption reasons, the
// delivery and the billing period. Absent in events from before them.
type DocumentTerms struct {
	BuyerReference  string         `json:"buyer_reference,omitempty"`
	TaxExemptions   []TaxExemption `json:"tax_exemptions,omitempty"`
	DeliveryDate    string         `json:"delivery_date,omitempty"`
	DeliveryAddress *Address       `json:"delivery_address,omitempty"`
	BillingPeriod   *Period        `json:"billing_period,omitempty"`
}

// InvoiceDocumentFields are the full invoice's members of issue 22 in the
// order the API renders them after terms: the document terms and the VAT
// breakdown. The read model keeps them as one rendering.
type InvoiceDocumentFields struct {
	DocumentTerms
	TaxBreakdown []TaxBreakdown `json:"tax_breakdown"`
}

// DocumentFields returns d's InvoiceDocumentFields.
func (d InvoiceDrafted) DocumentFields() InvoiceDocumentFields {
	b := d.TaxBreakdown
	if b == nil {
		b = []TaxBreakdown{}
	}
	return InvoiceDocumentFields{DocumentTerms: d.DocumentTerms, TaxBreakdown: b}
}
