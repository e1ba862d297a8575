package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var testSecret = []byte("test-secret-of-at-least-32-bytes!!")

// t0 is the tests' "now"; tokens are minted relative to it.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

var b64 = base64.RawURLEncoding.EncodeToString

// fakeClock is a settable Config.Now, safe for concurrent tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock(t time.Time) *fakeClock { return &fakeClock{now: t} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// newVerifier builds a verifier or fails the test.
func newVerifier(t *testing.T, cfg Config) *Verifier {
	t.Helper()
	v, err := NewVerifier(cfg)
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	return v
}

// hsVerifier is the HS256-only verifier most tests use, its clock at t0.
func hsVerifier(t *testing.T) *Verifier {
	t.Helper()
	return newVerifier(t, Config{HS256Secret: testSecret, Now: func() time.Time { return t0 }})
}

// validClaims are the claims of a token valid at now.
func validClaims(now time.Time) jwt.MapClaims {
	return jwt.MapClaims{
		"sub":    "user-1",
		"org_id": "acme",
		"scope":  ScopeRead,
		"iat":    now.Unix(),
		"exp":    now.Add(time.Hour).Unix(),
	}
}

// sign signs claims with method and key, setting kid when non-empty.
func sign(t *testing.T, method jwt.SigningMethod, kid string, key any, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatalf("signing: %v", err)
	}
	return s
}

// hs256 signs claims with testSecret.
func hs256(t *testing.T, claims jwt.MapClaims) string {
	t.Helper()
	return sign(t, jwt.SigningMethodHS256, "", testSecret, claims)
}

// jwkOf encodes pub as a JWK the way an identity provider publishes it.
func jwkOf(t *testing.T, kid string, pub crypto.PublicKey) map[string]any {
	t.Helper()
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return map[string]any{"kty": "RSA", "kid": kid, "n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}
	case *ecdsa.PublicKey:
		point, err := k.Bytes() // 0x04 || x || y
		if err != nil {
			t.Fatal(err)
		}
		return map[string]any{"kty": "EC", "kid": kid, "crv": "P-256", "x": b64(point[1:33]), "y": b64(point[33:])}
	case ed25519.PublicKey:
		return map[string]any{"kty": "OKP", "kid": kid, "crv": "Ed25519", "x": b64(k)}
	}
	t.Fatalf("unsupported key %T", pub)
	return nil
}

// jwksServer is an identity provider's JWKS endpoint that counts fetches.
type jwksServer struct {
	URL    string
	hits   atomic.Int32
	keys   atomic.Value // []map[string]any
	status atomic.Int32 // 0 means 200
	gate   atomic.Value // chan struct{}: when set, responses wait for it to close
}

func newJWKSServer(t *testing.T, keys ...map[string]any) *jwksServer {
	t.Helper()
	s := &jwksServer{}
	s.setKeys(keys...)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		s.hits.Add(1)
		if gate, ok := s.gate.Load().(chan struct{}); ok {
			<-gate
		}
		if code := s.status.Load(); code != 0 {
			http.Error(w, "unavailable", int(code))
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		json.NewEncoder(w).Encode(map[string]any{"keys": s.keys.Load()})
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

func (s *jwksServer) setKeys(keys ...map[string]any) {
	if keys == nil {
		keys = []map[string]any{}
	}
	s.keys.Store(keys)
}
