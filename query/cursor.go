package query

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
)

// ErrInvalidCursor means an `after` cursor was tampered with, truncated, or
// issued for another list, account, company or filter set.
var ErrInvalidCursor = errors.New("cursor is invalid or belongs to another list")

const (
	cursorVersion = 1
	cursorMACLen  = 12
)

// A cursor is base64url (no padding) of: version byte, the last row's seq
// (8 bytes), and a check of 12 bytes of SHA-256 over the list's scope and
// the seq. The check makes tampering and cross-list use detectable; it is
// not secret, and needs not be: tenancy is enforced by every query's WHERE
// clause, never by the cursor.
func encodeCursor(scope string, seq int64) string {
	buf := make([]byte, 1+8, 1+8+cursorMACLen)
	buf[0] = cursorVersion
	binary.BigEndian.PutUint64(buf[1:], uint64(seq))
	buf = append(buf, cursorCheck(scope, buf[:9])...)
	return base64.RawURLEncoding.EncodeToString(buf)
}

func decodeCursor(scope, s string) (int64, error) {
	buf, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(buf) != 1+8+cursorMACLen || buf[0] != cursorVersion {
		return 0, ErrInvalidCursor
	}
	if subtle.ConstantTimeCompare(buf[9:], cursorCheck(scope, buf[:9])) != 1 {
		return 0, ErrInvalidCursor
	}
	seq := int64(binary.BigEndian.Uint64(buf[1:9]))
	if seq < 0 {
		return 0, ErrInvalidCursor
	}
	return seq, nil
}

func cursorCheck(scope string, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte("invoicing-cursor\x00" + scope + "\x00"))
	h.Write(body)
	return h.Sum(nil)[:cursorMACLen]
}
