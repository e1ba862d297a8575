package main

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

const (
	testIssuer   = "https://issuer.test/"
	testAudience = "invoicing-api"
)

// signed returns an HS256 token with claims, signed with secret.
func signed(t *testing.T, secret string, claims jwt.MapClaims) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func validClaims() jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{
		"sub": "user-1", "org_id": "acme", "scope": "invoicing:read invoicing:write",
		"iss": testIssuer, "aud": testAudience, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}
}

func with(c jwt.MapClaims, k string, v any) jwt.MapClaims {
	out := jwt.MapClaims{}
	for key, val := range c {
		out[key] = val
	}
	if v == nil {
		delete(out, k)
	} else {
		out[k] = v
	}
	return out
}

func TestAuthentication(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"keys": []any{map[string]any{
			"kty": "RSA", "kid": "key-1", "alg": "RS256", "use": "sig",
			"n": base64.RawURLEncoding.EncodeToString(rsaKey.N.Bytes()),
			"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(rsaKey.E)).Bytes()),
		}}})
	}))
	defer jwks.Close()
	s := newService(t, func(c *config) {
		c.Auth.JWKSURL, c.Auth.Issuer, c.Auth.Audience = jwks.URL, testIssuer, testAudience
	})
	rs256 := jwt.NewWithClaims(jwt.SigningMethodRS256, validClaims())
	rs256.Header["kid"] = "key-1"
	rsToken, err := rs256.SignedString(rsaKey)
	if err != nil {
		t.Fatal(err)
	}
	noneToken, err := jwt.NewWithClaims(jwt.SigningMethodNone, validClaims()).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	expired := with(validClaims(), "exp", time.Now().Add(-2*time.Minute).Unix())
	tests := []struct {
		name          string
		authorization string
		method        string
		want          int
	}{
		{"missing header", "", http.MethodGet, 401},
		{"garbled token", "Bearer not.a.jwt", http.MethodGet, 401},
		{"not a bearer scheme", "Basic dXNlcjpwYXNz", http.MethodGet, 401},
		{"wrong signature", "Bearer " + signed(t, "another-secret-another-secret!!!", validClaims()), http.MethodGet, 401},
		{"alg none", "Bearer " + noneToken, http.MethodGet, 401},
		{"expired beyond the leeway", "Bearer " + signed(t, testSecret, expired), http.MethodGet, 401},
		{"no expiry", "Bearer " + signed(t, testSecret, with(validClaims(), "exp", nil)), http.MethodGet, 401},
		{"wrong issuer", "Bearer " + signed(t, testSecret, with(validClaims(), "iss", "https://evil.test/")), http.MethodGet, 401},
		{"wrong audience", "Bearer " + signed(t, testSecret, with(validClaims(), "aud", "other-api")), http.MethodGet, 401},
		{"valid HS256", "Bearer " + signed(t, testSecret, validClaims()), http.MethodGet, 200},
		{"valid RS256 from the JWKS endpoint", "Bearer " + rsToken, http.MethodGet, 200},
		{"no account claim", "Bearer " + signed(t, testSecret, with(validClaims(), "org_id", nil)), http.MethodGet, 403},
		{"no scope", "Bearer " + signed(t, testSecret, with(validClaims(), "scope", nil)), http.MethodGet, 403},
		{"read scope only, on a create", "Bearer " + signed(t, testSecret, with(validClaims(), "scope", "invoicing:read")), http.MethodPost, 403},
		{"write scope reads", "Bearer " + signed(t, testSecret, with(validClaims(), "scope", "invoicing:write")), http.MethodGet, 200},
		{"scp array grants write", "Bearer " + signed(t, testSecret, with(with(validClaims(), "scope", nil), "scp", []string{"invoicing:write"})), http.MethodPost, 201},
	}
	codes := map[int]string{401: "unauthenticated", 403: "forbidden"}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := request{method: tt.method, path: "/v1/companies", headers: map[string]string{"Authorization": tt.authorization}}
			if tt.method == http.MethodPost {
				req.key, req.body = "auth-create-"+string(rune('a'+i)), minimalCompany
			}
			res := s.do(t, req)
			mustStatus(t, res, tt.want)
			if want, ok := codes[tt.want]; ok {
				if code := errorCode(t, res); code != want {
					t.Errorf("code = %q, want %q", code, want)
				}
			}
		})
	}
}
