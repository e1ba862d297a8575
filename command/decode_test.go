package command

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDecodeObjectRefusesWhatEncodingJSONWouldGuess(t *testing.T) {
	tests := []struct {
		name, body string
		wantPaths  []string // nil: a malformed body without paths
	}{
		{"a key given twice", `{"legal_name":"a","legal_name":"b"}`, []string{"legal_name"}},
		{"a nested key given twice", `{"address":{"city":"a","city":"a"}}`, []string{"address.city"}},
		{"a key twice inside an array item", `{"lines":[{},{"quantity":"1","quantity":"2"}]}`, []string{"lines[1].quantity"}},
		{"a lone high surrogate", `{"notes":"x\ud800y"}`, []string{"notes"}},
		{"a lone low surrogate", `{"notes":"\udc00"}`, []string{"notes"}},
		{"a high surrogate before a non-surrogate escape", `{"notes":"\ud800\u0041"}`, []string{"notes"}},
		{"a high surrogate at the end", `{"notes":"\uD800"}`, []string{"notes"}},
		{"two high surrogates", `{"notes":"\ud800\ud800"}`, []string{"notes"}},
		{"a lone surrogate in a key", `{"\ud800":1}`, []string{"\uFFFD"}},
		{"a lone surrogate deep in an array", `{"lines":[{"description":"ok"},{"description":"\udfff"}]}`, []string{"lines[1].description"}},
		{"every problem, not the first", `{"a":1,"a":2,"b":"\ud800"}`, []string{"a", "b"}},
		{"not UTF-8", "{\"notes\":\"\xff\"}", nil},
		{"trailing data", `{} {}`, nil},
		{"an array", `[]`, nil},
		{"empty", ``, nil},
		{"a syntax error", `{"a":}`, nil},
		{"unterminated", `{"a":"b"`, nil},
		{"too deep", strings.Repeat(`{"a":`, 40) + `1` + strings.Repeat(`}`, 40), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeObject([]byte(tt.body))
			var merr *MalformedBodyError
			if !errors.As(err, &merr) || !errors.Is(err, ErrMalformedBody) {
				t.Fatalf("err = %v, want a *MalformedBodyError", err)
			}
			var got []string
			for _, v := range merr.Violations {
				got = append(got, v.Path)
			}
			if !reflect.DeepEqual(got, tt.wantPaths) {
				t.Fatalf("paths = %q, want %q (%v)", got, tt.wantPaths, err)
			}
		})
	}
}

func TestDecodeObjectKeepsWhatIsText(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"a surrogate pair", `{"a":"\ud83d\ude00"}`, "\U0001F600"},
		{"an upper-case pair", `{"a":"\uD83D\uDE00"}`, "\U0001F600"},
		{"an escaped backslash before u", `{"a":"\\ud800"}`, `\ud800`},
		{"U+FFFD sent as such", `{"a":"\ufffd"}`, "\uFFFD"},
		{"plain UTF-8", `{"a":"Zürich 東京"}`, "Zürich 東京"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := decodeObject([]byte(tt.body))
			if err != nil {
				t.Fatalf("decodeObject: %v", err)
			}
			if m["a"] != tt.want {
				t.Fatalf("a = %q, want %q", m["a"], tt.want)
			}
		})
	}
}

// FuzzDecodeObject: whatever decodeObject accepts, encoding/json decodes to
// the same value; whatever it refuses is malformed with a reason.
func FuzzDecodeObject(f *testing.F) {
	for _, seed := range []string{`{"a":[1,{"b":"\u00e9"}],"c":null,"d":true,"e":1.5e3}`, `{"a":"\ud800"}`, `{"a":1,"a":1}`, `{}`, `{"a":"\\u"}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeObject(data)
		if err != nil {
			var merr *MalformedBodyError
			if !errors.As(err, &merr) || merr.Reason == "" {
				t.Fatalf("error %v is not a *MalformedBodyError with a reason", err)
			}
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var want map[string]any
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("decodeObject accepted what encoding/json refuses: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeObject = %#v, encoding/json = %#v", got, want)
		}
	})
}

// FuzzThePlainDecodeIsTheWalks: a body decodePlain takes decodes as the
// token walk decodes it, and one it leaves to the walk is one the walk
// refuses or one encoding/json alone would read otherwise (a key given
// twice, a lone surrogate, nesting past the bound). So decodeObject answers
// every body as the walk alone did.
func FuzzThePlainDecodeIsTheWalks(f *testing.F) {
	for _, seed := range []string{createInvoiceBody, `{"a":1,"a":1}`, `{"a":{"b":1},"b":{"b":2}}`, `{"a":"\ud800"}`,
		`{"a":"\ud83d\ude00"}`, `{"a":"\\u"}`, `{"a:":"\":"}`, `{} `, `{}{}`, `null`, `[]`, `{"a":[[[[1]]]]}`,
		strings.Repeat(`[`, 32) + strings.Repeat(`]`, 32), `{"a":` + strings.Repeat(`[`, 32) + strings.Repeat(`]`, 32) + `}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !utf8.Valid(data) {
			return // refused before either decode
		}
		walked, walkErr := walkObject(data)
		plain, ok := decodePlain(data)
		if ok && (walkErr != nil || !reflect.DeepEqual(plain, walked)) {
			t.Fatalf("decodePlain = %#v; the walk = %#v, %v", plain, walked, walkErr)
		}
		if !ok && walkErr == nil {
			members, depth, _ := shape(data)
			if depth <= maxBodyDepth && countMembers(walked) == members {
				t.Fatalf("decodePlain left to the walk a body it takes: %#v", walked)
			}
		}
	})
}

// createInvoiceBody is a create-invoice request as `make bench` sends it:
// five lines, a note.
const createInvoiceBody = `{"customer_id":"0193a0b2-7c1e-7d2a-9f3e-2b4c6d8e0f12","issue_date":"2026-03-14",` +
	`"lines":[{"description":"Consulting services, work package 1","quantity":"2.5","unit":"h","unit_amount_minor":41234,"tax_rate_bps":1900},` +
	`{"description":"Consulting services, work package 2","quantity":"10","unit":"h","unit_amount_minor":1200,"tax_rate_bps":700},` +
	`{"description":"Consulting services, work package 3","quantity":"0.75","unit":"h","unit_amount_minor":98000,"tax_rate_bps":1900},` +
	`{"description":"Consulting services, work package 4","quantity":"3.125","unit":"h","unit_amount_minor":5500,"tax_rate_bps":1900},` +
	`{"description":"Consulting services, work package 5","quantity":"40","unit":"h","unit_amount_minor":77777,"tax_rate_bps":700}],` +
	`"notes":"Payable within 30 days. Thank you for your business."}`

// BenchmarkDecodeObject times the decode every write request's body goes
// through before it is parsed.
func BenchmarkDecodeObject(b *testing.B) {
	raw := []byte(createInvoiceBody)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeObject(raw); err != nil {
			b.Fatal(err)
		}
	}
}
