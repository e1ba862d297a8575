package main

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/query"
	"github.com/invoicing/invoicing/webhook"
)

// publicURL is an endpoint URL the guard accepts without resolving a name:
// an IP literal outside every forbidden network (nothing is dialled at
// registration).
const publicURL = "https://1.1.1.1/hooks/invoicing"

// fakeResolver resolves the names it knows, for the guard's checks.
type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if addrs, ok := f[host]; ok {
		return addrs, nil
	}
	return nil, &lookupError{host}
}

type lookupError struct{ host string }

func (e *lookupError) Error() string { return "no such host " + e.host }

func (s *service) createWebhookEndpoint(t *testing.T, tok, key, body string) (response, map[string]any) {
	t.Helper()
	res := s.post(t, "/v1/webhook_endpoints", tok, key, body)
	mustStatus(t, res, http.StatusCreated)
	ep := res.object(t)
	if got, want := res.header.Get("Location"), "/v1/webhook_endpoints/"+ep["id"].(string); got != want {
		t.Errorf("Location = %q, want %q", got, want)
	}
	return res, ep
}

// mustSecret checks a secret's shape: whsec_ and the base64 of 32 bytes.
func mustSecret(t *testing.T, ep map[string]any) string {
	t.Helper()
	secret, _ := ep["secret"].(string)
	raw, ok := strings.CutPrefix(secret, webhook.SecretPrefix)
	key, err := base64.StdEncoding.DecodeString(raw)
	if !ok || err != nil || len(key) != 32 {
		t.Fatalf("secret %q: want whsec_ and the base64 of 32 bytes", secret)
	}
	return secret
}

// sameButSecret reports whether a GET's body is a create's or rotation's
// answer without its secret.
func sameButSecret(t *testing.T, get, write response) bool {
	t.Helper()
	m := write.object(t)
	delete(m, "secret")
	return reflect.DeepEqual(get.object(t), m)
}

