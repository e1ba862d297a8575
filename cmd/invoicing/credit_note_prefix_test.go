package main

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
)

// A company from before credit_note_number_prefix existed whose invoices
// are numbered CN-…: the default credit-note prefix would give its credit
// notes its invoices' numbers, so it gets none until an update names
// another prefix, which an update of anything else must do too.
func TestACompanyWhosePrefixesWouldCollideIssuesNoCreditNote(t *testing.T) {
	s := newService(t)
	tok := token(t, "legacy")
	companyID := uuid.NewString()
	_, pos := appendCompanyEvent(t, s, []byte(fmt.Sprintf(`{"company_id":%q,"account_id":"legacy","legal_name":"Old GmbH",
		"address":{"line_1":"Str 1","city":"Berlin","postal_code":"10115","country_code":"DE"},"default_currency":"EUR",
		"default_language":"en","default_payment_terms_days":30,"identifiers":[],"invoice_number_prefix":"CN-",
		"created_at":"2024-01-02T03:04:05Z"}`, companyID)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.app.group.WaitFor(ctx, pos, "CompanyCreated"); err != nil {
		t.Fatal(err)
	}
	b := billing{s: s, tok: tok, companyID: companyID}
	b.customerID = s.createCustomer(t, tok, companyID, "legacy-customer", minimalCustomer)["id"].(string)
	invoice := b.issued(t, "legacy-invoice", b.invoiceBody(t, nil))

	res := b.creditNote(t, invoice, "legacy-1", `{"reason":"returned"}`)
	mustCode(t, res, http.StatusConflict, "invalid_state")
	if paths := detailPaths(t, res); len(paths) != 1 || paths[0] != "company_id" {
		t.Errorf("details at %v, want company_id", paths)
	}
	companyPath := "/v1/companies/" + companyID
	res = s.patch(t, companyPath, tok, "legacy-rename", `{"legal_name":"Old AG"}`, nil)
	mustCode(t, res, http.StatusUnprocessableEntity, "validation_failed")
	if paths := detailPaths(t, res); len(paths) != 1 || paths[0] != "credit_note_number_prefix" {
		t.Errorf("an update naming no prefix: details at %v, want credit_note_number_prefix", paths)
	}
	mustStatus(t, s.patch(t, companyPath, tok, "legacy-prefix", `{"credit_note_number_prefix":"CR-"}`, nil), http.StatusOK)
	res = b.creditNote(t, invoice, "legacy-2", `{"reason":"returned"}`)
	mustStatus(t, res, http.StatusCreated)
	if got := res.object(t)["number"]; got != "CR-000001" {
		t.Errorf("number = %v, want CR-000001", got)
	}
}
