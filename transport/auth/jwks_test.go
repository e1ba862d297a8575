package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// keys are generated once: RSA generation is slow enough to matter.
var testKeys = sync.OnceValue(func() (k struct {
	rsa1, rsa2 *rsa.PrivateKey
	ec         *ecdsa.PrivateKey
	ed         ed25519.PrivateKey
}) {
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	var err error
	k.rsa1, err = rsa.GenerateKey(rand.Reader, 2048)
	must(err)
	k.rsa2, err = rsa.GenerateKey(rand.Reader, 2048)
	must(err)
	k.ec, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(err)
	_, k.ed, err = ed25519.GenerateKey(rand.Reader)
	must(err)
	return k
})

// jwksVerifier is a JWKS-only verifier on srv, its clock at clock.
func jwksVerifier(t *testing.T, srv *jwksServer, clock *fakeClock) *Verifier {
	t.Helper()
	return newVerifier(t, Config{JWKSURL: srv.URL, Now: clock.Now})
}

func wantHits(t *testing.T, srv *jwksServer, want int32, why string) {
	t.Helper()
	if got := srv.hits.Load(); got != want {
		t.Errorf("%s: %d JWKS fetches, want %d", why, got, want)
	}
}

func TestJWKSVerifiesEveryAllowedAlgorithm(t *testing.T) {
	k := testKeys()
	srv := newJWKSServer(t, jwkOf(t, "r", &k.rsa1.PublicKey), jwkOf(t, "e", &k.ec.PublicKey), jwkOf(t, "d", k.ed.Public()))
	v := jwksVerifier(t, srv, newClock(t0))
	tests := []struct {
		name   string
		method jwt.SigningMethod
		kid    string
		key    any
	}{
		{"RS256 verifies with an RSA key", jwt.SigningMethodRS256, "r", k.rsa1},
		{"ES256 verifies with a P-256 key", jwt.SigningMethodES256, "e", k.ec},
		{"EdDSA verifies with an Ed25519 key", jwt.SigningMethodEdDSA, "d", k.ed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := v.Verify(context.Background(), sign(t, tt.method, tt.kid, tt.key, validClaims(t0)))
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if p.AccountID != "acme" || p.Subject != "user-1" || !p.CanRead() {
				t.Errorf("principal = %+v", p)
			}
		})
	}
	wantHits(t, srv, 1, "three tokens with known kids")
}

func TestJWKSRefusesTokensItCannotVerify(t *testing.T) {
	k := testKeys()
	srv := newJWKSServer(t, jwkOf(t, "r", &k.rsa1.PublicKey), jwkOf(t, "e", &k.ec.PublicKey))
	v := jwksVerifier(t, srv, newClock(t0))
	tests := []struct {
		name  string
		token func(t *testing.T) string
	}{
		{"HS256 is refused when only JWKS is configured", func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS256, "r", testSecret, validClaims(t0))
		}},
		{"HS256 signed with the RSA modulus is refused (algorithm confusion)", func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS256, "r", k.rsa1.N.Bytes(), validClaims(t0))
		}},
		{"RS512 is not an allowed algorithm", func(t *testing.T) string {
			return sign(t, jwt.SigningMethodRS512, "r", k.rsa1, validClaims(t0))
		}},
		{"a known kid of another key type is refused", func(t *testing.T) string {
			return sign(t, jwt.SigningMethodES256, "r", k.ec, validClaims(t0))
		}},
		{"a signature by a key not in the set is refused", func(t *testing.T) string {
			return sign(t, jwt.SigningMethodRS256, "r", k.rsa2, validClaims(t0))
		}},
		{"alg none is refused", func(t *testing.T) string { return noneToken(t, validClaims(t0), "") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := v.Verify(context.Background(), tt.token(t)); !errors.Is(err, ErrUnauthenticated) {
				t.Errorf("Verify = %v, want ErrUnauthenticated", err)
			}
		})
	}
}