func TestWebhookEndpointLifecycle(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")

	// Create: the secret is shown, once; a replay shows the same body.
	createReq := request{method: http.MethodPost, path: "/v1/webhook_endpoints", token: tok, key: "endpoint-1",
		body: `{"url":"` + publicURL + `","description":"ERP"}`}
	created, ep := s.createWebhookEndpoint(t, tok, createReq.key, createReq.body)
	secret := mustSecret(t, ep)
	if ep["url"] != publicURL || ep["description"] != "ERP" || ep["enabled"] != true || ep["disabled_reason"] != nil ||
		ep["secret_generation"] != float64(1) || ep["previous_valid_until"] != nil || ep["version"] != float64(1) ||
		ep["created_at"] != ep["updated_at"] {
		t.Fatalf("created %s", created.body)
	}
	if types := ep["event_types"].([]any); len(types) != 1 || types[0] != "*" {
		t.Errorf("event_types = %v, want [*] (all)", types)
	}
	s.mustReplay(t, createReq, created)
	path := "/v1/webhook_endpoints/" + ep["id"].(string)
	got := s.get(t, path, tok)
	mustStatus(t, got, http.StatusOK)
	if _, ok := got.object(t)["secret"]; ok {
		t.Fatalf("GET shows the secret: %s", got.body)
	}
	if !sameButSecret(t, got, created) {
		t.Errorf("GET %s\nwant the create's answer without its secret %s", got.body, created.body)
	}
	if got.header.Get("ETag") != tagOf(ep) {
		t.Errorf("ETag %q, want %q", got.header.Get("ETag"), tagOf(ep))
	}

	// Update: a merge patch; If-Match is honoured; a replay answers the
	// first answer.
	mustFail(t, s.patch(t, path, tok, "update-stale", `{"enabled":false}`, ifMatch(`W/"`+ep["id"].(string)+`.7"`)),
		http.StatusPreconditionFailed, "precondition_failed")
	updateReq := request{method: http.MethodPatch, path: path, token: tok, key: "update-1", contentType: mergePatchType,
		body: `{"enabled":false,"description":null}`, headers: ifMatch(tagOf(ep))}
	updated := s.do(t, updateReq)
	up := s.mustWrite(t, path, tok, updated)
	if up["enabled"] != false || up["version"] != float64(2) || up["description"] != nil {
		t.Fatalf("updated %s", updated.body)
	}
	s.mustReplay(t, updateReq, updated)
	unchanged := s.patch(t, path, tok, "update-2", `{"enabled":false}`, nil)
	if rec := s.mustWrite(t, path, tok, unchanged); rec["version"] != float64(2) {
		t.Errorf("a patch that changes nothing made version %v", rec["version"])
	}

	// Rotate: a new secret, generation 2, the previous one valid 24 h more.
	rotateReq := request{method: http.MethodPost, path: path + "/rotate_secret", token: tok, key: "rotate-1"}
	rotated := s.do(t, rotateReq)
	mustStatus(t, rotated, http.StatusOK)
	rot := rotated.object(t)
	if next := mustSecret(t, rot); next == secret {
		t.Error("the rotated secret equals the first")
	}
	if rot["secret_generation"] != float64(2) || rot["version"] != float64(3) {
		t.Errorf("rotated %s", rotated.body)
	}
	at, err1 := time.Parse(time.RFC3339Nano, rot["updated_at"].(string))
	until, err2 := time.Parse(time.RFC3339Nano, rot["previous_valid_until"].(string))
	if err1 != nil || err2 != nil || until.Sub(at) != 24*time.Hour {
		t.Errorf("previous_valid_until %v, rotated at %v: want 24 h later", rot["previous_valid_until"], rot["updated_at"])
	}
	s.mustReplay(t, rotateReq, rotated)
	got = s.get(t, path, tok)
	if !sameButSecret(t, got, rotated) {
		t.Errorf("GET after the rotation %s\nwant %s without its secret", got.body, rotated.body)
	}
	if listed := s.listed(t, "/v1/webhook_endpoints", tok, nil); len(listed) != 1 || listed[0]["id"] != ep["id"] {
		t.Errorf("list = %v", listed)
	}

	// Delete: 204, then 404 and gone from the list; a change is 409.
	deleteReq := request{method: http.MethodDelete, path: path, token: tok, key: "delete-1"}
	deleted := s.do(t, deleteReq)
	mustStatus(t, deleted, http.StatusNoContent)
	s.mustReplay(t, deleteReq, deleted)
	mustFail(t, s.get(t, path, tok), http.StatusNotFound, "not_found")
	if listed := s.listed(t, "/v1/webhook_endpoints", tok, nil); len(listed) != 0 {
		t.Errorf("list after the delete = %v", listed)
	}
	mustFail(t, s.patch(t, path, tok, "update-3", `{"enabled":true}`, nil), http.StatusConflict, "invalid_state")
	mustFail(t, s.action(t, path, "rotate_secret", tok, "rotate-2", "", nil), http.StatusConflict, "invalid_state")
	mustFail(t, s.do(t, request{method: http.MethodDelete, path: path, token: tok, key: "delete-2"}), http.StatusConflict, "invalid_state")
	// The create's replay still answers the first body, secret included.
	s.mustReplay(t, createReq, created)
}

