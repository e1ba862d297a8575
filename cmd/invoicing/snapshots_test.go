package main

import (
	"net/http"
	"net/url"
	"testing"
)

// Issue 21, item 6: snapshots stay frozen (rule 2). Updating or archiving a
// company or customer never changes an invoice already made, through a
// rebuild and a replay of its create; drafts made after the update, through
// either of two instances, carry the new snapshot.

const (
	frozenCompanyPatch = `{"legal_name":"Acme Neu GmbH","trading_name":null,"address":{"line_1":"Neue Str. 5","line_2":null},
		"identifiers":[{"scheme":"vat","value":"DE999","country_code":"DE"}],"email":"new@acme.example",
		"default_currency":"CHF","default_language":"fr","default_payment_terms_days":10}`
	frozenCustomerPatch = `{"name":"Globex Neu","address":{"city":"Portland","region":null},"email":"new@globex.example","identifiers":[]}`
)

func TestSnapshotsStayFrozenThroughUpdatesRebuildsAndReplays(t *testing.T) {
	a := newService(t)
	other := newService(t, func(c *config) { c.DatabaseURL = a.dbURL })
	tok := token(t, "frozen")
	companyID := a.createCompany(t, tok, "frozen-company", fullCompany)["id"].(string)
	customerID := a.createCustomer(t, tok, companyID, "frozen-customer", fullCustomer)["id"].(string)
	bill := billing{s: a, tok: tok, companyID: companyID, customerID: customerID}
	viaOther := bill
	viaOther.s = other

	// Before the update: a draft, an issued invoice, and a draft through
	// the other instance (so that its directory has seen both records).
	draftBody := bill.invoiceBody(t, nil)
	draftCreated := a.mustCreate(t, bill.path(""), tok, "frozen-draft", draftBody)
	draftID := draftCreated.object(t)["id"].(string)
	issuedID := bill.create(t, "frozen-issued", draftBody)["id"].(string)
	bill.mustChange(t, bill.issue(t, issuedID, "frozen-issue"))
	warmID := viaOther.create(t, "frozen-warm", draftBody)["id"].(string)
	old := map[string]response{}
	for _, id := range []string{draftID, issuedID, warmID} {
		old[id] = a.get(t, bill.path("/"+id), tok)
	}
	oldList := a.listed(t, bill.path(""), tok, nil)
	oldDraft := old[draftID].object(t)

	// The update, through the first instance; the customer is then
	// archived and restored, the company archived and restored too.
	company := "/v1/companies/" + companyID
	customer := company + "/customers/" + customerID
	a.mustWrite(t, company, tok, a.patch(t, company, tok, "frozen-patch-company", frozenCompanyPatch, nil))
	a.mustWrite(t, customer, tok, a.patch(t, customer, tok, "frozen-patch-customer", frozenCustomerPatch, nil))
	for i, p := range []string{customer, company} {
		a.mustWrite(t, p, tok, a.action(t, p, "archive", tok, "frozen-archive-"+string(rune('a'+i)), "", nil))
		a.mustWrite(t, p, tok, a.action(t, p, "unarchive", tok, "frozen-unarchive-"+string(rune('a'+i)), "", nil))
	}

	unchanged := func(t *testing.T, when string) {
		t.Helper()
		for id, want := range old {
			for _, s := range []*service{a, other} {
				got := s.get(t, bill.path("/"+id), tok)
				mustStatus(t, got, http.StatusOK)
				if string(got.body) != string(want.body) {
					t.Errorf("%s, invoice %s reads\n%s\nwant, byte for byte,\n%s", when, id, got.body, want.body)
				}
			}
		}
		list := a.listed(t, bill.path(""), tok, nil)
		for _, item := range oldList {
			if got := find(list, item["id"].(string)); mustJSON(t, got) != mustJSON(t, item) {
				t.Errorf("%s, the list's summary of %s is %v, want %v", when, item["id"], got, item)
			}
		}
		if got := a.listed(t, bill.path(""), tok, url.Values{"customer_id": {customerID}}); len(got) < len(oldList) {
			t.Errorf("%s, customer_id lists %d invoices, want at least %d", when, len(got), len(oldList))
		}
	}
	t.Run("after the update", func(t *testing.T) { unchanged(t, "after the update") })

	// Drafts made after the update carry the new snapshots, through
	// either instance (the other's directory must not serve what it saw).
	wantIssuer := oldDraft["issuer"].(map[string]any)
	for path, v := range map[string]any{"legal_name": "Acme Neu GmbH", "trading_name": absent, "address.line_1": "Neue Str. 5",
		"address.line_2": absent, "identifiers": []any{map[string]any{"scheme": "vat", "value": "DE999", "country_code": "DE"}},
		"email": "new@acme.example"} {
		wantIssuer = setAt(t, wantIssuer, path, v)
	}
	wantCustomer := oldDraft["customer"].(map[string]any)
	for path, v := range map[string]any{"name": "Globex Neu", "address.city": "Portland", "address.region": absent,
		"email": "new@globex.example", "identifiers": []any{}} {
		wantCustomer = setAt(t, wantCustomer, path, v)
	}
	for i, via := range []billing{bill, viaOther} {
		t.Run([]string{"a draft after the update", "a draft after the update through the other instance"}[i], func(t *testing.T) {
			fresh := via.create(t, "frozen-after-"+string(rune('a'+i)), draftBody)
			if mustJSON(t, fresh["issuer"]) != mustJSON(t, wantIssuer) {
				t.Errorf("issuer = %v\nwant %v", fresh["issuer"], wantIssuer)
			}
			if mustJSON(t, fresh["customer"]) != mustJSON(t, wantCustomer) || fresh["customer_name"] != "Globex Neu" {
				t.Errorf("customer = %v (%v)\nwant %v", fresh["customer"], fresh["customer_name"], wantCustomer)
			}
			if fresh["currency"] != "CHF" || fresh["language"] != "fr" || fresh["due_date"] != "2025-01-25" {
				t.Errorf("currency %v language %v due %v; want the company's new defaults CHF, fr, 10 days", fresh["currency"], fresh["language"], fresh["due_date"])
			}
		})
	}

	t.Run("after a rebuild", func(t *testing.T) {
		if out, err := runCommand(t, a, "projections", "rebuild"); err != nil {
			t.Fatalf("rebuild: %v\n%s", err, out)
		}
		unchanged(t, "after a rebuild")
	})
	t.Run("through a replay of the create", func(t *testing.T) {
		replay := a.post(t, bill.path(""), tok, "frozen-draft", draftBody)
		mustStatus(t, replay, http.StatusCreated)
		if string(replay.body) != string(draftCreated.body) {
			t.Errorf("the create's replay answers\n%s\nwant the first answer\n%s", replay.body, draftCreated.body)
		}
	})
	if out, err := runCommand(t, a, "audit", "verify"); err != nil {
		t.Fatalf("audit verify: %v\n%s", err, out)
	}
}
