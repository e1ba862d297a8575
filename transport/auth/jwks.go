package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"sync"
	"time"
)

// refetchInterval limits JWKS fetches caused by unknown key ids, so that a
// flood of tokens with made-up kids cannot hammer the identity provider.
const refetchInterval = time.Minute

// keySet caches a JWKS endpoint's keys by kid.
type keySet struct {
	url    string
	client *http.Client
	now    func() time.Time

	mu        sync.Mutex
	keys      map[string]any
	fetchedAt time.Time
	fetched   bool
}

func newKeySet(url string, client *http.Client, now func() time.Time) *keySet {
	return &keySet{url: url, client: client, now: now}
}

// key returns the key for kid, fetching the set on first use and again for
// an unknown kid at most once per refetchInterval.
func (k *keySet) key(ctx context.Context, kid, alg string) (any, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if key, ok := k.lookup(kid, alg); ok {
		return key, nil
	}
	if k.fetched && k.now().Sub(k.fetchedAt) < refetchInterval {
		return nil, fmt.Errorf("unknown key id %q", kid)
	}
	if err := k.fetch(ctx); err != nil {
		return nil, err
	}
	if key, ok := k.lookup(kid, alg); ok {
		return key, nil
	}
	return nil, fmt.Errorf("unknown key id %q", kid)
}

// lookup finds kid; a token without kid may use the only key of its type.
func (k *keySet) lookup(kid, alg string) (any, bool) {
	if kid != "" {
		key, ok := k.keys[kid]
		return key, ok && fits(key, alg)
	}
	var found any
	for _, key := range k.keys {
		if fits(key, alg) {
			if found != nil {
				return nil, false
			}
			found = key
		}
	}
	return found, found != nil
}

func fits(key any, alg string) bool {
	switch key.(type) {
	case *rsa.PublicKey:
		return alg == "RS256"
	case *ecdsa.PublicKey:
		return alg == "ES256"
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}

type jwk struct {
	Kty, Kid, Crv, N, E, X, Y string
}

func (k *keySet) fetch(ctx context.Context) error {
	k.fetched, k.fetchedAt = true, k.now()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return fmt.Errorf("jwks: %w", err)
	}
	res, err := k.client.Do(req)
	if err != nil {
		return fmt.Errorf("jwks: fetch: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("jwks: fetch: status %d", res.StatusCode)
	}
	var set struct{ Keys []jwk }
	if err := json.NewDecoder(http.MaxBytesReader(nil, res.Body, 1<<20)).Decode(&set); err != nil {
		return fmt.Errorf("jwks: decode: %w", err)
	}
	keys := map[string]any{}
	for _, j := range set.Keys {
		if key, err := j.publicKey(); err == nil {
			keys[j.Kid] = key
		}
	}
	k.keys = keys
	return nil
}

func (j jwk) publicKey() (any, error) {
	switch {
	case j.Kty == "RSA":
		n, e := decodeInt(j.N), decodeInt(j.E)
		if n == nil || e == nil || !e.IsInt64() {
			return nil, errors.New("bad RSA key")
		}
		return &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
	case j.Kty == "EC" && j.Crv == "P-256":
		x, y := decodeInt(j.X), decodeInt(j.Y)
		if x == nil || y == nil || !elliptic.P256().IsOnCurve(x, y) {
			return nil, errors.New("bad EC key")
		}
		return &ecdsa.PublicKey{Curve: elliptic.P256(), X: x, Y: y}, nil
	case j.Kty == "OKP" && j.Crv == "Ed25519":
		x, err := base64.RawURLEncoding.DecodeString(j.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return nil, errors.New("bad Ed25519 key")
		}
		return ed25519.PublicKey(x), nil
	}
	return nil, fmt.Errorf("unsupported key type %s %s", j.Kty, j.Crv)
}

func decodeInt(s string) *big.Int {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		return nil
	}
	return new(big.Int).SetBytes(b)
}
