package auth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestConcurrentUnknownKidsShareOneFetch(t *testing.T) {
	k := testKeys()
	srv := newJWKSServer(t, jwkOf(t, "r", &k.rsa1.PublicKey))
	gate := make(chan struct{})
	srv.gate.Store(gate)
	v := jwksVerifier(t, srv, newClock(t0))
	token := sign(t, jwt.SigningMethodRS256, "r", k.rsa1, validClaims(t0))
	const n = 20
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := v.Verify(context.Background(), token)
			errs <- err
		}()
	}
	time.Sleep(50 * time.Millisecond) // let the verifications pile up behind the fetch
	close(gate)
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("Verify: %v", err)
		}
	}
	wantHits(t, srv, 1, "concurrent first use")
}

func TestKnownKidsVerifyWhileAFetchIsSlow(t *testing.T) {
	k := testKeys()
	srv := newJWKSServer(t, jwkOf(t, "r", &k.rsa1.PublicKey))
	clock := newClock(t0)
	v := jwksVerifier(t, srv, clock)
	known := sign(t, jwt.SigningMethodRS256, "r", k.rsa1, validClaims(t0))
	if _, err := v.Verify(context.Background(), known); err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	srv.gate.Store(gate)
	defer close(gate)
	clock.Advance(2 * time.Minute)
	go v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, "unknown", k.rsa2, validClaims(t0)))
	for srv.hits.Load() < 2 { // wait until the refetch is stuck at the server
		time.Sleep(time.Millisecond)
	}
	done := make(chan error, 1)
	go func() { _, err := v.Verify(context.Background(), known); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("known kid during a slow fetch: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Error("a known kid waited for an unrelated JWKS fetch")
	}
}

func TestJWKSErrorStatusIsUnauthenticatedAndRateLimited(t *testing.T) {
	k := testKeys()
	token := sign(t, jwt.SigningMethodRS256, "r", k.rsa1, validClaims(t0))
	srv := newJWKSServer(t, jwkOf(t, "r", &k.rsa1.PublicKey))
	srv.status.Store(http.StatusServiceUnavailable)
	clock := newClock(t0)
	v := jwksVerifier(t, srv, clock)
	if _, err := v.Verify(context.Background(), token); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("Verify = %v, want ErrUnauthenticated", err)
	}
	srv.status.Store(0)
	if _, err := v.Verify(context.Background(), token); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("within a minute of a failed fetch: %v, want ErrUnauthenticated", err)
	}
	wantHits(t, srv, 1, "retries within a minute of a failure")
	clock.Advance(time.Minute)
	if _, err := v.Verify(context.Background(), token); err != nil {
		t.Errorf("a minute after the failure: %v", err)
	}
}

func TestJWKSUnreachableWrapsTheTransportError(t *testing.T) {
	k := testKeys()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	v := newVerifier(t, Config{JWKSURL: gone.URL + "/jwks", Now: newClock(t0).Now})
	_, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, "r", k.rsa1, validClaims(t0)))
	var urlErr *url.Error
	if !errors.Is(err, ErrUnauthenticated) || !errors.As(err, &urlErr) {
		t.Errorf("Verify = %v, want ErrUnauthenticated wrapping *url.Error", err)
	}
}

func TestJWKSWithoutUsableKeysKeepsThePreviousKeys(t *testing.T) {
	k := testKeys()
	token := sign(t, jwt.SigningMethodRS256, "r", k.rsa1, validClaims(t0))
	srv := newJWKSServer(t, jwkOf(t, "r", &k.rsa1.PublicKey))
	clock := newClock(t0)
	v := jwksVerifier(t, srv, clock)
	if _, err := v.Verify(context.Background(), token); err != nil {
		t.Fatal(err)
	}
	srv.setKeys(map[string]any{"kty": "EC", "kid": "p384", "crv": "P-384", "x": "AA", "y": "AA"})
	clock.Advance(2 * time.Minute)
	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, "x", k.rsa2, validClaims(t0))); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("unknown kid against an unusable set: %v", err)
	}
	wantHits(t, srv, 2, "the unknown kid refetched")
	if _, err := v.Verify(context.Background(), token); err != nil {
		t.Errorf("the previous key after an unusable set: %v", err)
	}
}