func TestWebhookEndpointRequestsAreCheckedField(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	long := "https://1.1.1.1/" + strings.Repeat("a", command.MaxWebhookURLLength)
	for _, c := range []struct {
		name, body string
		paths      []string
	}{
		{"no url", `{}`, []string{"url"}},
		{"url not a string", `{"url":42}`, []string{"url"}},
		{"url too long", `{"url":"` + long + `"}`, []string{"url"}},
		{"unknown field", `{"url":"` + publicURL + `","secret":"x"}`, []string{"secret"}},
		{"enabled is for updates", `{"url":"` + publicURL + `","enabled":false}`, []string{"enabled"}},
		{"no event type", `{"url":"` + publicURL + `","event_types":[]}`, []string{"event_types"}},
		{"event types not a list", `{"url":"` + publicURL + `","event_types":"*"}`, []string{"event_types"}},
		{"an unknown type", `{"url":"` + publicURL + `","event_types":["invoice.exploded"]}`, []string{"event_types[0]"}},
		{"a number", `{"url":"` + publicURL + `","event_types":["*",1]}`, []string{"event_types[0]", "event_types[1]"}},
		{"* twice", `{"url":"` + publicURL + `","event_types":["*","*"]}`, []string{"event_types[0]", "event_types[1]"}},
		{"empty description", `{"url":"` + publicURL + `","description":""}`, []string{"description"}},
		{"not https", `{"url":"http://1.1.1.1/hooks"}`, []string{"url"}},
		{"not absolute", `{"url":"/hooks"}`, []string{"url"}},
		{"user info", `{"url":"https://user:pw@1.1.1.1/hooks"}`, []string{"url"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustFail(t, s.post(t, "/v1/webhook_endpoints", tok, "check-"+strings.ReplaceAll(c.name, " ", "-"), c.body),
				http.StatusUnprocessableEntity, "validation_failed", c.paths...)
		})
	}
	_, ep := s.createWebhookEndpoint(t, tok, "endpoint-1", `{"url":"`+publicURL+`","event_types":["*"]}`)
	path := "/v1/webhook_endpoints/" + ep["id"].(string)
	for _, c := range []struct {
		name, body string
		paths      []string
	}{
		{"url removed", `{"url":null}`, []string{"url"}},
		{"read-only", `{"id":"x","secret_generation":3}`, []string{"id", "secret_generation"}},
		{"enabled not a boolean", `{"enabled":"yes"}`, []string{"enabled"}},
		{"unknown type", `{"event_types":["nope"]}`, []string{"event_types[0]"}},
		{"a private URL", `{"url":"https://10.0.0.1/hooks"}`, []string{"url"}},
	} {
		t.Run("patch "+c.name, func(t *testing.T) {
			mustFail(t, s.patch(t, path, tok, "patch-"+strings.ReplaceAll(c.name, " ", "-"), c.body, nil),
				http.StatusUnprocessableEntity, "validation_failed", c.paths...)
		})
	}
	if command.MaxWebhookURLLength != webhook.MaxURLLength {
		t.Errorf("command.MaxWebhookURLLength %d != webhook.MaxURLLength %d", command.MaxWebhookURLLength, webhook.MaxURLLength)
	}
}

func TestWebhookURLsIntoPrivateNetworksAreRefusedUnlessAllowed(t *testing.T) {
	s := newService(t)
	s.app.webhookGuard.Resolver = fakeResolver{
		"loopback.example": {netip.MustParseAddr("127.0.0.1")},
		"internal.example": {netip.MustParseAddr("10.1.2.3")},
		"metadata.example": {netip.MustParseAddr("169.254.169.254")},
		"v6.example":       {netip.MustParseAddr("::1")},
		"mixed.example":    {netip.MustParseAddr("1.1.1.1"), netip.MustParseAddr("10.0.0.1")},
	}
	tok := token(t, "acme")
	refused := []string{
		"https://127.0.0.1/hooks", "https://10.1.2.3/hooks", "https://169.254.169.254/latest/meta-data", "https://[::1]/hooks",
		"https://[::ffff:127.0.0.1]/hooks", "https://100.64.0.1/hooks", "https://[fd00::1]/hooks",
		"https://loopback.example/hooks", "https://internal.example/hooks", "https://metadata.example/hooks",
		"https://v6.example/hooks", "https://mixed.example/hooks", "https://nowhere.example/hooks",
		"http://1.1.1.1/hooks",
	}
	for i, u := range refused {
		res := s.post(t, "/v1/webhook_endpoints", tok, "refused-"+string(rune('a'+i))+"-key", `{"url":"`+u+`"}`)
		mustFail(t, res, http.StatusUnprocessableEntity, "validation_failed", "url")
	}

	allowed := newService(t, func(c *config) { c.Webhooks.AllowPrivateNetworks = true })
	for i, u := range []string{"http://127.0.0.1:9/hooks", "https://10.1.2.3/hooks", "https://169.254.169.254/x", "https://[::1]/hooks"} {
		allowed.createWebhookEndpoint(t, tok, "allowed-"+string(rune('a'+i))+"-key", `{"url":"`+u+`"}`)
	}
}

