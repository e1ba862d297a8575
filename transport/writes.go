package transport

import (
	"net/http"
	"regexp"

	"github.com/invoicing/invoicing/command"
)

// What every write (create, update, archive, issue, void) shares.

// commandRequest carries the caller, the idempotency key, the If-Match
// precondition and the trace context to a command.
func commandRequest(r *http.Request) command.Request {
	p := principal(r)
	req := command.Request{
		Actor:          command.Actor{AccountID: p.AccountID, Subject: p.Subject, ClientID: p.ClientID},
		RequestID:      requestID(r.Context()),
		IdempotencyKey: r.Header.Get("Idempotency-Key"),
	}
	if fields := r.Header.Values("If-Match"); len(fields) > 0 {
		req.IfMatch = ifMatch(fields)
	}
	req.TraceParent = recordedTraceParent(r)
	return req
}

// traceParent is a W3C trace context header (version 00); anything else is
// not recorded.
var traceParent = regexp.MustCompile(`^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$`)

// markReplayed tells the client that the answer is the stored result of an
// earlier request with the same idempotency key (as Stripe does).
func markReplayed(w http.ResponseWriter, replayed bool) {
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
}

// writeCreated answers a create: 201 with the new resource, and Location
// naming where to GET it (a replay answers the same).
func writeCreated(w http.ResponseWriter, location string, replayed bool, body any) {
	w.Header().Set("Location", location)
	markReplayed(w, replayed)
	writeJSON(w, http.StatusCreated, body)
}

// writeChanged answers a write to an existing record (update, archive,
// unarchive, issue, void): 200 with the record as the write left it and its
// ETag, the one a later If-Match names.
func writeChanged(w http.ResponseWriter, tag string, replayed bool, body any) {
	w.Header().Set("ETag", tag)
	markReplayed(w, replayed)
	writeJSON(w, http.StatusOK, body)
}

// The paths of single resources, for Location.

func companyLocation(companyID string) string { return "/v1/companies/" + companyID }

func customerLocation(companyID, customerID string) string {
	return companyLocation(companyID) + "/customers/" + customerID
}

func creditNoteLocation(companyID, creditNoteID string) string {
	return companyLocation(companyID) + "/credit_notes/" + creditNoteID
}

func invoiceLocation(companyID, invoiceID string) string {
	return companyLocation(companyID) + "/invoices/" + invoiceID
}
