package bench

import (
	"strings"
	"testing"
)

// TestIDReadsTheIDMemberWhereverItIs: the load generator reads the id of
// a created resource from its body, first member or not, and refuses a
// body without one.
func TestIDReadsTheIDMemberWhereverItIs(t *testing.T) {
	for _, tc := range []struct {
		body, want string
	}{
		{`{"id":"a1","lines":[{"id":"x"}]}`, "a1"},
		{`{"company":{"id":"nested"},"lines":[1,2,{"id":"y"}],"id":"b2"}`, "b2"},
		{` { "id" : "c3" } `, "c3"},
		{`{"lines":[{"id":"x"}]}`, ""},
		{`{"id":7}`, ""},
		{`{"id":""}`, ""},
		{`["id","d4"]`, ""},
		{`{"id":`, ""},
	} {
		got, err := id([]byte(tc.body))
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("id(%s) = %q, %v; want %q", tc.body, got, err, tc.want)
		}
	}
}

// BenchmarkID reads the id of a created invoice's body of about 3 KB.
func BenchmarkID(b *testing.B) {
	body := []byte(`{"id":"01a223d6-1583-72f3-8630-b5fd4276b3aa","lines":[` + strings.Repeat(`{"description":"Consulting, senior","quantity":"1.500","unit_price_minor":12000},`, 40) + `{}]}`)
	for b.Loop() {
		if _, err := id(body); err != nil {
			b.Fatal(err)
		}
	}
}
