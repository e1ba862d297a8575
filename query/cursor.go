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
	cursorVersion = 2
	cursorKeyLen  = 16
	cursorMACLen  = 12
)

// rowKey is a row's keyset key: the global position of the event that
// created it (see the projections' schemas).
type rowKey struct {
	hi, lo int64
}

// A cursor is base64url (no padding) of: a version byte, the last row's key
// (16 bytes), and a check of 12 bytes of SHA-256 over the list's scope and
// the key. The check makes tampering and cross-list use detectable; it is
// not secret, and needs not be: tenancy is enforced by every query's WHERE
// clause, never by the cursor. Keys are event positions, which a projection
// rebuild reproduces, so a cursor survives a rebuild.
func encodeCursor(scope string, k rowKey) string {
	buf := make([]byte, 1+cursorKeyLen, 1+cursorKeyLen+cursorMACLen)
	buf[0] = cursorVersion
	binary.BigEndian.PutUint64(buf[1:], uint64(k.hi))
	binary.BigEndian.PutUint64(buf[9:], uint64(k.lo))
	return base64.RawURLEncoding.EncodeToString(append(buf, cursorCheck(scope, buf)...))
}

func decodeCursor(scope, s string) (rowKey, error) {
	// Strict: 29 bytes leave two unused bits in the last character, which
	// the lenient decoder ignores, so two spellings would name one cursor.
	buf, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil || len(buf) != 1+cursorKeyLen+cursorMACLen || buf[0] != cursorVersion {
		return rowKey{}, ErrInvalidCursor
	}
	body := buf[:1+cursorKeyLen]
	if subtle.ConstantTimeCompare(buf[1+cursorKeyLen:], cursorCheck(scope, body)) != 1 {
		return rowKey{}, ErrInvalidCursor
	}
	k := rowKey{hi: int64(binary.BigEndian.Uint64(body[1:])), lo: int64(binary.BigEndian.Uint64(body[9:]))}
	if k.hi < 0 || k.lo < 0 {
		return rowKey{}, ErrInvalidCursor
	}
	return k, nil
}

func cursorCheck(scope string, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte("invoicing-cursor\x00" + scope + "\x00"))
	h.Write(body)
	return h.Sum(nil)[:cursorMACLen]
}
