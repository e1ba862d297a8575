package auth

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"

	"github.com/invoicing/invoicing/events"
)

// Scopes this service knows (docs/decisions.md).
const (
	ScopeRead  = "invoicing:read"
	ScopeWrite = "invoicing:write"
)

// Principal is the caller a verified token describes.
type Principal struct {
	AccountID string   // the account claim (Config.OrgClaim)
	Subject   string   // sub
	ClientID  string   // azp, else client_id, when present
	Scopes    []string // from "scope" and "scp", in token order
}

// HasScope reports whether the token grants scope s.
func (p Principal) HasScope(s string) bool { return slices.Contains(p.Scopes, s) }

// CanRead reports whether the principal may read: writing implies reading,
// so either scope will do.
func (p Principal) CanRead() bool { return p.HasScope(ScopeRead) || p.HasScope(ScopeWrite) }

// CanWrite reports whether the principal may create resources.
func (p Principal) CanWrite() bool { return p.HasScope(ScopeWrite) }

// MaxAccountIDLength bounds the account claim, in code points.
const MaxAccountIDLength = 255

// principalOf reads the principal from verified claims. A missing, empty or
// non-string account claim is ErrForbidden rather than ErrUnauthenticated:
// the token is genuine, it just grants nothing here. So is an account id
// that could not be stored as text (a control character such as NUL, or
// over MaxAccountIDLength): it ends up in every event and read-model row.
func principalOf(claims jwt.MapClaims, orgClaim string) (Principal, error) {
	account, _ := claims[orgClaim].(string)
	if account == "" {
		return Principal{}, fmt.Errorf("%w: the token has no %q claim", ErrForbidden, orgClaim)
	}
	if err := events.CheckText(account, false); err != nil || utf8.RuneCountInString(account) > MaxAccountIDLength {
		return Principal{}, fmt.Errorf("%w: the %q claim is not an account id of 1 to %d characters without control characters",
			ErrForbidden, orgClaim, MaxAccountIDLength)
	}
	p := Principal{
		AccountID: account,
		Subject:   stringClaim(claims, "sub"),
		ClientID:  stringClaim(claims, "azp"),
		Scopes:    scopes(claims),
	}
	if p.ClientID == "" {
		p.ClientID = stringClaim(claims, "client_id")
	}
	return p, nil
}

// stringClaim returns claim name when it is a string, else "".
func stringClaim(claims jwt.MapClaims, name string) string {
	s, _ := claims[name].(string)
	return s
}

// scopes reads "scope" (RFC 8693: space separated) and "scp" (an array, as
// Azure AD and Okta issue it, or a space separated string). Non-string array
// elements are ignored rather than failing the token: they cannot name one
// of our scopes anyway.
func scopes(claims jwt.MapClaims) []string {
	var out []string
	if s, ok := claims["scope"].(string); ok {
		out = append(out, strings.Fields(s)...)
	}
	switch scp := claims["scp"].(type) {
	case string:
		out = append(out, strings.Fields(scp)...)
	case []any:
		for _, s := range scp {
			if str, ok := s.(string); ok && str != "" {
				out = append(out, str)
			}
		}
	}
	return out
}
