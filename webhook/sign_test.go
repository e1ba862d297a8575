package webhook

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// The reference library verifies what Signature signs, with the current
// secret and with the previous one during a rotation's overlap; a wrong
// secret and a stale timestamp are refused.
func TestStandardWebhooksVerifiesOurSignatures(t *testing.T) {
	key := []byte(strings.Repeat("k", MinMasterKeyBytes))
	current, err := Secret(key, "acme", "ep-1", 2)
	if err != nil {
		t.Fatal(err)
	}
	previous, _ := Secret(key, "acme", "ep-1", 1)
	other, _ := Secret(key, "acme", "ep-2", 1)
	body := []byte(`{"id":"evt","type":"invoice.issued"}`)
	headers := func(ts time.Time, secrets ...string) http.Header {
		sig, err := Signature(secrets, "evt_1", ts, body)
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		h.Set(HeaderID, "evt_1")
		h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
		h.Set(HeaderSignature, sig)
		return h
	}
	for _, tc := range []struct {
		name     string
		verifier string
		headers  http.Header
		ok       bool
	}{
		{"the current secret", current, headers(time.Now(), current), true},
		{"the previous secret while both sign", previous, headers(time.Now(), current, previous), true},
		{"another endpoint's secret", other, headers(time.Now(), current), false},
		{"a replayed old timestamp", current, headers(time.Now().Add(-10*time.Minute), current), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wh, err := standardwebhooks.NewWebhook(tc.verifier)
			if err != nil {
				t.Fatal(err)
			}
			if err := wh.Verify(body, tc.headers); (err == nil) != tc.ok {
				t.Errorf("Verify = %v, want ok %v", err, tc.ok)
			}
		})
	}
	if again, _ := Secret(key, "acme", "ep-1", 2); again != current {
		t.Error("a secret is not derived the same way twice")
	}
	if _, err := Secret(key[:10], "acme", "ep-1", 1); err == nil {
		t.Error("a short master key derived a secret")
	}
}
