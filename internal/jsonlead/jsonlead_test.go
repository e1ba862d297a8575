package jsonlead

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// lead reads up to n leading members with Strings.
func lead(data string, n int) (members [][2]string, stopped bool) {
	stopped = Strings([]byte(data), func(key, value []byte) bool {
		members = append(members, [2]string{string(key), string(value)})
		return len(members) < n
	})
	return members, stopped
}

// decoded reads up to n leading members with encoding/json's token reader,
// failing when one is not a string.
func decoded(data string, n int) ([][2]string, error) {
	dec := json.NewDecoder(strings.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, err
	}
	var members [][2]string
	for len(members) < n && dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var value string
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		members = append(members, [2]string{key.(string), value})
	}
	return members, nil
}

func TestStrings(t *testing.T) {
	for _, c := range []struct {
		data    string
		n       int
		stopped bool
		members [][2]string
	}{
		{`{"account_id":"acme","actor":{"sub":"u"}}`, 1, true, [][2]string{{"account_id", "acme"}}},
		{" \t\r\n{ \"a\" : \"1\" ,\n\"b\":\"2\",\"c\":[]}", 2, true, [][2]string{{"a", "1"}, {"b", "2"}}},
		{`{"a":"","b":"x"}`, 2, true, [][2]string{{"a", ""}, {"b", "x"}}},
		{`{"a":"1","b":2}`, 2, false, [][2]string{{"a", "1"}}},   // not a string: decode it all
		{`{"a":"1"}`, 2, false, [][2]string{{"a", "1"}}},         // the object ends first
		{`{"a":"1\"2"}`, 1, false, nil},                          // an escape
		{`{"a\u0062":"1"}`, 1, false, nil},                       // an escaped key
		{`{"a":"Straße"}`, 1, false, nil},                        // beyond ASCII
		{"{\"a\":\"1\t\"}", 1, false, nil},                       // a control character
		{`{"a":null}`, 1, false, nil},                            // null leaves a field as it is
		{`{"a" "1"}`, 1, false, nil},                             // not JSON
		{`{"a":"1" "b":"2"}`, 2, false, [][2]string{{"a", "1"}}}, // not JSON
		{`{"a":"1"`, 1, true, [][2]string{{"a", "1"}}},           // it does not look past where it stops
		{`["a","1"]`, 1, false, nil},                             // not an object
		{``, 1, false, nil},
		{`{`, 1, false, nil},
		{`{"a`, 1, false, nil},
	} {
		members, stopped := lead(c.data, c.n)
		if stopped != c.stopped || !reflect.DeepEqual(members, c.members) {
			t.Errorf("%q: read %q, stopped %v; want %q, %v", c.data, members, stopped, c.members, c.stopped)
		}
	}
}

// FuzzStringsReadsWhatEncodingJSONReads: whenever Strings reads n members
// and stops, encoding/json reads the same n keys and values.
func FuzzStringsReadsWhatEncodingJSONReads(f *testing.F) {
	for _, seed := range []string{`{"account_id":"acme","actor":{"sub":"u"},"request_id":"r"}`,
		`{"invoice_id":"i","company_id":"c","account_id":"a","lines":[]}`, `{"a":"\u00e9"}`, ` {"a" :"1",  "b":"2"}`} {
		f.Add(seed, uint8(2))
	}
	f.Fuzz(func(t *testing.T, data string, n uint8) {
		want := int(n%4) + 1
		members, stopped := lead(data, want)
		if !stopped {
			return
		}
		if len(members) != want {
			t.Fatalf("%q: stopped after %d members, asked for %d", data, len(members), want)
		}
		decodedMembers, err := decoded(data, want)
		if err != nil {
			t.Fatalf("%q: Strings read %q, encoding/json fails: %v", data, members, err)
		}
		if !reflect.DeepEqual(members, decodedMembers) {
			t.Fatalf("%q: Strings read %q, encoding/json %q", data, members, decodedMembers)
		}
	})
}
