package esdb

import (
	"strings"
	"testing"
	"time"
)

func TestRewriteScheme(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"esdb is kept", "esdb://localhost:2113?tls=false", "esdb://localhost:2113?tls=false"},
		{"esdb+discover is kept", "esdb+discover://cluster.example:2113", "esdb+discover://cluster.example:2113"},
		{"kurrent becomes esdb", "kurrent://localhost:2113?tls=false", "esdb://localhost:2113?tls=false"},
		{"kurrentdb becomes esdb", "kurrentdb://admin:changeit@localhost:2113", "esdb://admin:changeit@localhost:2113"},
		{"kurrentdb+discover becomes esdb+discover", "kurrentdb+discover://cluster.example", "esdb+discover://cluster.example"},
		{"scheme case does not matter", "KurrentDB://localhost", "esdb://localhost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := rewriteScheme(tt.in)
			if err != nil || got != tt.want {
				t.Errorf("rewriteScheme(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestIsConnectionStringAgreesWithParseURL(t *testing.T) {
	tests := []struct {
		url  string
		want bool
	}{
		{"esdb://localhost:2113?tls=false", true},
		{"esdb+discover://cluster.example:2113", true},
		{"kurrent://localhost:2113", true},
		{"kurrent+discover://cluster.example", true},
		{"kurrentdb://localhost:2113", true},
		{"kurrentdb+discover://cluster.example", true},
		{"KurrentDB+Discover://cluster.example", true},
		{" esdb://localhost:2113", true},
		{"postgres://localhost:5432", false},
		{"http://localhost:2113", false},
		{"esdb:localhost:2113", false},
		{"localhost:2113", false},
		{"esdbx://localhost", false},
		{"://localhost", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := IsConnectionString(tt.url); got != tt.want {
			t.Errorf("IsConnectionString(%q) = %v, want %v", tt.url, got, tt.want)
		}
		if _, err := rewriteScheme(tt.url); (err == nil) != tt.want {
			t.Errorf("rewriteScheme(%q) error = %v, but IsConnectionString = %v", tt.url, err, tt.want)
		}
	}
}

func TestParseURLRefusesWhatTheClientWouldGetWrong(t *testing.T) {
	tests := []struct {
		name, url, wantInErr string
	}{
		{"no scheme", "localhost:2113", "no scheme"},
		{"another scheme", "postgres://localhost:5432", `scheme "postgres"`},
		{"unknown setting", "esdb://localhost:2113?tls=false&poolSize=3", `unknown setting "poolSize"`},
		{"unparsable deadline", "esdb://localhost:2113?defaultDeadline=5s", "defaultDeadline"},
		{"zero deadline", "esdb://localhost:2113?defaultDeadline=0", "defaultDeadline"},
		{"keep-alive under 10 s", "esdb://localhost:2113?keepAliveInterval=500", "keepAliveInterval"},
		{"bad tls flag", "esdb://localhost:2113?tls=maybe", "tls"},
		{"no host", "esdb://?tls=false", "host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseURL(tt.url)
			if err == nil || !strings.Contains(err.Error(), tt.wantInErr) {
				t.Errorf("parseURL(%q) error = %v, want one mentioning %q", tt.url, err, tt.wantInErr)
			}
		})
	}
}

func TestParseURLAppliesDefaults(t *testing.T) {
	cfg, err := parseURL("kurrentdb://localhost:2113?tls=false")
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.DisableTLS || cfg.Address != "localhost:2113" {
		t.Errorf("got TLS disabled %v, address %q; want true, localhost:2113", cfg.DisableTLS, cfg.Address)
	}
	if cfg.DefaultDeadline == nil || *cfg.DefaultDeadline != defaultDeadline {
		t.Errorf("DefaultDeadline = %v, want %v", cfg.DefaultDeadline, defaultDeadline)
	}

	cfg, err = parseURL("esdb://localhost:2113?tls=false&defaultDeadline=2500&keepAliveInterval=-1")
	if err != nil {
		t.Fatal(err)
	}
	if *cfg.DefaultDeadline != 2500*time.Millisecond || cfg.KeepAliveInterval != -1 {
		t.Errorf("DefaultDeadline %v, KeepAliveInterval %v; want 2.5s, -1", *cfg.DefaultDeadline, cfg.KeepAliveInterval)
	}
}

func TestErrorsNeverShowThePassword(t *testing.T) {
	_, err := parseURL("esdb://admin:s3cret@localhost:2113?bogus=1")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error = %v, want one without the password", err)
	}
	if got := redact("esdb://admin:s3cret@a:1,b:2?tls=true"); got != "esdb://***@a:1,b:2?tls=true" {
		t.Errorf("redact = %q", got)
	}
	if got := redact("esdb://localhost:2113?x=a@b"); got != "esdb://localhost:2113?x=a@b" {
		t.Errorf("redact touched an @ in the settings: %q", got)
	}
}

func TestDescribeNamesTheSeeds(t *testing.T) {
	cfg, err := parseURL("esdb://node1:2113,node2:2114?tls=false")
	if err != nil {
		t.Fatal(err)
	}
	if got := describe(cfg); got != "node1:2113,node2:2114" {
		t.Errorf("describe = %q, want node1:2113,node2:2114", got)
	}
}