func TestWebhookEndpointsAreTheAccountsOwn(t *testing.T) {
	s := newService(t)
	acme, other := token(t, "acme"), token(t, "globex")
	_, ep := s.createWebhookEndpoint(t, acme, "endpoint-1", `{"url":"`+publicURL+`"}`)
	path := "/v1/webhook_endpoints/" + ep["id"].(string)
	mustFail(t, s.get(t, path, other), http.StatusNotFound, "not_found")
	mustFail(t, s.patch(t, path, other, "update-1", `{"enabled":false}`, nil), http.StatusNotFound, "not_found")
	mustFail(t, s.action(t, path, "rotate_secret", other, "rotate-1", "", nil), http.StatusNotFound, "not_found")
	mustFail(t, s.do(t, request{method: http.MethodDelete, path: path, token: other, key: "delete-1"}), http.StatusNotFound, "not_found")
	if listed := s.listed(t, "/v1/webhook_endpoints", other, nil); len(listed) != 0 {
		t.Errorf("another account lists %v", listed)
	}
	// The same key in another account creates another endpoint.
	_, theirs := s.createWebhookEndpoint(t, other, "endpoint-1", `{"url":"`+publicURL+`"}`)
	if theirs["id"] == ep["id"] || theirs["secret"] == ep["secret"] {
		t.Errorf("two accounts' endpoints share an id or a secret: %v %v", theirs, ep)
	}
	if got := s.get(t, path, acme); got.status != http.StatusOK {
		t.Errorf("the owner's GET = %d", got.status)
	}
}

