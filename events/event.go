package events

import (
	"encoding/json"
	"time"
)

// The stable type names of this service's events. They are stored with every
// event and never change; a new shape bumps SchemaVersion instead.
const (
	TypeCompanyCreated  = "CompanyCreated"
	TypeCustomerCreated = "CustomerCreated"
	TypeInvoiceDrafted  = "InvoiceDrafted"
	TypeInvoiceIssued   = "InvoiceIssued"
	TypeInvoiceVoided   = "InvoiceVoided"
	TypeInvoiceRevised  = "InvoiceRevised"
	// TypeInvoiceNumberAssigned lives in a company's numbering stream.
	TypeInvoiceNumberAssigned = "InvoiceNumberAssigned"
	// Changes of companies and customers, in their own streams.
	TypeCompanyUpdated     = "CompanyUpdated"
	TypeCompanyArchived    = "CompanyArchived"
	TypeCompanyUnarchived  = "CompanyUnarchived"
	TypeCustomerUpdated    = "CustomerUpdated"
	TypeCustomerArchived   = "CustomerArchived"
	TypeCustomerUnarchived = "CustomerUnarchived"
	// Corrections and settlement of an issued invoice, in its stream.
	TypeCreditNoteIssued = "CreditNoteIssued"
	TypePaymentRecorded  = "PaymentRecorded"
	TypePaymentReversed  = "PaymentReversed"
	// TypeCreditNoteNumberAssigned lives in a company's credit-note
	// numbering stream.
	TypeCreditNoteNumberAssigned = "CreditNoteNumberAssigned"
)

// Types lists every event type this service writes; subscriptions are
// filtered to them.
var Types = []string{TypeCompanyCreated, TypeCustomerCreated, TypeInvoiceDrafted,
	TypeInvoiceIssued, TypeInvoiceVoided, TypeInvoiceNumberAssigned, TypeInvoiceRevised,
	TypeCompanyUpdated, TypeCompanyArchived, TypeCompanyUnarchived,
	TypeCustomerUpdated, TypeCustomerArchived, TypeCustomerUnarchived,
	TypeCreditNoteIssued, TypePaymentRecorded, TypePaymentReversed, TypeCreditNoteNumberAssigned,
	TypeWebhookEndpointCreated, TypeWebhookEndpointUpdated, TypeWebhookEndpointSecretRotated, TypeWebhookEndpointDeleted}

// IsServiceType reports whether t is one of Types.
func IsServiceType(t string) bool {
	for _, s := range Types {
		if s == t {
			return true
		}
	}
	return false
}

// SchemaVersion is the version of today's event payload shapes.
const SchemaVersion = 1

// EventData is an event to append.
type EventData struct {
	// ID identifies the event. Adapters use it to make a retried append
	// idempotent, so callers derive it deterministically from the stream
	// and the revision (see EventID).
	ID       [16]byte
	Type     string
	Data     json.RawMessage
	Metadata json.RawMessage
}

// RecordedEvent is an event as stored.
type RecordedEvent struct {
	ID         [16]byte
	Type       string
	Data       json.RawMessage
	Metadata   json.RawMessage
	Stream     string
	Revision   uint64
	Position   Position
	RecordedAt time.Time
}

// Metadata is carried by every event of this service (events/README.md).
type Metadata struct {
	AccountID string `json:"account_id"`
	Actor     Actor  `json:"actor"`
	RequestID string `json:"request_id"`
	// TraceParent is the W3C traceparent of the request, when it had one.
	TraceParent        string `json:"traceparent,omitempty"`
	RequestFingerprint string `json:"request_fingerprint"`
	// IdempotencyKey is the IdempotencyKeyHash of a lifecycle operation's
	// key (creates need none: the key names their stream).
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	SchemaVersion  int    `json:"schema_version"`
}

// Actor is who caused an event: the token's subject and, for delegated or
// machine callers, the authorized party.
type Actor struct {
	Subject  string `json:"sub"`
	ClientID string `json:"client_id,omitempty"`
}
