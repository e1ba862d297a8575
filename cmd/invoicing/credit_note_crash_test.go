package main

import (
	"net/http"
	"testing"
)

// failCreditNotesSQL makes PostgreSQL refuse every CreditNoteIssued append:
// the fault falls exactly between the two steps of a credit note (its
// number is reserved in the company's credit-note numbering stream, the
// invoice's stream does not have it).
const failCreditNotesSQL = `
CREATE FUNCTION fail_credit_notes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.event_type = 'CreditNoteIssued' THEN RAISE EXCEPTION 'injected crash before CreditNoteIssued'; END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER fail_credit_notes BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION fail_credit_notes();`

func (b billing) creditNote(t *testing.T, invoiceID, key, body string) response {
	t.Helper()
	return b.s.post(t, b.path("/"+invoiceID+"/credit_notes"), b.tok, "credit-"+key, body)
}

// A credit note that crashed after its number was reserved is completed
// by its client's retry or by the company's next credit note, with the
// number it reserved; if its invoice changed first (a payment), the
// reservation lapses and its number goes to the next credit note. Either
// way the sequence has no gap and no number twice.
func TestACrashBetweenNumberAndCreditNoteLeavesNoGap(t *testing.T) {
	const crashedBody = `{"reason":"returned goods","lines":[{"description":"Consulting","quantity":"1","unit_amount_minor":1000,"tax_rate_bps":1900}]}`
	for _, then := range []string{"the client retries", "the next credit note completes it", "the invoice is paid first"} {
		t.Run(then, func(t *testing.T) {
			first := newService(t)
			b := newBilling(t, first, "cncrash", prefixedCompany)
			crashed := b.issued(t, "cn-crash-1", b.invoiceBody(t, nil))
			other := b.issued(t, "cn-crash-2", b.invoiceBody(t, nil))
			execSQL(t, first, failCreditNotesSQL)
			mustStatus(t, b.creditNote(t, crashed, "crashed", crashedBody), http.StatusInternalServerError)
			execSQL(t, first, `DROP TRIGGER fail_credit_notes ON events`)

			b.s = newService(t, func(c *config) { c.DatabaseURL = first.dbURL }) // a restart
			want := map[string]string{"crashed": "CN-000001", "other": "CN-000002"}
			switch then {
			case "the client retries":
				mustStatus(t, b.creditNote(t, crashed, "crashed", crashedBody), http.StatusCreated)
			case "the invoice is paid first":
				mustStatus(t, b.s.post(t, b.path("/"+crashed+"/payments"), b.tok, "pay-crashed", `{"amount_minor":100,"paid_on":"2025-02-01"}`), http.StatusCreated)
				want = map[string]string{"other": "CN-000001", "crashed": "CN-000002"}
			}
			got := map[string]string{}
			res := b.creditNote(t, other, "other", `{"reason":"cancelled"}`)
			mustStatus(t, res, http.StatusCreated)
			got["other"], _ = res.object(t)["number"].(string)
			res = b.creditNote(t, crashed, "crashed", crashedBody) // a replay, or its first success
			mustStatus(t, res, http.StatusCreated)
			got["crashed"], _ = res.object(t)["number"].(string)
			for k, number := range want {
				if got[k] != number {
					t.Errorf("the %s credit note is %q, want %q (all: %v)", k, got[k], number, got)
				}
			}
		})
	}
}
