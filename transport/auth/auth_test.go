package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var b64 = base64.RawURLEncoding.EncodeToString

func jwkOf(t *testing.T, kid string, pub crypto.PublicKey) map[string]any {
	t.Helper()
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return map[string]any{"kty": "RSA", "kid": kid, "n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}
	case *ecdsa.PublicKey:
		return map[string]any{"kty": "EC", "kid": kid, "crv": "P-256", "x": b64(k.X.FillBytes(make([]byte, 32))), "y": b64(k.Y.FillBytes(make([]byte, 32)))}
	case ed25519.PublicKey:
		return map[string]any{"kty": "OKP", "kid": kid, "crv": "Ed25519", "x": b64(k)}
	}
	t.Fatalf("unsupported key %T", pub)
	return nil
}

// jwksServer serves the keys in *set and counts fetches.
func jwksServer(t *testing.T, set *atomic.Value, hits *atomic.Int32) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		json.NewEncoder(w).Encode(map[string]any{"keys": set.Load()})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func sign(t *testing.T, method jwt.SigningMethod, kid string, key any, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func claims(now time.Time) jwt.MapClaims {
	return jwt.MapClaims{"sub": "svc", "org_id": "acme", "scp": []string{ScopeWrite}, "azp": "client-7", "exp": now.Add(time.Hour).Unix()}
}

func TestJWKSAlgorithms(t *testing.T) {
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	edPub, edKey, _ := ed25519.GenerateKey(rand.Reader)
	var set atomic.Value
	set.Store([]any{jwkOf(t, "r", &rsaKey.PublicKey), jwkOf(t, "e", &ecKey.PublicKey), jwkOf(t, "d", edPub)})
	var hits atomic.Int32
	v, err := NewVerifier(Config{JWKSURL: jwksServer(t, &set, &hits)})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tests := []struct {
		name   string
		method jwt.SigningMethod
		kid    string
		key    any
	}{
		{"RS256", jwt.SigningMethodRS256, "r", rsaKey},
		{"ES256", jwt.SigningMethodES256, "e", ecKey},
		{"EdDSA", jwt.SigningMethodEdDSA, "d", edKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := v.Verify(context.Background(), sign(t, tt.method, tt.kid, tt.key, claims(now)))
			if err != nil {
				t.Fatal(err)
			}
			if p.AccountID != "acme" || p.Subject != "svc" || p.ClientID != "client-7" || !p.CanWrite() || !p.CanRead() {
				t.Errorf("principal = %+v", p)
			}
		})
	}
	if hits.Load() != 1 {
		t.Errorf("JWKS fetched %d times, want once (cached)", hits.Load())
	}
	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, "", []byte("secret"), claims(now))); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("HS256 with only JWKS configured: %v, want ErrUnauthenticated", err)
	}
}

func TestUnknownKidRefetchesAtMostOncePerMinute(t *testing.T) {
	oldKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	newKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	var set atomic.Value
	set.Store([]any{jwkOf(t, "old", &oldKey.PublicKey)})
	var hits atomic.Int32
	now := time.Now()
	clock := now
	v, _ := NewVerifier(Config{JWKSURL: jwksServer(t, &set, &hits), Now: func() time.Time { return clock }})
	ctx := context.Background()
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, "old", oldKey, claims(now))); err != nil {
		t.Fatal(err)
	}
	set.Store([]any{jwkOf(t, "old", &oldKey.PublicKey), jwkOf(t, "new", &newKey.PublicKey)}) // key rotation
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, "new", newKey, claims(now))); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("a new kid within a minute of the last fetch: %v; want refused without refetch", err)
	}
	if hits.Load() != 1 {
		t.Fatalf("%d fetches within a minute, want 1", hits.Load())
	}
	clock = now.Add(61 * time.Second)
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, "new", newKey, claims(clock))); err != nil {
		t.Fatalf("after a minute the unknown kid refetches: %v", err)
	}
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, "made-up", newKey, claims(clock))); !errors.Is(err, ErrUnauthenticated) || hits.Load() != 2 {
		t.Errorf("made-up kid: %v after %d fetches; want refusal and no third fetch", err, hits.Load())
	}
}

func TestTimeClaims(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	now := time.Now()
	v, _ := NewVerifier(Config{HS256Secret: secret, Now: func() time.Time { return now }})
	tests := []struct {
		name string
		edit func(jwt.MapClaims)
		ok   bool
	}{
		{"expired within the 60 s leeway", func(c jwt.MapClaims) { c["exp"] = now.Add(-30 * time.Second).Unix() }, true},
		{"expired beyond the leeway", func(c jwt.MapClaims) { c["exp"] = now.Add(-90 * time.Second).Unix() }, false},
		{"not yet valid beyond the leeway", func(c jwt.MapClaims) { c["nbf"] = now.Add(2 * time.Minute).Unix() }, false},
		{"issued in the future beyond the leeway", func(c jwt.MapClaims) { c["iat"] = now.Add(2 * time.Minute).Unix() }, false},
		{"no exp", func(c jwt.MapClaims) { delete(c, "exp") }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := claims(now)
			tt.edit(c)
			_, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, "", secret, c))
			if (err == nil) != tt.ok {
				t.Errorf("err = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestParseBearer(t *testing.T) {
	for header, ok := range map[string]bool{"Bearer abc": true, "bearer abc": true, "": false, "Bearer": false, "Bearer ": false, "Basic abc": false, "abc": false} {
		if _, err := ParseBearer(header); (err == nil) != ok {
			t.Errorf("ParseBearer(%q) = %v, want ok=%v", header, err, ok)
		}
	}
}
