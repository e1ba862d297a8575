package transport

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/query"
)

// jsonAppender is a body that writes its own JSON: the invoice forms and
// the lists, the hot answers. encoding/json spent about a quarter of the
// service's CPU on a list of 100 invoices (reflection over 19 fields a row)
// and compacted the stored snapshots of every get once more. An appender
// writes exactly the bytes writeJSON's encoder would (the equivalence test
// and fuzz target in jsonappend_test.go hold it to that), without either.
type jsonAppender interface {
	appendJSON(b []byte) []byte
}

// appendValue appends v as writeJSON's encoder renders it.
func appendValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case jsonAppender:
		return v.appendJSON(b)
	case json.RawMessage:
		if len(v) == 0 {
			return append(b, "null"...)
		}
		// The read model stores snapshots and lines as encoding/json wrote
		// them when it projected the event: compact already.
		return append(b, v...)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// The types rendered always encode (see writeJSON); null keeps the
		// document well-formed if one ever did not.
		return append(b, "null"...)
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// appendString appends s quoted. Strings that encoding/json copies as they
// are (valid UTF-8 without control characters, quotes, backslashes, U+2028
// or U+2029) are copied here too; the rest go through encoding/json.
func appendString(b []byte, s string) []byte {
	for i := plainWords(s); i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' {
				return appendValue(b, s)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
			return appendValue(b, s)
		}
		i += size
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plainWords is the length of s's leading 8-byte words of ASCII that
// encoding/json copies as it is (no control character, quote or
// backslash), tested a word at a time: a list's ids, dates and names are
// mostly such, and appendString's test of each byte was a tenth of a
// list's CPU. A word it stops at may hold no such byte (the tests for a
// byte borrow across bytes): appendString checks it byte by byte.
func plainWords(s string) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	has := func(w uint64) uint64 { return (w - ones) & ^w & highs } // some byte is 0
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if w&highs|(w-0x20*ones)&^w&highs|has(w^'"'*ones)|has(w^'\\'*ones) != 0 {
			break
		}
	}
	return i
}

func appendNullableString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendString(b, *s)
}

func appendNullableTime(b []byte, t *apiTime) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	return t.appendJSON(b)
}

