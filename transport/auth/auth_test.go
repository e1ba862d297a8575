package auth

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestVerifyHS256ReturnsThePrincipal(t *testing.T) {
	c := validClaims(t0)
	c["scope"] = "invoicing:read invoicing:write"
	c["azp"] = "cli"
	got, err := hsVerifier(t).Verify(context.Background(), hs256(t, c))
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	want := Principal{AccountID: "acme", Subject: "user-1", ClientID: "cli", Scopes: []string{ScopeRead, ScopeWrite}}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("principal (-want +got):\n-%+v\n+%+v", want, got)
	}
}

// noneToken builds an unsigned token by hand, as an attacker would.
func noneToken(t *testing.T, claims jwt.MapClaims, sig string) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	// {"alg":"none","typ":"JWT"}
	return "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + b64(payload) + "." + sig
}

func TestVerifyRefusesForgedTokens(t *testing.T) {
	otherSecret := []byte("another-secret-of-at-least-32-bytes")
	tests := []struct {
		name  string
		token func(t *testing.T) string
	}{
		{"a signature by another secret is refused", func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS256, "", otherSecret, validClaims(t0))
		}},
		{"a tampered payload is refused", func(t *testing.T) string {
			parts := strings.Split(hs256(t, validClaims(t0)), ".")
			c := validClaims(t0)
			c["org_id"] = "victim"
			payload, _ := json.Marshal(c)
			return parts[0] + "." + b64(payload) + "." + parts[2]
		}},
		{"alg none without a signature is refused", func(t *testing.T) string {
			return noneToken(t, validClaims(t0), "")
		}},
		{"alg none with a signature is refused", func(t *testing.T) string {
			return noneToken(t, validClaims(t0), b64([]byte("whatever")))
		}},
		{"HS512 is not an allowed algorithm even with the right secret", func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS512, "", testSecret, validClaims(t0))
		}},
		{"garbage is refused", func(*testing.T) string { return "not.a.jwt" }},
		{"an empty token is refused", func(*testing.T) string { return "" }},
	}
	v := hsVerifier(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := v.Verify(context.Background(), tt.token(t))
			if !errors.Is(err, ErrUnauthenticated) {
				t.Errorf("Verify = %v, want ErrUnauthenticated", err)
			}
		})
	}
}

func TestVerifyTimeClaims(t *testing.T) {
	tests := []struct {
		name string
		edit func(jwt.MapClaims)
		ok   bool
	}{
		{"expired 30 s ago is within the 60 s leeway", func(c jwt.MapClaims) { c["exp"] = t0.Add(-30 * time.Second).Unix() }, true},
		{"expired 90 s ago is beyond the leeway", func(c jwt.MapClaims) { c["exp"] = t0.Add(-90 * time.Second).Unix() }, false},
		{"nbf 30 s ahead is within the leeway", func(c jwt.MapClaims) { c["nbf"] = t0.Add(30 * time.Second).Unix() }, true},
		{"nbf 2 min ahead is not yet valid", func(c jwt.MapClaims) { c["nbf"] = t0.Add(2 * time.Minute).Unix() }, false},
		{"iat 2 min ahead is refused", func(c jwt.MapClaims) { c["iat"] = t0.Add(2 * time.Minute).Unix() }, false},
		{"exp is required", func(c jwt.MapClaims) { delete(c, "exp") }, false},
		{"exp must be a number", func(c jwt.MapClaims) { c["exp"] = "tomorrow" }, false},
	}
	v := hsVerifier(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validClaims(t0)
			tt.edit(c)
			_, err := v.Verify(context.Background(), hs256(t, c))
			if tt.ok && err != nil {
				t.Errorf("Verify = %v, want ok", err)
			}
			if !tt.ok && !errors.Is(err, ErrUnauthenticated) {
				t.Errorf("Verify = %v, want ErrUnauthenticated", err)
			}
		})
	}
}

func TestVerifyIssuerAndAudience(t *testing.T) {
	v := newVerifier(t, Config{HS256Secret: testSecret, Issuer: "https://idp.example", Audience: "invoicing", Now: func() time.Time { return t0 }})
	tests := []struct {
		name string
		iss  any
		aud  any
		ok   bool
	}{
		{"matching iss and aud are accepted", "https://idp.example", "invoicing", true},
		{"aud may be an array containing ours", "https://idp.example", []string{"billing", "invoicing"}, true},
		{"a wrong iss is refused", "https://evil.example", "invoicing", false},
		{"a missing iss is refused when one is configured", nil, "invoicing", false},
		{"a wrong aud is refused", "https://idp.example", "billing", false},
		{"a missing aud is refused when one is configured", "https://idp.example", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validClaims(t0)
			if tt.iss != nil {
				c["iss"] = tt.iss
			}
			if tt.aud != nil {
				c["aud"] = tt.aud
			}
			_, err := v.Verify(context.Background(), hs256(t, c))
			if tt.ok != (err == nil) || (err != nil && !errors.Is(err, ErrUnauthenticated)) {
				t.Errorf("Verify = %v, want ok=%v or ErrUnauthenticated", err, tt.ok)
			}
		})
	}
}

