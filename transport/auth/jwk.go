package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
)

// minRSABits is RFC 7518 §3.3's floor for RS256 keys.
const minRSABits = 2048

// jwk is one usable key of a JSON Web Key Set (RFC 7517), parsed.
type jwk struct {
	kid string
	alg string // the key's declared "alg", if any
	key any    // *rsa.PublicKey, *ecdsa.PublicKey (P-256) or ed25519.PublicKey
}

// fits reports whether the key may verify a token signed with alg. The
// type check matters: jwt's ES256 verifier does not check the curve, and a
// key declared for another algorithm must not be borrowed.
func (k jwk) fits(alg string) bool {
	if k.alg != "" && k.alg != alg {
		return false
	}
	switch k.key.(type) {
	case *rsa.PublicKey:
		return alg == "RS256"
	case *ecdsa.PublicKey:
		return alg == "ES256"
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}

// jwkFields are the members of a JWK this package reads (RFC 7518 §6,
// RFC 8037 §2); binary members are base64url without padding.
type jwkFields struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	Crv string `json:"crv"`
	N   string `json:"n"`
	E   string `json:"e"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// parseJWK parses one key of a set: RSA, EC P-256 or OKP Ed25519, for
// signatures.
func parseJWK(raw json.RawMessage) (jwk, error) {
	var f jwkFields
	if err := json.Unmarshal(raw, &f); err != nil {
		return jwk{}, err
	}
	if f.Use != "" && f.Use != "sig" {
		return jwk{}, fmt.Errorf("key %q is for %q, not signatures", f.Kid, f.Use)
	}
	var key any
	var err error
	switch {
	case f.Kty == "RSA":
		key, err = rsaKey(f)
	case f.Kty == "EC" && f.Crv == "P-256":
		key, err = p256Key(f)
	case f.Kty == "OKP" && f.Crv == "Ed25519":
		key, err = ed25519Key(f)
	default:
		err = fmt.Errorf("unsupported key type %q %q", f.Kty, f.Crv)
	}
	if err != nil {
		return jwk{}, fmt.Errorf("key %q: %w", f.Kid, err)
	}
	return jwk{kid: f.Kid, alg: f.Alg, key: key}, nil
}

func rsaKey(f jwkFields) (*rsa.PublicKey, error) {
	n, err := decodeB64(f.N)
	if err != nil {
		return nil, fmt.Errorf("n: %w", err)
	}
	e, err := decodeB64(f.E)
	if err != nil {
		return nil, fmt.Errorf("e: %w", err)
	}
	modulus, exponent := new(big.Int).SetBytes(n), new(big.Int).SetBytes(e)
	if modulus.BitLen() < minRSABits {
		return nil, fmt.Errorf("modulus of %d bits, want at least %d", modulus.BitLen(), minRSABits)
	}
	// An even or tiny exponent is not an RSA key; 2^31-1 keeps it an int
	// on every platform.
	if !exponent.IsInt64() || exponent.Int64() < 3 || exponent.Int64() > 1<<31-1 || exponent.Bit(0) == 0 {
		return nil, errors.New("bad public exponent")
	}
	return &rsa.PublicKey{N: modulus, E: int(exponent.Int64())}, nil
}

// p256Key checks the point is on the curve (ParseUncompressedPublicKey
// does), which guards against invalid-curve attacks.
func p256Key(f jwkFields) (*ecdsa.PublicKey, error) {
	x, err := decodeB64(f.X)
	if err != nil {
		return nil, fmt.Errorf("x: %w", err)
	}
	y, err := decodeB64(f.Y)
	if err != nil {
		return nil, fmt.Errorf("y: %w", err)
	}
	// RFC 7518 §6.2.1.2: coordinates are the full 32 bytes for P-256.
	if len(x) != 32 || len(y) != 32 {
		return nil, errors.New("P-256 coordinates must be 32 bytes each")
	}
	point := append(append([]byte{4}, x...), y...)
	return ecdsa.ParseUncompressedPublicKey(elliptic.P256(), point)
}

func ed25519Key(f jwkFields) (ed25519.PublicKey, error) {
	x, err := decodeB64(f.X)
	if err != nil {
		return nil, fmt.Errorf("x: %w", err)
	}
	if len(x) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("key of %d bytes, Ed25519 needs %d", len(x), ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(x), nil
}

// decodeB64 decodes a non-empty base64url member without padding.
func decodeB64(s string) ([]byte, error) {
	if s == "" {
		return nil, errors.New("missing")
	}
	return base64.RawURLEncoding.DecodeString(s)
}
