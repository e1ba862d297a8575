// Package auth verifies bearer JWT access tokens (docs/decisions.md). Algorithms,
// issuer, audience, required expiry and leeway are pinned once, at start-up,
// in NewVerifier; Verify then only reads.
package auth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// ErrUnauthenticated is wrapped by every reason a token is not accepted:
// missing or garbled, bad signature, disallowed algorithm, expired, not yet
// valid, wrong issuer or audience, no usable key. Transport maps it to 401.
var ErrUnauthenticated = errors.New("unauthenticated")

// ErrForbidden is wrapped when a token is valid but names no account: its
// account claim is missing, empty or not a string. Transport maps it to 403.
var ErrForbidden = errors.New("forbidden")

const (
	// leeway absorbs clock skew between the token issuer and this service.
	leeway = 60 * time.Second
	// minSecretLen is RFC 7518 §3.2's floor for HS256: a key as long as the
	// hash output. Shorter secrets are brute-forceable from one token.
	minSecretLen = 32
	// fetchTimeout bounds a JWKS fetch even when Config.HTTPClient has none.
	fetchTimeout = 10 * time.Second
)

// DefaultOrgClaim names the account claim when Config.OrgClaim (or
// DevClaims.OrgClaim) is empty, and is AUTH_ORG_CLAIM's default.
const DefaultOrgClaim = "org_id"

// Config is built by cmd from the environment; this package reads none.
type Config struct {
	HS256Secret []byte           // AUTH_HS256_SECRET, development and tests; empty disables HS256
	JWKSURL     string           // AUTH_JWKS_URL; RS256, ES256 and EdDSA keys; empty disables them
	Issuer      string           // AUTH_ISSUER; checked when non-empty
	Audience    string           // AUTH_AUDIENCE; checked when non-empty
	OrgClaim    string           // AUTH_ORG_CLAIM; default DefaultOrgClaim
	HTTPClient  *http.Client     // fetches the JWKS; default a client with a 10 s timeout
	Now         func() time.Time // default time.Now
}

// Verifier checks bearer tokens. It is safe for concurrent use.
type Verifier struct {
	secret   []byte
	orgClaim string
	parser   *jwt.Parser
	jwks     *keySet // nil when no JWKS URL is configured
	now      func() time.Time
	verified verifiedTokens
}

// NewVerifier returns a verifier for cfg. It fails when neither an HS256
// secret nor a JWKS URL is configured, when the secret is shorter than 32
// bytes, or when the JWKS URL is not an absolute http(s) URL, so that a bad
// configuration stops start-up instead of refusing every request.
func NewVerifier(cfg Config) (*Verifier, error) {
	cfg, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	v := &Verifier{secret: bytes.Clone(cfg.HS256Secret), orgClaim: cfg.OrgClaim, now: cfg.Now}
	var methods []string
	if len(v.secret) > 0 {
		methods = append(methods, jwt.SigningMethodHS256.Alg())
	}
	if cfg.JWKSURL != "" {
		methods = append(methods, jwt.SigningMethodRS256.Alg(), jwt.SigningMethodES256.Alg(), jwt.SigningMethodEdDSA.Alg())
		v.jwks = newKeySet(cfg.JWKSURL, cfg.HTTPClient, cfg.Now)
	}
	// "none" is never in methods, so an unsigned token fails here whatever
	// else is configured.
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(methods),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(leeway),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(cfg.Now),
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

// withDefaults validates cfg and fills in its defaults.
func withDefaults(cfg Config) (Config, error) {
	if len(cfg.HS256Secret) == 0 && cfg.JWKSURL == "" {
		return cfg, errors.New("auth: configure a JWKS URL or an HS256 secret")
	}
	if n := len(cfg.HS256Secret); n > 0 && n < minSecretLen {
		return cfg, fmt.Errorf("auth: the HS256 secret has %d bytes, want at least %d", n, minSecretLen)
	}
	if cfg.JWKSURL != "" {
		u, err := url.Parse(cfg.JWKSURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return cfg, fmt.Errorf("auth: the JWKS URL %q is not an absolute http(s) URL", cfg.JWKSURL)
		}
	}
	if cfg.OrgClaim == "" {
		cfg.OrgClaim = DefaultOrgClaim
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: fetchTimeout}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return cfg, nil
}

// ParseBearer extracts the token from an Authorization header value of the
// form "Bearer <token>" (scheme case-insensitive, RFC 6750 §2.1). The error
// wraps ErrUnauthenticated when the header is missing or garbled.
func ParseBearer(header string) (string, error) {
	header = strings.TrimSpace(header)
	if header == "" {
		return "", fmt.Errorf("%w: no Authorization header", ErrUnauthenticated)
	}
	scheme, token, _ := strings.Cut(header, " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", fmt.Errorf("%w: Authorization is not a bearer token", ErrUnauthenticated)
	}
	return token, nil
}

// Verify checks rawToken's signature and claims and returns its principal.
// Every failure wraps ErrUnauthenticated, except a valid token without an
// account, which wraps ErrForbidden. Scope checks are left to the caller
// (Principal.CanRead, Principal.CanWrite) because they depend on the operation.
//
// A token that verified is remembered for up to a minute (cache.go).
func (v *Verifier) Verify(ctx context.Context, rawToken string) (Principal, error) {
	now := v.now()
	if p, ok := v.verified.get(rawToken, now); ok {
		return p, nil
	}
	claims := jwt.MapClaims{}
	_, err := v.parser.ParseWithClaims(rawToken, claims, func(t *jwt.Token) (any, error) {
		return v.key(ctx, t)
	})
	if err != nil {
		return Principal{}, fmt.Errorf("%w: %w", ErrUnauthenticated, err)
	}
	p, err := principalOf(claims, v.orgClaim)
	if exp, expErr := claims.GetExpirationTime(); err == nil && expErr == nil && exp != nil {
		v.verified.put(rawToken, p, exp.Time, now)
	}
	return p, err
}

// key picks the verification key. The parser has already refused any
// algorithm outside the configured set, so the branch on alg cannot let a
// token choose an HMAC over a public key (algorithm confusion).
//
// A token whose header has "crit" is refused before any key is looked up:
// crit lists extensions the recipient must understand or reject the token
// (RFC 7515 §4.1.11), and this service understands none. The JWT library
// does not check it, and honouring it silently could mean, for instance,
// verifying an unencoded ("b64": false, RFC 7797) payload as if it were
// base64url. An empty or malformed crit is invalid as well, so presence
// alone is enough.
func (v *Verifier) key(ctx context.Context, t *jwt.Token) (any, error) {
	if _, ok := t.Header["crit"]; ok {
		return nil, errors.New(`the "crit" header names extensions this service does not understand`)
	}
	alg := t.Method.Alg()
	if alg == jwt.SigningMethodHS256.Alg() && len(v.secret) > 0 {
		return v.secret, nil
	}
	if v.jwks == nil {
		return nil, fmt.Errorf("no key for algorithm %s", alg)
	}
	kid, _ := t.Header["kid"].(string)
	return v.jwks.key(ctx, kid, alg)
}
