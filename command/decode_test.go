package command

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
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
