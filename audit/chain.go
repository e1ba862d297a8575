package audit

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/invoicing/invoicing/events"
)

// ChainHash is a link of the audit chain over the global order:
//
//	chain_0 = 32 zero bytes
//	chain_n = SHA-256(chain_{n-1} ‖ CanonicalEvent(event n))
//
// where n, the event's sequence number, counts this service's events from 1
// in the order ReadAll and the projectors see them. Changing, removing,
// adding or moving any event changes every link from there on.
type ChainHash [sha256.Size]byte

// NextChain returns the link after prev for an event's canonical bytes.
func NextChain(prev ChainHash, canonical []byte) ChainHash {
	h := sha256.New()
	h.Write(prev[:])
	h.Write(canonical)
	var next ChainHash
	copy(next[:], h.Sum(nil))
	return next
}

// Chain links an event to prev.
func Chain(prev ChainHash, ev events.RecordedEvent) (ChainHash, error) {
	canonical, err := CanonicalEvent(ev)
	if err != nil {
		return ChainHash{}, err
	}
	return NextChain(prev, canonical), nil
}

// String is the hash in lower-case hex, as exports and seals write it.
func (c ChainHash) String() string { return hex.EncodeToString(c[:]) }

// ParseChainHash reads the hex form.
func ParseChainHash(s string) (ChainHash, error) {
	var c ChainHash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(c) {
		return c, fmt.Errorf("chain hash %q: want 64 hex digits", s)
	}
	copy(c[:], b)
	return c, nil
}

// SealVersion is the version of the seal format below.
const SealVersion = 1

// Seal states what the log held at a moment: the chain link after event
// Seq. Signed with Ed25519, a copy kept outside the database proves it to
// anyone with the public key, so even a rewrite of the whole log and of its
// stored seals is detected against it.
type Seal struct {
	Version  int       `json:"version"`
	Seq      uint64    `json:"seq"`
	Chain    string    `json:"chain"` // ChainHash in hex
	SealedAt time.Time `json:"sealed_at"`
	// PublicKey (base64, 32 bytes) and Signature (base64, 64 bytes) are
	// empty for an unsigned seal.
	PublicKey string `json:"public_key,omitempty"`
	Signature string `json:"signature,omitempty"`
}

// ErrBadSignature means a seal's signature does not verify.
var ErrBadSignature = errors.New("audit: the seal's signature does not verify")

// SignedMessage is what a seal's signature covers: the canonical JSON of the
// seal without its signature.
func (s Seal) SignedMessage() ([]byte, error) {
	unsigned := s
	unsigned.Signature = ""
	unsigned.SealedAt = s.SealedAt.UTC()
	raw, err := json.Marshal(unsigned)
	if err != nil {
		return nil, fmt.Errorf("seal message: %w", err)
	}
	return CanonicalJSON(raw)
}

// Sign sets the seal's public key and signature.
func (s *Seal) Sign(key ed25519.PrivateKey) error {
	s.PublicKey = base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey))
	msg, err := s.SignedMessage()
	if err != nil {
		return err
	}
	s.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(key, msg))
	return nil
}

// Verify checks a signed seal's signature with its own public key, and, when
// trusted is not nil, that this key is the trusted one. An unsigned seal
// verifies only when trusted is nil.
func (s Seal) Verify(trusted ed25519.PublicKey) error {
	if s.Signature == "" {
		if trusted != nil {
			return fmt.Errorf("%w: the seal is not signed", ErrBadSignature)
		}
		return nil
	}
	pub, err1 := base64.StdEncoding.DecodeString(s.PublicKey)
	sig, err2 := base64.StdEncoding.DecodeString(s.Signature)
	msg, err3 := s.SignedMessage()
	if err := errors.Join(err1, err2, err3); err != nil || len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("%w: malformed key or signature", ErrBadSignature)
	}
	if trusted != nil && !ed25519.PublicKey(pub).Equal(trusted) {
		return fmt.Errorf("%w: signed by another key", ErrBadSignature)
	}
	if !ed25519.Verify(pub, msg, sig) {
		return ErrBadSignature
	}
	return nil
}

// ParsePublicKey reads an Ed25519 public key given as base64 of its 32
// bytes, as seals carry it (the only key `audit verify-log --public-key`
// trusts).
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(key) != ed25519.PublicKeySize {
		return nil, errors.New("want base64 of a 32-byte Ed25519 public key")
	}
	return key, nil
}

// ParseSigningKey reads an Ed25519 private key given as base64 of its 32-byte
// seed (AUDIT_SIGNING_KEY).
func ParseSigningKey(s string) (ed25519.PrivateKey, error) {
	seed, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, errors.New("an Ed25519 signing key must be base64 of a 32-byte seed")
	}
	return ed25519.NewKeyFromSeed(seed), nil
}
