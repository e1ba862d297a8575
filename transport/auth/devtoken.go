package auth

import (
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// DevClaims describe a development token.
type DevClaims struct {
	Org, Subject     string
	Scopes           []string
	TTL              time.Duration
	OrgClaim         string // default "org_id"
	Issuer, Audience string // set when non-empty
}

// MintDevToken signs an HS256 token for development and tests.
func MintDevToken(secret []byte, c DevClaims, now time.Time) (string, error) {
	if c.OrgClaim == "" {
		c.OrgClaim = "org_id"
	}
	claims := jwt.MapClaims{
		"sub": c.Subject, c.OrgClaim: c.Org, "scope": strings.Join(c.Scopes, " "),
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(c.TTL).Unix(),
	}
	if c.Issuer != "" {
		claims["iss"] = c.Issuer
	}
	if c.Audience != "" {
		claims["aud"] = c.Audience
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(secret)
}
