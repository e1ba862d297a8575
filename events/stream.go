package events

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strconv"

	"github.com/google/uuid"
)

// Stream kinds: the prefix of a stream name says which entity it holds.
const (
	KindCompany  = "company"
	KindCustomer = "customer"
	KindInvoice  = "invoice"
	// KindNumbering holds a company's invoice number sequence.
	KindNumbering = "numbering"
)

// StreamName names the stream of the entity created by one create request:
// the kind, then base64url(SHA-256) over the account, the operation, the path
// scope and the idempotency key. The key never appears in clear, and the
// same key under another account, operation or company names another stream.
func StreamName(kind, accountID, operation, scope, idempotencyKey string) string {
	return kind + "-" + IdempotencyKeyHash(accountID, operation, scope, idempotencyKey)
}

// IdempotencyKeyHash identifies one idempotency key within its scope
// (account, operation, path) without revealing it: base64url(SHA-256).
// Lifecycle events carry it in their metadata, so that a retried operation
// finds the event it already appended.
func IdempotencyKeyHash(accountID, operation, scope, idempotencyKey string) string {
	return hashParts(accountID, operation, scope, idempotencyKey)
}

func hashParts(parts ...string) string {
	h := sha256.New()
	for _, part := range parts {
		// Length prefixes keep ("ab","c") and ("a","bc") apart.
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// eventIDSpace is the UUIDv5 namespace of event ids.
var eventIDSpace = uuid.MustParse("3f1b8f0e-6f0c-4a57-9d0e-2b7c1d9a4e61")

// EventID derives the id of the event at revision of stream, so that a
// retried append carries the same id and stores can recognise it.
func EventID(stream string, revision uint64) [16]byte {
	return uuid.NewSHA1(eventIDSpace, []byte(stream+"@"+strconv.FormatUint(revision, 10)))
}
