package einvoice

import (
	"strings"
	"testing"
)

// withLines rebuilds d with other lines (and breakdowns and totals).
func withLines(d Document, specs ...lineSpec) Document {
	d.Lines, d.VATBreakdown, d.Totals = nil, nil, Totals{}
	return build(d, specs...)
}

func TestCheckAcceptsValidDocuments(t *testing.T) {
	for name, d := range map[string]Document{"minimal": minimal(), "full": full(),
		"credit note": creditNote(full()), "paid": paid(full(), 5000)} {
		if p := Check(d); len(p) != 0 {
			t.Errorf("%s: Check = %v, want none", name, p)
		}
	}
}

// TestCheckRules: each rule behind document_incomplete, named by its id and
// the record path a client would fix.
func TestCheckRules(t *testing.T) {
	noVAT := func(d Document) Document { d.Seller.VATID, d.Seller.TaxRegistration = "", ""; return d }
	for _, tc := range []struct {
		rule, path string
		doc        func() Document
	}{
		{"BR-S-02", "issuer.identifiers", func() Document { return noVAT(full()) }},
		{"BR-Z-02", "issuer.identifiers", func() Document { return noVAT(withLines(full(), lineSpec{"1", 100, "Z", 0})) }},
		{"BR-E-02", "issuer.identifiers", func() Document { return noVAT(withLines(full(), lineSpec{"1", 100, "E", 0})) }},
		{"BR-AE-02", "issuer.identifiers", func() Document { return noVAT(withLines(full(), lineSpec{"1", 100, "AE", 0})) }},
		{"BR-AE-02", "customer.identifiers", func() Document {
			d := withLines(full(), lineSpec{"1", 100, "AE", 0})
			d.Buyer.VATID, d.Buyer.LegalRegistration = "", nil
			return d
		}},
		{"BR-IC-02", "issuer.identifiers", func() Document {
			d := withLines(full(), lineSpec{"1", 100, "K", 0})
			d.Seller.VATID = "" // a tax registration is not enough for K
			return d
		}},
		{"BR-IC-02", "customer.identifiers", func() Document {
			d := withLines(full(), lineSpec{"1", 100, "K", 0})
			d.Buyer.VATID = ""
			return d
		}},
		{"BR-G-02", "issuer.identifiers", func() Document {
			d := withLines(full(), lineSpec{"1", 100, "G", 0})
			d.Seller.VATID = ""
			return d
		}},
		{"BR-O-02", "issuer.identifiers", func() Document { return withLines(full(), lineSpec{"1", 100, "O", 0}) }},
		{"BR-O-02", "customer.identifiers", func() Document { return withLines(full(), lineSpec{"1", 100, "O", 0}) }},
		{"BR-AF-02", "issuer.identifiers", func() Document { return noVAT(withLines(full(), lineSpec{"1", 100, "L", 700})) }},
		{"BR-AG-02", "issuer.identifiers", func() Document { return noVAT(withLines(full(), lineSpec{"1", 100, "M", 400})) }},
		{"BR-S-05", "lines[0].tax_rate_bps", func() Document { return withLines(full(), lineSpec{"1", 100, "S", 0}) }},
		{"BR-Z-05", "lines[1].tax_rate_bps", func() Document { return withLines(full(), lineSpec{"1", 100, "S", 1900}, lineSpec{"1", 100, "Z", 500}) }},
		{"BR-E-05", "lines[0].tax_rate_bps", func() Document { return withLines(full(), lineSpec{"1", 100, "E", 500}) }},
		{"BR-AE-05", "lines[0].tax_rate_bps", func() Document { return withLines(full(), lineSpec{"1", 100, "AE", 500}) }},
		{"BR-IC-05", "lines[0].tax_rate_bps", func() Document { return withLines(full(), lineSpec{"1", 100, "K", 500}) }},
		{"BR-G-05", "lines[0].tax_rate_bps", func() Document { return withLines(full(), lineSpec{"1", 100, "G", 500}) }},
		{"BR-O-05", "lines[0].tax_rate_bps", func() Document { return o(withLines(full(), lineSpec{"1", 100, "O", 500})) }},
		{"BR-AF-05", "lines[0].tax_rate_bps", func() Document { return withLines(full(), lineSpec{"1", 100, "L", -1}) }},
		{"BR-AF-05", "lines[0].tax_rate_bps", func() Document { return withLines(full(), lineSpec{"1", 100, "L", 0}) }},
		{"BR-AG-05", "lines[0].tax_rate_bps", func() Document { return withLines(full(), lineSpec{"1", 100, "M", -1}) }},
		{"BR-E-10", "tax_exemptions", func() Document { return noReasons(withLines(full(), lineSpec{"1", 100, "E", 0})) }},
		{"BR-AE-10", "tax_exemptions", func() Document { return noReasons(withLines(full(), lineSpec{"1", 100, "AE", 0})) }},
		{"BR-IC-10", "tax_exemptions", func() Document { return noReasons(withLines(full(), lineSpec{"1", 100, "K", 0})) }},
		{"BR-G-10", "tax_exemptions", func() Document { return noReasons(withLines(full(), lineSpec{"1", 100, "G", 0})) }},
		{"BR-O-10", "tax_exemptions", func() Document { return noReasons(o(withLines(full(), lineSpec{"1", 100, "O", 0}))) }},
		{"BR-S-10", "tax_exemptions", func() Document { return reason(full(), 0) }},
		{"BR-Z-10", "tax_exemptions", func() Document { return reason(withLines(full(), lineSpec{"1", 100, "Z", 0}), 0) }},
		{"BR-AF-10", "tax_exemptions", func() Document { return reason(withLines(full(), lineSpec{"1", 100, "L", 700}), 0) }},
		{"BR-AG-10", "tax_exemptions", func() Document { return reason(withLines(full(), lineSpec{"1", 100, "M", 400}), 0) }},
		{"BR-IC-11", "delivery_date", func() Document {
			d := withLines(full(), lineSpec{"1", 100, "K", 0})
			d.Delivery.Date, d.BillingPeriod = "", nil
			return d
		}},
		{"BR-IC-12", "delivery_address.country_code", func() Document {
			d := withLines(full(), lineSpec{"1", 100, "K", 0})
			d.Delivery.Address = nil
			return d
		}},
		{"BR-O-11", "lines", func() Document {
			return o(withLines(full(), lineSpec{"1", 100, "O", 0}, lineSpec{"1", 100, "S", 1900}))
		}},
		{"BR-O-12", "lines[1].tax_category", func() Document {
			return o(withLines(full(), lineSpec{"1", 100, "O", 0}, lineSpec{"1", 100, "S", 1900}))
		}},
		{"BR-CO-26", "issuer.identifiers", func() Document {
			d := o(withLines(full(), lineSpec{"1", 100, "O", 0}))
			d.Seller.Identifiers, d.Seller.LegalRegistration = nil, nil
			return d
		}},
		{"BR-CO-04", "lines[0].tax_category", func() Document { return withLines(full(), lineSpec{"1", 100, "", 0}) }},
		{"BR-CL-18", "lines[0].tax_category", func() Document { return withLines(full(), lineSpec{"1", 100, "X", 0}) }},
		{"BR-DEC-09", "currency", func() Document { d := full(); d.Currency = "BHD"; return d }},
		{"BR-CL-04", "currency", func() Document { d := full(); d.Currency = "XAU"; return d }},
		{"BR-02", "number", func() Document { d := full(); d.Number = ""; return d }},
		{"BR-06", "issuer.legal_name", func() Document { d := full(); d.Seller.Name = ""; return d }},
		{"BR-07", "customer.name", func() Document { d := full(); d.Buyer.Name = ""; return d }},
		{"BR-09", "issuer.address.country_code", func() Document { d := full(); d.Seller.Address.CountryCode = ""; return d }},
		{"BR-11", "customer.address.country_code", func() Document { d := full(); d.Buyer.Address.CountryCode = ""; return d }},
		{"BR-16", "lines", func() Document { return withLines(full()) }},
		{"BR-23", "lines[0].unit_code", func() Document { d := full(); d.Lines[0].UnitCode = ""; return d }},
		{"BR-25", "lines[1].description", func() Document { d := full(); d.Lines[1].ItemName = ""; return d }},
		{"BR-27", "lines[0].unit_amount_minor", func() Document { d := full(); d.Lines[0].Price = -1; return d }},
		{"BR-CO-09", "customer.identifiers", func() Document { d := full(); d.Buyer.VATID = "61732829320"; return d }},
		{"BR-62", "issuer.electronic_address.scheme", func() Document { d := full(); d.Seller.ElectronicAddress.Scheme = ""; return d }},
		{"BR-63", "customer.electronic_address.scheme", func() Document { d := full(); d.Buyer.ElectronicAddress.Scheme = ""; return d }},
		{"BR-61", "issuer.bank_account", func() Document { d := full(); d.PaymentInstructions.IBAN = ""; return d }},
		{"BR-29", "billing_period", func() Document { d := full(); d.BillingPeriod.End = "2025-12-31"; return d }},
		{"BR-57", "delivery_address.country_code", func() Document { d := full(); d.Delivery.Address.CountryCode = ""; return d }},
		{"XML-Char", "lines[0].description", func() Document { d := full(); d.Lines[0].ItemName = "a\uFFFEb"; return d }},
		{"XML-Char", "reason", func() Document { d := creditNote(full()); d.Notes = []string{"a\uFFFFb"}; return d }},
		{"BR-55", "invoice_number", func() Document { d := creditNote(full()); d.PrecedingInvoice.Number = ""; return d }},
	} {
		t.Run(tc.rule+" "+tc.path, func(t *testing.T) {
			problems := Check(tc.doc())
			for _, p := range problems {
				if p.Rule == tc.rule && p.Path == tc.path {
					if !strings.Contains(p.Message, tc.rule) {
						t.Errorf("message %q does not name the rule", p.Message)
					}
					return
				}
			}
			t.Errorf("Check = %v, want a problem %s at %s", problems, tc.rule, tc.path)
		})
	}
}

// o makes d a valid "not subject to VAT" invoice but for what a test breaks:
// no VAT identifiers.
func o(d Document) Document {
	d.Seller.VATID, d.Buyer.VATID = "", ""
	return d
}

func noReasons(d Document) Document {
	for i := range d.VATBreakdown {
		d.VATBreakdown[i].ExemptionReason, d.VATBreakdown[i].ExemptionReasonCode = "", ""
	}
	return d
}

func reason(d Document, i int) Document {
	d.VATBreakdown[i].ExemptionReason = "not allowed here"
	return d
}
