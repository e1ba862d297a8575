package auth

import (
	"context"
	"errors"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// critToken signs validClaims(t0) correctly, with crit set to the given
// value in the protected header.
func critToken(t *testing.T, method jwt.SigningMethod, kid string, key any, crit any) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, validClaims(t0))
	tok.Header["crit"] = crit
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatalf("signing: %v", err)
	}
	return s
}

func TestVerifyRefusesTokensWithCrit(t *testing.T) {
	tests := []struct {
		name string
		crit any
	}{
		{"crit naming a registered claim", []string{"exp"}},
		{"crit naming the unencoded-payload extension", []string{"b64"}},
		{"crit naming an unknown extension", []string{"https://example.com/ext"}},
		{"an empty crit array, itself invalid", []string{}},
		{"a crit that is not an array", "exp"},
		{"a null crit", nil},
	}
	v := hsVerifier(t)
	if _, err := v.Verify(context.Background(), hs256(t, validClaims(t0))); err != nil {
		t.Fatalf("the same token without crit: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := v.Verify(context.Background(), critToken(t, jwt.SigningMethodHS256, "", testSecret, tt.crit))
			if !errors.Is(err, ErrUnauthenticated) {
				t.Errorf("Verify = %v, want ErrUnauthenticated", err)
			}
		})
	}
}

func TestCritIsRefusedBeforeTheJWKSIsFetched(t *testing.T) {
	k := testKeys()
	srv := newJWKSServer(t, jwkOf(t, "e", &k.ec.PublicKey))
	v := jwksVerifier(t, srv, newClock(t0))
	_, err := v.Verify(context.Background(), critToken(t, jwt.SigningMethodES256, "e", k.ec, []string{"b64"}))
	if !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("Verify = %v, want ErrUnauthenticated", err)
	}
	wantHits(t, srv, 0, "a token with crit")
}