// appendField appends `,"name":` (without the comma for the first field).
func appendField(b []byte, name string) []byte {
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

func (i invoiceSummaryJSON) appendJSON(b []byte) []byte {
	return append(i.appendFields(append(b, '{')), '}')
}

// appendFields appends the summary's members, in the struct's order.
func (i invoiceSummaryJSON) appendFields(b []byte) []byte {
	b = appendString(appendField(b, "id"), i.ID)
	b = appendString(appendField(b, "company_id"), i.CompanyID)
	b = appendString(appendField(b, "customer_id"), i.CustomerID)
	b = appendString(appendField(b, "customer_name"), i.CustomerName)
	b = appendString(appendField(b, "currency"), i.Currency)
	b = appendString(appendField(b, "issue_date"), i.IssueDate)
	b = appendNullableString(appendField(b, "due_date"), i.DueDate)
	b = appendNullableTime(appendField(b, "issued_at"), i.IssuedAt)
	b = appendNullableString(appendField(b, "number"), i.Number)
	b = appendString(appendField(b, "status"), i.Status)
	b = strconv.AppendInt(appendField(b, "subtotal_minor"), i.SubtotalMinor, 10)
	b = strconv.AppendInt(appendField(b, "tax_minor"), i.TaxMinor, 10)
	b = strconv.AppendInt(appendField(b, "total_minor"), i.TotalMinor, 10)
	b = strconv.AppendInt(appendField(b, "amount_credited_minor"), i.AmountCreditedMinor, 10)
	b = strconv.AppendInt(appendField(b, "amount_paid_minor"), i.AmountPaidMinor, 10)
	b = strconv.AppendInt(appendField(b, "amount_due_minor"), i.AmountDueMinor, 10)
	b = strconv.AppendInt(appendField(b, "amount_refundable_minor"), i.AmountRefundableMinor, 10)
	b = appendString(appendField(b, "payment_status"), i.PaymentStatus)
	b = i.CreatedAt.appendJSON(appendField(b, "created_at"))
	b = i.UpdatedAt.appendJSON(appendField(b, "updated_at"))
	b = strconv.AppendInt(appendField(b, "version"), int64(i.Version), 10)
	b = appendNullableString(appendField(b, "void_reason"), i.VoidReason)
	b = appendNullableTime(appendField(b, "voided_at"), i.VoidedAt)
	if i.ExternalReference != "" {
		b = appendString(appendField(b, "external_reference"), i.ExternalReference)
	}
	return b
}

func (i invoiceJSON) appendJSON(b []byte) []byte {
	b = i.invoiceSummaryJSON.appendFields(append(b, '{'))
	b = appendValue(appendField(b, "customer"), i.Customer)
	b = appendValue(appendField(b, "issuer"), i.Issuer)
	b = appendString(appendField(b, "language"), i.Language)
	b = appendValue(appendField(b, "lines"), i.Lines)
	for _, f := range [...]struct{ name, value string }{
		{"purchase_order_reference", i.PurchaseOrderReference}, {"notes", i.Notes}, {"terms", i.Terms},
	} {
		if f.value != "" {
			b = appendString(appendField(b, f.name), f.value)
		}
	}
	if i.documentJSON != nil {
		b = appendMembers(b, i.documentJSON)
	} else {
		b = documentFields(i.InvoiceDocumentFields).appendFields(b)
	}
	// Payments are few and only in the full form: encoding/json's.
	return append(appendValue(appendField(b, "payments"), i.Payments), '}')
}

// appendMembers appends the members of the JSON object obj, after others.
func appendMembers(b []byte, obj json.RawMessage) []byte {
	if members := obj[1 : len(obj)-1]; len(members) > 0 {
		b = append(append(b, ','), members...)
	}
	return b
}

// documentFields appends the document terms and the VAT breakdown, in
// events.InvoiceDocumentFields' order.
type documentFields events.InvoiceDocumentFields

func (d documentFields) appendFields(b []byte) []byte {
	if d.BuyerReference != "" {
		b = appendString(appendField(b, "buyer_reference"), d.BuyerReference)
	}
	if len(d.TaxExemptions) > 0 {
		b = appendValue(appendField(b, "tax_exemptions"), d.TaxExemptions)
	}
	if d.DeliveryDate != "" {
		b = appendString(appendField(b, "delivery_date"), d.DeliveryDate)
	}
	if d.DeliveryAddress != nil {
		b = appendValue(appendField(b, "delivery_address"), d.DeliveryAddress)
	}
	if d.BillingPeriod != nil {
		b = appendValue(appendField(b, "billing_period"), d.BillingPeriod)
	}
	b = append(appendField(b, "tax_breakdown"), '[')
	for n, t := range d.TaxBreakdown {
		if n > 0 {
			b = append(b, ',')
		}
		b = appendString(append(b, `{"tax_category":`...), t.TaxCategory)
		b = strconv.AppendInt(append(b, `,"tax_rate_bps":`...), t.TaxRateBps, 10)
		b = strconv.AppendInt(append(b, `,"taxable_amount_minor":`...), t.TaxableAmountMinor, 10)
		b = strconv.AppendInt(append(b, `,"tax_amount_minor":`...), t.TaxAmountMinor, 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendedList is a list whose items append themselves: the invoice list.
// (The other lists stay with encoding/json: appendValue's fallback per item
// would cost more than one encoder for the whole list.) Each item is
// rendered from the query's as it is appended (render), so that the page's
// rendered items, a hundred structs of strings, are never held together.
type appendedList[S any, T jsonAppender] struct {
	page   query.Page[S]
	render func(S) T
}

// summaryBytes is about what an invoice summary takes in a list, so that a
// list's body is sized once.
const summaryBytes = 768

func (l appendedList[S, T]) appendJSON(b []byte) []byte {
	b = slices.Grow(b, len(l.page.Items)*summaryBytes+64)
	b = append(b, `{"data":[`...)
	for n := range l.page.Items {
		if n > 0 {
			b = append(b, ',')
		}
		b = l.render(l.page.Items[n]).appendJSON(b)
	}
	b = append(b, `],"pagination":{"next_cursor":`...)
	return append(appendNullableString(b, pagination(l.page.NextCursor).NextCursor), "}}"...)
}
