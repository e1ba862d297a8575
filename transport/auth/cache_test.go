package auth

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A remembered token is trusted no longer than the parser would trust it:
// one that expired within the leeway verifies, and stops verifying when
// the leeway is over, although a minute has not passed.
func TestARememberedTokenExpiresAsTheParserWouldHaveIt(t *testing.T) {
	clock := newClock(t0)
	v := newVerifier(t, Config{HS256Secret: testSecret, Now: clock.Now})
	claims := validClaims(t0)
	claims["exp"] = t0.Add(-30 * time.Second).Unix() // inside the 60 s leeway
	token := hs256(t, claims)
	if _, err := v.Verify(context.Background(), token); err != nil {
		t.Fatalf("a token within the leeway: %v", err)
	}
	clock.Advance(31 * time.Second)
	if _, err := v.Verify(context.Background(), token); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("the same token past exp + leeway = %v, want ErrUnauthenticated", err)
	}
}

// Only the very bytes of a verified token are remembered: the same token
// with another signature is checked, and refused.
func TestARememberedTokenIsMatchedByteForByte(t *testing.T) {
	v := hsVerifier(t)
	token := hs256(t, validClaims(t0))
	if _, err := v.Verify(context.Background(), token); err != nil {
		t.Fatal(err)
	}
	forged := token[:len(token)-2] + "AA"
	if forged == token {
		forged = token[:len(token)-2] + "BB"
	}
	if _, err := v.Verify(context.Background(), forged); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("a remembered token with another signature = %v, want ErrUnauthenticated", err)
	}
}

func TestVerifiedTokens(t *testing.T) {
	var c verifiedTokens
	p := Principal{AccountID: "acme", Scopes: []string{ScopeRead}}
	c.put("a", p, t0.Add(time.Hour), t0)
	got, ok := c.get("a", t0.Add(59*time.Second))
	if !ok || got.AccountID != "acme" {
		t.Fatalf("within the minute: %+v, %v", got, ok)
	}
	got.Scopes[0] = "changed by a caller"
	if again, _ := c.get("a", t0); again.Scopes[0] != ScopeRead {
		t.Fatalf("a caller changed the remembered scopes: %v", again.Scopes)
	}
	if _, ok := c.get("a", t0.Add(verifiedTTL)); ok {
		t.Fatal("trusted after verifiedTTL; a removed key must stop working within it")
	}
	if _, ok := c.get("b", t0); ok {
		t.Fatal("a token never verified is trusted")
	}
	for i := range verifiedMax {
		c.put(string(rune(i+1000)), p, t0.Add(time.Hour), t0)
	}
	if len(c.entries) > verifiedMax {
		t.Fatalf("%d tokens remembered, want at most %d", len(c.entries), verifiedMax)
	}
}
