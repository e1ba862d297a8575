package auth

import (
	"slices"
	"sync"
	"time"
)

// A verified token is remembered, so that a client sending the same token
// with every request has its signature and claims checked once a minute,
// not once a request: parsing and verifying were the largest share of a
// GET's CPU after the database (issue 10).
const (
	// verifiedTTL bounds how long a verified token is trusted without
	// being checked again: a key removed from the JWKS stops working
	// within it.
	verifiedTTL = time.Minute
	// verifiedMax bounds the tokens remembered; when full, the cache
	// starts over.
	verifiedMax = 10_000
)

// verifiedTokens maps a token, byte for byte, to its principal. Only
// tokens that verified and name an account enter it, so a flood of bad
// tokens costs what it cost before and cannot push good ones out.
type verifiedTokens struct {
	mu      sync.Mutex
	entries map[string]verifiedToken
}

type verifiedToken struct {
	principal Principal
	until     time.Time // the token is trusted before this instant
}

// get returns the principal of a token verified earlier that is still
// trusted at now.
func (c *verifiedTokens) get(token string, now time.Time) (Principal, bool) {
	c.mu.Lock()
	e, ok := c.entries[token]
	c.mu.Unlock()
	if !ok || !now.Before(e.until) {
		return Principal{}, false
	}
	p := e.principal
	p.Scopes = slices.Clone(p.Scopes) // the caller's to keep
	return p, true
}

// put remembers a verified token until the earlier of now + verifiedTTL
// and its expiry as the parser judges it (exp plus the leeway).
func (c *verifiedTokens) put(token string, p Principal, expires, now time.Time) {
	until := now.Add(verifiedTTL)
	if exp := expires.Add(leeway); exp.Before(until) {
		until = exp
	}
	p.Scopes = slices.Clone(p.Scopes)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= verifiedMax {
		c.entries = map[string]verifiedToken{}
	}
	c.entries[token] = verifiedToken{principal: p, until: until}
}
