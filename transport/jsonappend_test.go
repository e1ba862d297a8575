package transport

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/invoicing/invoicing/events"
)

// encoded is what writeJSON's encoder writes for v, without the newline.
func encoded(t testing.TB, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// fill sets every field of the struct v points to, by reflection, so that a
// field added to the type without its appender line fails the comparison:
// strings from s (pointers to them), integers from n. Fields of type any are
// left to the caller.
func fill(v reflect.Value, s string, n int64) {
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Struct:
			fill(f, s, n)
		case reflect.String:
			f.SetString(s + v.Type().Field(i).Name)
		case reflect.Pointer:
			if f.Type().Elem().Kind() == reflect.Struct {
				f.Set(reflect.New(f.Type().Elem()))
				fill(f.Elem(), s, n)
				continue
			}
			p := s + v.Type().Field(i).Name
			f.Set(reflect.ValueOf(&p))
		case reflect.Int, reflect.Int64:
			f.SetInt(n)
		}
	}
}

func sampleInvoice(t testing.TB, s string, n int64) invoiceJSON {
	var inv invoiceJSON
	fill(reflect.ValueOf(&inv).Elem(), s, n)
	raw := json.RawMessage(encoded(t, map[string]string{"name": s}))
	inv.Customer, inv.Issuer, inv.Lines = raw, raw, json.RawMessage(`[{"description":"x","quantity":"1"}]`)
	inv.TaxExemptions = []events.TaxExemption{{TaxCategory: s, Reason: s + "r", ReasonCode: s + "c"}, {TaxCategory: "E"}}
	inv.TaxBreakdown = []events.TaxBreakdown{{TaxCategory: s, TaxRateBps: n, TaxableAmountMinor: n, TaxAmountMinor: n}, {}}
	reversed := s + "reversed"
	inv.Payments = []paymentJSON{{ID: s, AmountMinor: n, PaidOn: s, Method: s, Reference: s, RecordedAt: s,
		ReversedAt: &reversed, ReversalReason: s}, {ID: s, AmountMinor: n}}
	return inv
}

func checkAppenders(t testing.TB, s string, n int64) {
	inv := sampleInvoice(t, s, n)
	empty := invoiceJSON{Customer: json.RawMessage(nil), Lines: []events.InvoiceLine{{Description: s}}}
	empty.TaxBreakdown = []events.TaxBreakdown{}
	cursor := "c" + s
	for _, tc := range []struct {
		name string
		a    jsonAppender
		v    any
	}{
		{"invoice", inv, inv},
		{"invoice with every optional field empty", empty, empty},
		{"summary", inv.invoiceSummaryJSON, inv.invoiceSummaryJSON},
		{"list", appendedList[invoiceSummaryJSON]{Data: []invoiceSummaryJSON{inv.invoiceSummaryJSON, {}}},
			listJSON[invoiceSummaryJSON]{Data: []invoiceSummaryJSON{inv.invoiceSummaryJSON, {}}}},
		{"empty list with a cursor", appendedList[invoiceSummaryJSON]{Data: []invoiceSummaryJSON{}, Pagination: paginationJSON{&cursor}},
			listJSON[invoiceSummaryJSON]{Data: []invoiceSummaryJSON{}, Pagination: paginationJSON{&cursor}}},
	} {
		got, want := tc.a.appendJSON(nil), encoded(t, tc.v)
		if !bytes.Equal(got, want) {
			t.Fatalf("%s, string %q:\nappendJSON   %s\nencoding/json %s", tc.name, s, got, want)
		}
	}
}

// The invoice bodies written by hand are byte for byte what encoding/json
// writes, whatever the strings hold.
func TestAppendersWriteWhatEncodingJSONWrites(t *testing.T) {
	for _, s := range []string{
		"", "plain", "Müller & Söhne <GmbH>", "quote\" back\\slash", "tab\tnew\nline\x01\x1f",
		"line\u2028para\u2029", "bad \xff utf-8 \xc3", "emoji 🧾", "\x7f del",
	} {
		checkAppenders(t, s, -9007199254740991)
	}
}

func FuzzAppendersWriteWhatEncodingJSONWrites(f *testing.F) {
	f.Add("Müller\u2028\"\\\x00", int64(42))
	f.Fuzz(func(t *testing.T, s string, n int64) { checkAppenders(t, s, n) })
}
