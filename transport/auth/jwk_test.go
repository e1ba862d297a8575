package auth

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"math/big"
	"testing"
)

func TestParseJWK(t *testing.T) {
	k := testKeys()
	rsaJWK := jwkOf(t, "r", &k.rsa1.PublicKey)
	ecJWK := jwkOf(t, "e", &k.ec.PublicKey)
	edJWK := jwkOf(t, "d", k.ed.Public())
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	with := func(base map[string]any, kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name string
		jwk  map[string]any
		alg  string // the algorithm the key must fit; "" means the key is refused
	}{
		{"an RSA key fits RS256", rsaJWK, "RS256"},
		{"a P-256 key fits ES256", ecJWK, "ES256"},
		{"an Ed25519 key fits EdDSA", edJWK, "EdDSA"},
		{"use sig is accepted", with(rsaJWK, "use", "sig"), "RS256"},
		{"a matching alg member is accepted", with(ecJWK, "alg", "ES256"), "ES256"},
		{"an encryption key is refused", with(rsaJWK, "use", "enc"), ""},
		{"an RSA key under 2048 bits is refused", jwkOf(t, "s", &small.PublicKey), ""},
		{"an even RSA exponent is refused", with(rsaJWK, "e", b64(big.NewInt(65536).Bytes())), ""},
		{"an RSA key without n is refused", with(rsaJWK, "n", ""), ""},
		{"padded base64 is refused", with(edJWK, "x", edJWK["x"].(string)+"="), ""},
		{"a P-256 point off the curve is refused", with(ecJWK, "y", b64(make([]byte, 32))), ""},
		{"short P-256 coordinates are refused", with(ecJWK, "x", b64(make([]byte, 31))), ""},
		{"a P-384 key is refused", with(ecJWK, "crv", "P-384"), ""},
		{"an Ed448 key is refused", with(edJWK, "crv", "Ed448"), ""},
		{"a symmetric key is refused", map[string]any{"kty": "oct", "k": b64(testSecret)}, ""},
		{"a non-string member is refused", with(rsaJWK, "kid", 7), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(tt.jwk)
			if err != nil {
				t.Fatal(err)
			}
			key, err := parseJWK(raw)
			switch {
			case tt.alg == "" && err == nil:
				t.Errorf("parseJWK accepted %s", raw)
			case tt.alg != "" && err != nil:
				t.Errorf("parseJWK: %v", err)
			case tt.alg != "" && !key.fits(tt.alg):
				t.Errorf("key %T does not fit %s", key.key, tt.alg)
			}
		})
	}
}

func TestKeyFitsOnlyItsAlgorithm(t *testing.T) {
	k := testKeys()
	tests := []struct {
		name string
		key  jwk
		alg  string
		want bool
	}{
		{"an RSA key does not fit ES256", jwk{key: &k.rsa1.PublicKey}, "ES256", false},
		{"an EC key does not fit RS256", jwk{key: &k.ec.PublicKey}, "RS256", false},
		{"an Ed25519 key does not fit HS256", jwk{key: k.ed.Public()}, "HS256", false},
		{"a key declared RS512 does not fit RS256", jwk{alg: "RS512", key: &k.rsa1.PublicKey}, "RS256", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.key.fits(tt.alg); got != tt.want {
				t.Errorf("fits(%s) = %v, want %v", tt.alg, got, tt.want)
			}
		})
	}
}