func TestWebhookEndpointsRebuildToTheSameRowsAndSecrets(t *testing.T) {
	key := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	s := newService(t, func(c *config) {
		k, err := parseWebhookKey(key)
		if err != nil {
			t.Fatal(err)
		}
		c.Webhooks.SecretKey = k
	})
	tok := token(t, "acme")
	var ids []string
	for i, body := range []string{`{"url":"` + publicURL + `"}`, `{"url":"` + publicURL + `/2","description":"two"}`, `{"url":"` + publicURL + `/3"}`} {
		_, ep := s.createWebhookEndpoint(t, tok, "endpoint-"+string(rune('a'+i))+"-key", body)
		ids = append(ids, ep["id"].(string))
	}
	s.mustWrite(t, "/v1/webhook_endpoints/"+ids[0], tok, s.patch(t, "/v1/webhook_endpoints/"+ids[0], tok, "update-1", `{"enabled":false}`, nil))
	rotated := s.action(t, "/v1/webhook_endpoints/"+ids[1], "rotate_secret", tok, "rotate-1", "", nil)
	mustStatus(t, rotated, http.StatusOK)
	mustStatus(t, s.do(t, request{method: http.MethodDelete, path: "/v1/webhook_endpoints/" + ids[2], token: tok, key: "delete-1"}), http.StatusNoContent)
	// The configured key derives the secrets: webhook.Secret of the
	// account, the endpoint and the generation.
	want, err := webhook.Secret([]byte("0123456789abcdef0123456789abcdef"), "acme", ids[1], 2)
	if err != nil || rotated.object(t)["secret"] != want {
		t.Errorf("rotated secret %v, want webhook.Secret(key, acme, id, 2) = %s (%v)", rotated.object(t)["secret"], want, err)
	}

	// The dispatcher's read: enabled and not deleted endpoints only, with
	// the generations that sign (the previous one for 24 h).
	forAcme, err := query.New(s.pool).WebhookEndpointsFor(context.Background(), "acme")
	if err != nil || len(forAcme) != 1 || forAcme[0].ID != ids[1] || forAcme[0].SecretGeneration != 2 ||
		!slices.Equal(forAcme[0].SigningGenerations(time.Now()), []int{2, 1}) || forAcme[0].Position.IsZero() {
		t.Errorf("WebhookEndpointsFor(acme) = %+v, %v; want the rotated endpoint alone", forAcme, err)
	}

	dump := func() string {
		var out string
		err := s.pool.QueryRow(context.Background(), `SELECT coalesce(json_agg(w ORDER BY position_hi, position_lo)::text, '')
			FROM webhook_endpoints w`).Scan(&out)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	before := dump()
	if out, err := runCommand(t, s, "projections", "rebuild", "webhook_endpoints"); err != nil {
		t.Fatalf("rebuild: %v\n%s", err, out)
	}
	if after := dump(); after != before {
		t.Errorf("rows after the rebuild differ:\n%s\nbefore:\n%s", after, before)
	}
	if !strings.Contains(before, `"deleted_at"`) || strings.Count(before, `"id"`) != 3 {
		t.Errorf("rows %s: want three, one deleted", before)
	}
}

func TestAGeneratedWebhookMasterKeyIsKeptForEveryInstance(t *testing.T) {
	s := newService(t) // no WEBHOOK_SECRET_KEY: serve generated one
	ctx := context.Background()
	first, err := webhookMasterKey(ctx, nil, s.pool)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 32 || string(first) != string(s.app.webhookKey) {
		t.Fatalf("the kept key (%d bytes) is not the one serve uses", len(first))
	}
	again, err := webhookMasterKey(ctx, nil, s.pool)
	if err != nil || string(again) != string(first) {
		t.Fatalf("a second start reads another key (%v)", err)
	}
	configured := []byte("0123456789abcdef0123456789abcdef")
	if got, err := webhookMasterKey(ctx, configured, s.pool); err != nil || string(got) != string(configured) {
		t.Fatalf("WEBHOOK_SECRET_KEY is not the key (%v)", err)
	}
}

func TestAnEndpointSubscribesToPublicEventTypes(t *testing.T) {
	// The public types are publicevents.Types in serve; this test names
	// two of them itself, so that it holds whatever the catalogue lists.
	saved := publicEventTypes
	publicEventTypes = []string{"invoice.issued", "invoice.voided"}
	t.Cleanup(func() { publicEventTypes = saved })
	s := newService(t)
	tok := token(t, "acme")

	_, ep := s.createWebhookEndpoint(t, tok, "endpoint-1", `{"url":"`+publicURL+`","event_types":["invoice.voided","invoice.issued"]}`)
	if got := ep["event_types"].([]any); len(got) != 2 || got[0] != "invoice.voided" || got[1] != "invoice.issued" {
		t.Errorf("event_types = %v, want them as sent", got)
	}
	path := "/v1/webhook_endpoints/" + ep["id"].(string)
	mustFail(t, s.patch(t, path, tok, "patch-key-1", `{"event_types":["invoice.issued","invoice.issued"]}`, nil),
		http.StatusUnprocessableEntity, "validation_failed", "event_types[1]")
	mustFail(t, s.patch(t, path, tok, "patch-key-2", `{"event_types":["*","invoice.issued"]}`, nil),
		http.StatusUnprocessableEntity, "validation_failed", "event_types[0]")
	narrowed := s.mustWrite(t, path, tok, s.patch(t, path, tok, "patch-key-3", `{"event_types":["invoice.issued"]}`, nil))
	if got := narrowed["event_types"].([]any); len(got) != 1 || got[0] != "invoice.issued" {
		t.Errorf("narrowed event_types = %v", got)
	}
	all := s.mustWrite(t, path, tok, s.patch(t, path, tok, "patch-key-4", `{"event_types":null}`, nil))
	if got := all["event_types"].([]any); len(got) != 1 || got[0] != "*" {
		t.Errorf("event_types after null = %v, want [*]", got)
	}
	forAcme, err := query.New(s.pool).WebhookEndpointsFor(context.Background(), "acme")
	if err != nil || len(forAcme) != 1 || len(forAcme[0].EventTypes) != 0 || !forAcme[0].Subscribes("company.created") {
		t.Errorf("WebhookEndpointsFor = %+v, %v: want every type (event_types empty)", forAcme, err)
	}
}
