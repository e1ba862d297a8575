package auth

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// DevClaims describe a development token for MintDevToken.
type DevClaims struct {
	Org, Subject     string
	Scopes           []string
	TTL              time.Duration
	OrgClaim         string // name of the account claim; default DefaultOrgClaim
	Issuer, Audience string // set as iss and aud when non-empty
}

// MintDevToken signs an HS256 token for development and tests with the
// claims sub, the account claim, scope (space joined), iat, nbf and
// exp = now + TTL, plus iss and aud when set. It refuses what a Verifier
// would refuse anyway (a secret under 32 bytes, no org, no positive TTL),
// so that a mistake shows where the token is made, not where it is used.
func MintDevToken(secret []byte, c DevClaims, now time.Time) (string, error) {
	switch {
	case len(secret) < minSecretLen:
		return "", fmt.Errorf("auth: the HS256 secret has %d bytes, want at least %d", len(secret), minSecretLen)
	case c.Org == "":
		return "", errors.New("auth: a development token needs an org")
	case c.TTL <= 0:
		return "", fmt.Errorf("auth: a development token needs a positive TTL, not %v", c.TTL)
	}
	if c.OrgClaim == "" {
		c.OrgClaim = DefaultOrgClaim
	}
	claims := jwt.MapClaims{
		"sub":      c.Subject,
		c.OrgClaim: c.Org,
		"scope":    strings.Join(c.Scopes, " "),
		"iat":      now.Unix(),
		"nbf":      now.Unix(),
		"exp":      now.Add(c.TTL).Unix(),
	}
	if c.Issuer != "" {
		claims["iss"] = c.Issuer
	}
	if c.Audience != "" {
		claims["aud"] = c.Audience
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(secret)
}
