package command

import (
	"bytes"
	"testing"

	"github.com/invoicing/invoicing/events"
)

// FuzzAKeyHashIsWrittenAsItIsInTheMetadata: current skips an event whose
// metadata does not hold the request's key hash byte for byte, without
// decoding it. That holds only while JSON writes every hash unescaped, for
// any account, operation, scope and key; a hash that needed escaping would
// make a retried request append its change a second time.
func FuzzAKeyHashIsWrittenAsItIsInTheMetadata(f *testing.F) {
	f.Add("acct", "update company", "company/1", "key-1")
	f.Add("a<b>&", "issue invoice", "c/\u2028", "\"\\")
	f.Fuzz(func(t *testing.T, account, operation, scope, key string) {
		hash := events.IdempotencyKeyHash(account, operation, scope, key)
		md, err := metadata(Request{Actor: Actor{AccountID: account}, IdempotencyKey: key}, "fp", hash)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(md, []byte(`"`+hash+`"`)) {
			t.Fatalf("metadata %s does not hold the key hash %q as it is", md, hash)
		}
	})
}