func TestVerifyWithoutAccountIsForbidden(t *testing.T) {
	tests := []struct {
		name string
		org  any // nil removes the claim
	}{
		{"a missing account claim is forbidden", nil},
		{"an empty account claim is forbidden", ""},
		{"a numeric account claim is forbidden", 42},
		{"an array account claim is forbidden", []string{"acme"}},
	}
	v := hsVerifier(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validClaims(t0)
			delete(c, "org_id")
			if tt.org != nil {
				c["org_id"] = tt.org
			}
			_, err := v.Verify(context.Background(), hs256(t, c))
			if !errors.Is(err, ErrForbidden) || errors.Is(err, ErrUnauthenticated) {
				t.Errorf("Verify = %v, want ErrForbidden only", err)
			}
		})
	}
}

func TestVerifyReadsTheConfiguredOrgClaim(t *testing.T) {
	v := newVerifier(t, Config{HS256Secret: testSecret, OrgClaim: "https://example.com/tenant", Now: func() time.Time { return t0 }})
	c := validClaims(t0)
	c["https://example.com/tenant"] = "globex"
	p, err := v.Verify(context.Background(), hs256(t, c))
	if err != nil || p.AccountID != "globex" {
		t.Errorf("Verify = %+v, %v; want account globex", p, err)
	}
}

func TestVerifyScopesAndClientID(t *testing.T) {
	tests := []struct {
		name         string
		claims       jwt.MapClaims
		wantScopes   []string
		wantClientID string
		read, write  bool
	}{
		{"scope is a space separated string", jwt.MapClaims{"scope": "openid  invoicing:read"}, []string{"openid", ScopeRead}, "", true, false},
		{"scp may be an array", jwt.MapClaims{"scp": []string{ScopeWrite}}, []string{ScopeWrite}, "", true, true},
		{"scp may be a space separated string", jwt.MapClaims{"scp": "invoicing:read invoicing:write"}, []string{ScopeRead, ScopeWrite}, "", true, true},
		{"scope and scp add up", jwt.MapClaims{"scope": ScopeRead, "scp": []string{ScopeWrite}}, []string{ScopeRead, ScopeWrite}, "", true, true},
		{"no scope grants nothing", jwt.MapClaims{}, nil, "", false, false},
		{"scope names are exact", jwt.MapClaims{"scope": "invoicing:WRITE invoicing"}, []string{"invoicing:WRITE", "invoicing"}, "", false, false},
		{"azp is the client", jwt.MapClaims{"azp": "web", "client_id": "other"}, nil, "web", false, false},
		{"client_id is the client without azp", jwt.MapClaims{"client_id": "batch"}, nil, "batch", false, false},
	}
	v := hsVerifier(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validClaims(t0)
			delete(c, "scope")
			for k, val := range tt.claims {
				c[k] = val
			}
			p, err := v.Verify(context.Background(), hs256(t, c))
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if !reflect.DeepEqual(tt.wantScopes, p.Scopes) || p.ClientID != tt.wantClientID {
				t.Errorf("scopes, client (-want +got):\n-%q %q\n+%q %q", tt.wantScopes, tt.wantClientID, p.Scopes, p.ClientID)
			}
			if p.CanRead() != tt.read || p.CanWrite() != tt.write {
				t.Errorf("CanRead, CanWrite = %v, %v; want %v, %v", p.CanRead(), p.CanWrite(), tt.read, tt.write)
			}
		})
	}
}

func TestNewVerifierRefusesBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"neither secret nor JWKS URL", Config{Issuer: "https://idp.example"}},
		{"a secret shorter than 32 bytes", Config{HS256Secret: []byte("short")}},
		{"a relative JWKS URL", Config{JWKSURL: "/jwks.json"}},
		{"a JWKS URL of another scheme", Config{JWKSURL: "file:///etc/jwks.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewVerifier(tt.cfg); err == nil {
				t.Error("NewVerifier succeeded, want an error")
			}
		})
	}
}

func TestVerifierKeepsItsOwnCopyOfTheSecret(t *testing.T) {
	secret := append([]byte(nil), testSecret...)
	v := newVerifier(t, Config{HS256Secret: secret, Now: func() time.Time { return t0 }})
	clear(secret)
	if _, err := v.Verify(context.Background(), hs256(t, validClaims(t0))); err != nil {
		t.Errorf("Verify after the caller reused its buffer: %v", err)
	}
}
