package events

import (
	"encoding/json"
	"testing"
	"time"
)

func sampleWebhookEvents() (WebhookEndpointCreated, WebhookEndpointUpdated, WebhookEndpointSecretRotated, WebhookEndpointDeleted) {
	created := time.Date(2026, 11, 26, 9, 0, 0, 123456000, time.UTC)
	c := WebhookEndpointCreated{EndpointID: "0190a0c0-0000-7000-8000-0000000000e1", AccountID: "acme",
		URL: "https://hooks.example.com/invoicing", EventTypes: []string{}, Description: "ERP",
		Enabled: true, SecretGeneration: 1, CreatedAt: created}
	u := WebhookEndpointUpdated{EndpointID: c.EndpointID, AccountID: c.AccountID, URL: c.URL,
		EventTypes: []string{"invoice.issued", "invoice.voided"}, Description: c.Description, Enabled: false,
		DisabledReason: "every delivery failed for 5 days", Changed: []string{"enabled", "event_types"},
		UpdatedAt: created.Add(time.Hour)}
	rotated := created.Add(2 * time.Hour)
	r := WebhookEndpointSecretRotated{EndpointID: c.EndpointID, AccountID: c.AccountID, SecretGeneration: 2,
		PreviousValidUntil: rotated.Add(PreviousSecretValidity), RotatedAt: rotated}
	d := WebhookEndpointDeleted{EndpointID: c.EndpointID, AccountID: c.AccountID, DeletedAt: created.Add(3 * time.Hour)}
	return c, u, r, d
}

func TestWebhookEndpointEventsMatchTheirGoldens(t *testing.T) {
	c, u, r, d := sampleWebhookEvents()
	matchGoldens(t, map[string]any{
		"webhook_endpoint_created":        c,
		"webhook_endpoint_updated":        u,
		"webhook_endpoint_secret_rotated": r,
		"webhook_endpoint_deleted":        d,
	})
}

func TestFoldWebhookEndpoint(t *testing.T) {
	c, u, r, d := sampleWebhookEvents()
	var evs []RecordedEvent
	for i, p := range []struct {
		typ     string
		payload any
	}{{TypeWebhookEndpointCreated, c}, {TypeWebhookEndpointUpdated, u}, {TypeWebhookEndpointSecretRotated, r}, {TypeWebhookEndpointDeleted, d}} {
		data, err := json.Marshal(p.payload)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, RecordedEvent{Type: p.typ, Data: data, Stream: "webhook_endpoint-x", Revision: uint64(i)})
	}
	got, err := FoldWebhookEndpoint(evs[:3])
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 3 || got.SecretGeneration != 2 || got.Enabled || got.DisabledReason == "" ||
		len(got.EventTypes) != 2 || !got.CreatedAt.Equal(c.CreatedAt) || !got.UpdatedAt.Equal(r.RotatedAt) ||
		got.PreviousValidUntil == nil || !got.PreviousValidUntil.Equal(r.RotatedAt.Add(24*time.Hour)) || got.DeletedAt != nil {
		t.Errorf("fold after rotation = %+v", got)
	}
	got, err = FoldWebhookEndpoint(evs)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 4 || got.DeletedAt == nil || !got.DeletedAt.Equal(d.DeletedAt) {
		t.Errorf("fold after delete = %+v", got)
	}
	if _, err := FoldWebhookEndpoint(evs[1:]); err == nil {
		t.Error("a stream without WebhookEndpointCreated folded")
	}
}
