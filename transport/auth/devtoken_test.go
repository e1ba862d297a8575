package auth

import (
	"context"
	"reflect"
	"testing"
	"time"
)

func TestMintDevTokenRoundTrips(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		claims DevClaims
		want   Principal
	}{
		{
			"default org claim",
			Config{},
			DevClaims{Org: "acme", Subject: "dev", Scopes: []string{ScopeRead, ScopeWrite}, TTL: time.Hour},
			Principal{AccountID: "acme", Subject: "dev", Scopes: []string{ScopeRead, ScopeWrite}},
		},
		{
			"custom org claim, issuer and audience match the verifier's",
			Config{OrgClaim: "tenant", Issuer: "dev-issuer", Audience: "invoicing"},
			DevClaims{Org: "globex", Subject: "ci", Scopes: []string{ScopeRead}, TTL: time.Minute, OrgClaim: "tenant", Issuer: "dev-issuer", Audience: "invoicing"},
			Principal{AccountID: "globex", Subject: "ci", Scopes: []string{ScopeRead}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			token, err := MintDevToken(testSecret, tt.claims, t0)
			if err != nil {
				t.Fatalf("MintDevToken: %v", err)
			}
			cfg := tt.cfg
			cfg.HS256Secret, cfg.Now = testSecret, func() time.Time { return t0.Add(time.Second) }
			got, err := newVerifier(t, cfg).Verify(context.Background(), token)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if !reflect.DeepEqual(tt.want, got) {
				t.Errorf("principal (-want +got):\n-%+v\n+%+v", tt.want, got)
			}
		})
	}
}

func TestMintDevTokenExpiresAfterTTL(t *testing.T) {
	token, err := MintDevToken(testSecret, DevClaims{Org: "acme", TTL: time.Hour}, t0)
	if err != nil {
		t.Fatal(err)
	}
	later := newVerifier(t, Config{HS256Secret: testSecret, Now: func() time.Time { return t0.Add(time.Hour + 2*time.Minute) }})
	if _, err := later.Verify(context.Background(), token); err == nil {
		t.Error("a dev token verified after its TTL and the leeway")
	}
}

func TestMintDevTokenRefusesWhatVerifyWould(t *testing.T) {
	tests := []struct {
		name   string
		secret []byte
		claims DevClaims
	}{
		{"a secret shorter than 32 bytes", []byte("short"), DevClaims{Org: "acme", TTL: time.Hour}},
		{"no org", testSecret, DevClaims{TTL: time.Hour}},
		{"no TTL", testSecret, DevClaims{Org: "acme"}},
		{"a negative TTL", testSecret, DevClaims{Org: "acme", TTL: -time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := MintDevToken(tt.secret, tt.claims, t0); err == nil {
				t.Error("MintDevToken succeeded, want an error")
			}
		})
	}
}
