// Package auth verifies bearer JWT access tokens (DESIGN.md §5): algorithms,
// issuer, audience, expiry and leeway are pinned once at start-up.
package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// ErrUnauthenticated is wrapped by every reason a token is not accepted:
// missing, garbled, bad signature, disallowed algorithm, expired, not yet
// valid, wrong issuer or audience.
var ErrUnauthenticated = errors.New("unauthenticated")

// ErrForbidden means a valid token that names no account.
var ErrForbidden = errors.New("forbidden")

// Scopes of this service.
const (
	ScopeRead  = "invoicing:read"
	ScopeWrite = "invoicing:write"
)

// leeway absorbs clock skew between the issuer and this service.
const leeway = 60 * time.Second

// Config is built by cmd from the environment; this package reads none.
type Config struct {
	HS256Secret []byte // development and tests; empty disables HS256
	JWKSURL     string // RS256, ES256, EdDSA keys; empty disables them
	Issuer      string // checked when set
	Audience    string // checked when set
	OrgClaim    string // the account claim; default "org_id"
	HTTPClient  *http.Client
	Now         func() time.Time
}

// Principal is the verified caller.
type Principal struct {
	AccountID string
	Subject   string
	ClientID  string
	Scopes    []string
}

// HasScope reports whether the token grants scope s.
func (p Principal) HasScope(s string) bool { return slices.Contains(p.Scopes, s) }

// CanRead reports whether the principal may read: read or write scope.
func (p Principal) CanRead() bool { return p.HasScope(ScopeRead) || p.HasScope(ScopeWrite) }

// CanWrite reports whether the principal may create.
func (p Principal) CanWrite() bool { return p.HasScope(ScopeWrite) }

// Verifier checks tokens.
type Verifier struct {
	cfg    Config
	parser *jwt.Parser
	jwks   *keySet
}

// NewVerifier returns a verifier; at least one key source is required.
func NewVerifier(cfg Config) (*Verifier, error) {
	if len(cfg.HS256Secret) == 0 && cfg.JWKSURL == "" {
		return nil, errors.New("auth: configure a JWKS URL or an HS256 secret")
	}
	if cfg.OrgClaim == "" {
		cfg.OrgClaim = "org_id"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	var methods []string
	if len(cfg.HS256Secret) > 0 {
		methods = append(methods, jwt.SigningMethodHS256.Alg())
	}
	v := &Verifier{cfg: cfg}
	if cfg.JWKSURL != "" {
		methods = append(methods, jwt.SigningMethodRS256.Alg(), jwt.SigningMethodES256.Alg(), jwt.SigningMethodEdDSA.Alg())
		v.jwks = newKeySet(cfg.JWKSURL, cfg.HTTPClient, cfg.Now)
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(methods), jwt.WithExpirationRequired(), jwt.WithLeeway(leeway),
		jwt.WithIssuedAt(), jwt.WithTimeFunc(cfg.Now),
	}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	if cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(cfg.Audience))
	}
	v.parser = jwt.NewParser(opts...)
	return v, nil
}

// ParseBearer extracts the token of an Authorization header value.
func ParseBearer(header string) (string, error) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if header == "" {
		return "", fmt.Errorf("%w: no Authorization header", ErrUnauthenticated)
	}
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", fmt.Errorf("%w: Authorization is not a bearer token", ErrUnauthenticated)
	}
	return token, nil
}

// Verify checks the token and returns its principal.
func (v *Verifier) Verify(ctx context.Context, raw string) (Principal, error) {
	claims := jwt.MapClaims{}
	_, err := v.parser.ParseWithClaims(raw, claims, func(t *jwt.Token) (any, error) {
		return v.key(ctx, t)
	})
	if err != nil {
		return Principal{}, fmt.Errorf("%w: %w", ErrUnauthenticated, err)
	}
	return v.principal(claims)
}

func (v *Verifier) key(ctx context.Context, t *jwt.Token) (any, error) {
	if t.Method.Alg() == jwt.SigningMethodHS256.Alg() {
		return v.cfg.HS256Secret, nil
	}
	if v.jwks == nil {
		return nil, errors.New("no key source for this algorithm")
	}
	kid, _ := t.Header["kid"].(string)
	return v.jwks.key(ctx, kid, t.Method.Alg())
}

func (v *Verifier) principal(claims jwt.MapClaims) (Principal, error) {
	account, _ := claims[v.cfg.OrgClaim].(string)
	if account == "" {
		return Principal{}, fmt.Errorf("%w: the token has no %q claim", ErrForbidden, v.cfg.OrgClaim)
	}
	p := Principal{AccountID: account, Scopes: scopes(claims)}
	p.Subject, _ = claims["sub"].(string)
	if azp, ok := claims["azp"].(string); ok {
		p.ClientID = azp
	} else {
		p.ClientID, _ = claims["client_id"].(string)
	}
	return p, nil
}

// scopes reads "scope" (space separated) and "scp" (array or string).
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
			if str, ok := s.(string); ok {
				out = append(out, str)
			}
		}
	}
	return out
}
