package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// SecretPrefix starts every signing secret, as Standard Webhooks libraries
// take it: "whsec_" and the key in standard base64.
const SecretPrefix = "whsec_"

// MinMasterKeyBytes is the shortest master key: the secrets are as strong
// as it is.
const MinMasterKeyBytes = 32

// ErrShortMasterKey means a master key of fewer than MinMasterKeyBytes.
var ErrShortMasterKey = fmt.Errorf("webhook: the master key must have at least %d bytes", MinMasterKeyBytes)

// Secret is the signing secret of one generation of an endpoint's secret:
// HMAC-SHA256 of the account, the endpoint and the generation under the
// service's master key. Secrets are derived, never stored: the events and
// the read models hold only the generation, so the event log (which
// auditors export) reveals none, nor does a database dump when the key
// comes from WEBHOOK_SECRET_KEY (a generated key is kept in the database,
// and a dump holds it); a rotation is a new generation.
func Secret(masterKey []byte, accountID, endpointID string, generation int) (string, error) {
	if len(masterKey) < MinMasterKeyBytes {
		return "", ErrShortMasterKey
	}
	mac := hmac.New(sha256.New, masterKey)
	for _, part := range []string{"webhook-signing-secret", accountID, endpointID, strconv.Itoa(generation)} {
		// Length prefixes keep ("ab","c") and ("a","bc") apart.
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		mac.Write(n[:])
		mac.Write([]byte(part))
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// ErrMalformedSecret means a secret that is not "whsec_" and base64.
var ErrMalformedSecret = errors.New("webhook: a secret is whsec_ followed by base64")

// secretKey is the HMAC key a secret stands for.
func secretKey(secret string) ([]byte, error) {
	encoded, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, ErrMalformedSecret
	}
	key, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformedSecret, err)
	}
	return key, nil
}
