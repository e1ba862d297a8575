package query

import (
	"slices"
	"testing"
	"time"
)

func TestSigningGenerationsKeepThePreviousSecretUntilItsEnd(t *testing.T) {
	rotated := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	until := rotated.Add(24 * time.Hour)
	e := WebhookEndpoint{SecretGeneration: 2, PreviousValidUntil: &until}
	for _, c := range []struct {
		at   time.Time
		want []int
	}{
		{rotated, []int{2, 1}},
		{until.Add(-time.Microsecond), []int{2, 1}},
		{until, []int{2}},
	} {
		if got := e.SigningGenerations(c.at); !slices.Equal(got, c.want) {
			t.Errorf("at %s: %v, want %v", c.at, got, c.want)
		}
	}
	if got := (WebhookEndpoint{SecretGeneration: 1}).SigningGenerations(rotated); !slices.Equal(got, []int{1}) {
		t.Errorf("never rotated: %v", got)
	}
}
