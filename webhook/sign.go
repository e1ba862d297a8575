package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// The headers of a delivery (Standard Webhooks).
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Signature is the webhook-signature header of a message: for each secret,
// "v1," and the base64 HMAC-SHA256 of "id.timestamp.body" under it,
// separated by spaces. Two secrets sign during a rotation's overlap, so a
// receiver holding either verifies the message.
func Signature(secrets []string, msgID string, ts time.Time, body []byte) (string, error) {
	content := msgID + "." + strconv.FormatInt(ts.Unix(), 10) + "."
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		key, err := secretKey(s)
		if err != nil {
			return "", err
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(content))
		mac.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return strings.Join(sigs, " "), nil
}
