package transport

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/query"
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
// strings from s (pointers to them), integers and timestamps (sampleTime)
// from n. Fields of type any are left to the caller.
func fill(v reflect.Value, s string, n int64) {
	for i := range v.NumField() {
		f := v.Field(i)
		switch {
		case f.Type() == apiTimeType:
			f.Set(reflect.ValueOf(sampleTime(n)))
			continue
		case f.Type() == reflect.PointerTo(apiTimeType):
			at := sampleTime(n)
			f.Set(reflect.ValueOf(&at))
			continue
		}
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

var apiTimeType = reflect.TypeFor[apiTime]()

// sampleTime is a time n makes, in a zone other than UTC and with
// nanoseconds, which a timestamp writes in UTC as they are.
func sampleTime(n int64) apiTime {
	return apiTime(time.Unix(n%(1<<33), n%1e9).In(time.FixedZone("UTC+5:30", 5*3600+1800)))
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

// stored is inv as a get reads it: its document fields as the projection
// stores them, the JSON of events.InvoiceDocumentFields (documentJSON).
func stored(t testing.TB, inv invoiceJSON) invoiceJSON {
	inv.documentJSON = encoded(t, inv.InvoiceDocumentFields)
	inv.InvoiceDocumentFields = events.InvoiceDocumentFields{}
	return inv
}

// summaries is the invoice list's appender over items already rendered.
func summaries(page query.Page[invoiceSummaryJSON]) appendedList[invoiceSummaryJSON, invoiceSummaryJSON] {
	return appendedList[invoiceSummaryJSON, invoiceSummaryJSON]{page, same}
}

func same(s invoiceSummaryJSON) invoiceSummaryJSON { return s }

func checkAppenders(t testing.TB, s string, n int64) {
	inv := sampleInvoice(t, s, n)
	bare := invoiceJSON{Customer: json.RawMessage(nil), Lines: []events.InvoiceLine{{Description: s}}}
	bare.TaxBreakdown = []events.TaxBreakdown{}
	full := query.Page[invoiceSummaryJSON]{Items: []invoiceSummaryJSON{inv.invoiceSummaryJSON, {}}}
	empty := query.Page[invoiceSummaryJSON]{Items: []invoiceSummaryJSON{}, NextCursor: "c" + s}
	for _, tc := range []struct {
		name string
		a    jsonAppender
		v    any
	}{
		{"invoice", inv, inv},
		{"invoice with every optional field empty", bare, bare},
		{"invoice read with its stored document fields", stored(t, inv), inv},
		{"invoice read with every optional field empty", stored(t, bare), bare},
		{"summary", inv.invoiceSummaryJSON, inv.invoiceSummaryJSON},
		{"list", summaries(full), list(full, same)},
		{"empty list with a cursor", summaries(empty), list(empty, same)},
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

// appendString tests whole words first (plainWords): a byte that needs
// encoding/json, at any place in the first, second or third word or in
// the bytes after them, sends the string there.
func TestAppendStringFindsAnEscapeAnywhere(t *testing.T) {
	for _, special := range []string{"\x00", "\x1f", "\"", "\\", "\x7f", "\u00e9", "\u2028", "\xff", "<", "&"} {
		for n := 1; n <= 26; n++ {
			for at := 0; at < n; at++ {
				s := strings.Repeat("a", at) + special + strings.Repeat("b", n-at-1)
				var enc bytes.Buffer
				e := json.NewEncoder(&enc)
				e.SetEscapeHTML(false)
				if err := e.Encode(s); err != nil {
					t.Fatal(err)
				}
				want := bytes.TrimSuffix(enc.Bytes(), []byte("\n"))
				if got := appendString(nil, s); !bytes.Equal(got, want) {
					t.Fatalf("%q: %s, encoding/json %s", s, got, want)
				}
			}
		}
	}
}

// BenchmarkAppendString appends the strings of a list's invoice summary.
func BenchmarkAppendString(b *testing.B) {
	row := []string{"0190a0c0-0000-7000-8000-000000000003", "0190a0c0-0000-7000-8000-000000000001",
		"0190a0c0-0000-7000-8000-000000000002", "Globex Corporation", "EUR", "2026-03-01", "2026-03-31",
		"INV-2026-000123", "issued", "unpaid", "2026-03-01T09:30:15.123456Z", "erp-1"}
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		buf = buf[:0]
		for _, s := range row {
			buf = appendString(buf, s)
		}
	}
}

func FuzzAppendersWriteWhatEncodingJSONWrites(f *testing.F) {
	f.Add("Müller\u2028\"\\\x00", int64(42))
	f.Fuzz(func(t *testing.T, s string, n int64) { checkAppenders(t, s, n) })
}

// A timestamp is written in UTC with the fraction it holds and no more,
// whether a body appends it (apiTime) or renders it as a string
// (timestamp); a nullable one is null when unset.
func TestTimestampsAreUTCWithTheirFraction(t *testing.T) {
	india := time.FixedZone("UTC+5:30", 5*3600+1800)
	for _, tc := range []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 3, 1, 9, 30, 15, 123456000, india), "2026-03-01T04:00:15.123456Z"},
		{time.Date(2026, 3, 1, 9, 30, 15, 0, time.UTC), "2026-03-01T09:30:15Z"},
		{time.Date(2026, 12, 31, 23, 59, 59, 100000000, time.FixedZone("", -3600)), "2027-01-01T00:59:59.1Z"},
	} {
		at := apiTime(tc.in)
		if got := string(appendNullableTime(nil, &at)); got != `"`+tc.want+`"` {
			t.Errorf("apiTime(%v) = %s, want %q", tc.in, got, tc.want)
		}
		if got := timestamp(tc.in); got != tc.want {
			t.Errorf("timestamp(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if got := string(appendNullableTime(nil, nil)); got != "null" {
		t.Errorf("an unset timestamp = %s, want null", got)
	}
}