func TestTokenWithoutKidUsesTheOnlyKeyOfItsType(t *testing.T) {
	k := testKeys()
	srv := newJWKSServer(t, jwkOf(t, "r1", &k.rsa1.PublicKey), jwkOf(t, "e", &k.ec.PublicKey))
	v := jwksVerifier(t, srv, newClock(t0))
	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodES256, "", k.ec, validClaims(t0))); err != nil {
		t.Errorf("ES256 without kid, one EC key: %v", err)
	}
	srv.setKeys(jwkOf(t, "r1", &k.rsa1.PublicKey), jwkOf(t, "r2", &k.rsa2.PublicKey))
	v = jwksVerifier(t, srv, newClock(t0))
	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, "", k.rsa1, validClaims(t0))); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("RS256 without kid, two RSA keys: %v, want ErrUnauthenticated (ambiguous)", err)
	}
}

func TestUnknownKidRefetchesOnceAfterKeyRotation(t *testing.T) {
	k := testKeys()
	srv := newJWKSServer(t, jwkOf(t, "old", &k.rsa1.PublicKey))
	clock := newClock(t0)
	v := jwksVerifier(t, srv, clock)
	ctx := context.Background()
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, "old", k.rsa1, validClaims(t0))); err != nil {
		t.Fatalf("old key: %v", err)
	}
	wantHits(t, srv, 1, "first use fetches lazily")

	clock.Advance(5 * time.Minute)
	srv.setKeys(jwkOf(t, "old", &k.rsa1.PublicKey), jwkOf(t, "new", &k.rsa2.PublicKey))
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, "new", k.rsa2, validClaims(clock.Now()))); err != nil {
		t.Fatalf("rotated key: %v", err)
	}
	wantHits(t, srv, 2, "an unknown kid refetches once")
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, "old", k.rsa1, validClaims(clock.Now()))); err != nil {
		t.Errorf("old key after the refetch: %v", err)
	}
	wantHits(t, srv, 2, "known kids after a refetch")
}

func TestUnknownKidRefetchesAtMostOncePerMinute(t *testing.T) {
	k := testKeys()
	srv := newJWKSServer(t, jwkOf(t, "old", &k.rsa1.PublicKey))
	clock := newClock(t0)
	v := jwksVerifier(t, srv, clock)
	ctx := context.Background()
	unknown := func(kid string) error {
		t.Helper()
		_, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, kid, k.rsa2, validClaims(clock.Now())))
		return err
	}
	if err := unknown("made-up-1"); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("kid not in the set: %v, want ErrUnauthenticated", err)
	}
	wantHits(t, srv, 1, "the first unknown kid")

	srv.setKeys(jwkOf(t, "new", &k.rsa2.PublicKey)) // rotated, but too soon to look
	clock.Advance(59 * time.Second)
	if err := unknown("new"); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("second unknown kid within a minute: %v, want ErrUnauthenticated", err)
	}
	wantHits(t, srv, 1, "a second unknown kid within a minute")

	clock.Advance(time.Second)
	if err := unknown("new"); err != nil {
		t.Errorf("a minute after the last fetch: %v, want the rotated key found", err)
	}
	wantHits(t, srv, 2, "a minute after the last fetch")
}

func TestVerifyWithBothKeySources(t *testing.T) {
	k := testKeys()
	srv := newJWKSServer(t, jwkOf(t, "d", k.ed.Public()))
	v := newVerifier(t, Config{HS256Secret: testSecret, JWKSURL: srv.URL, Now: func() time.Time { return t0 }})
	for name, token := range map[string]string{
		"HS256": hs256(t, validClaims(t0)),
		"EdDSA": sign(t, jwt.SigningMethodEdDSA, "d", k.ed, validClaims(t0)),
	} {
		if _, err := v.Verify(context.Background(), token); err != nil {
			t.Errorf("%s with both sources configured: %v", name, err)
		}
	}
	wantHits(t, srv, 1, "HS256 needs no fetch, EdDSA one")
}
