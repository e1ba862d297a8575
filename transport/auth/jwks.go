package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// refetchInterval limits JWKS fetches: an unknown kid triggers a refetch
// (the issuer may have rotated keys), but a flood of tokens with made-up
// kids must not turn this service into a load generator for the issuer.
const refetchInterval = time.Minute

// maxJWKSBytes caps the key set response; real sets are a few kilobytes.
const maxJWKSBytes = 1 << 20

// errUnknownKey means the set holds no key for the token, the one case
// where fetching the set again can help.
var errUnknownKey = errors.New("no key in the key set")

// keySet caches the keys of a JWKS endpoint. It fetches lazily, on the first
// token that needs it, and again on an unknown kid, but attempts (failed ones
// included) at most once per refetchInterval.
type keySet struct {
	url    string
	client *http.Client
	now    func() time.Time

	mu          sync.Mutex
	keys        []jwk      // the last set fetched successfully
	attempted   bool       // whether any fetch was started
	lastAttempt time.Time  // when the last fetch started
	inflight    *fetchCall // the fetch in progress, if any
}

// fetchCall lets concurrent requests that need a fetch share one.
type fetchCall struct {
	done chan struct{} // closed when err is set
	err  error
}

func newKeySet(url string, client *http.Client, now func() time.Time) *keySet {
	return &keySet{url: url, client: client, now: now}
}

// key returns the key that verifies a token with this kid and alg. The lock
// is not held during the fetch, so tokens with known keys are verified while
// a slow issuer is being asked for new ones.
func (s *keySet) key(ctx context.Context, kid, alg string) (any, error) {
	s.mu.Lock()
	key, err := s.lookup(kid, alg)
	if !errors.Is(err, errUnknownKey) {
		s.mu.Unlock()
		return key, err
	}
	call, leader := s.joinFetch()
	s.mu.Unlock()
	if call == nil {
		return nil, fmt.Errorf("%w; the set was fetched less than %v ago", err, refetchInterval)
	}
	if leader {
		s.fetch(ctx, call)
	}
	select {
	case <-call.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the key set: %w", ctx.Err())
	}
	if call.err != nil {
		return nil, call.err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lookup(kid, alg)
}

// joinFetch returns the fetch in progress, or starts one (leader true) when
// the rate limit allows, or returns nil. s.mu must be held.
func (s *keySet) joinFetch() (call *fetchCall, leader bool) {
	if s.inflight != nil {
		return s.inflight, false
	}
	now := s.now()
	if s.attempted && now.Sub(s.lastAttempt) < refetchInterval {
		return nil, false
	}
	s.attempted, s.lastAttempt = true, now
	s.inflight = &fetchCall{done: make(chan struct{})}
	return s.inflight, true
}

// fetch runs call and publishes its result. The fetched set serves every
// request, so it runs without the leader's cancellation (one client hanging
// up must not waste the minute's fetch for everybody), bounded by its own
// timeout instead.
func (s *keySet) fetch(ctx context.Context, call *fetchCall) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	defer cancel()
	keys, err := s.download(ctx)
	s.mu.Lock()
	if err == nil {
		s.keys = keys
	}
	s.inflight = nil
	call.err = err
	s.mu.Unlock()
	close(call.done)
}

// lookup finds the key for kid and alg. A token without kid may use the only
// key of its algorithm's type; several such keys are ambiguous, and a known
// kid of the wrong type is refused without a refetch, since a new fetch
// would not change what that kid is. s.mu must be held.
func (s *keySet) lookup(kid, alg string) (any, error) {
	if kid != "" {
		for _, k := range s.keys {
			if k.kid != kid {
				continue
			}
			if !k.fits(alg) {
				return nil, fmt.Errorf("key %q cannot verify %s", kid, alg)
			}
			return k.key, nil
		}
		return nil, fmt.Errorf("%w for kid %q", errUnknownKey, kid)
	}
	var found *jwk
	for i := range s.keys {
		if !s.keys[i].fits(alg) {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("the token has no kid and the key set has several %s keys", alg)
		}
		found = &s.keys[i]
	}
	if found == nil {
		return nil, fmt.Errorf("%w for %s without kid", errUnknownKey, alg)
	}
	return found.key, nil
}

// download fetches and parses the key set. Keys this package cannot use
// (other curves, encryption keys, malformed entries) are skipped so that one
// odd key does not disable the others; a set with no usable key at all is
// an error, which keeps the previous keys in service.
func (s *keySet) download(ctx context.Context) ([]jwk, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, fmt.Errorf("fetching the key set: %w", err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	res, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching the key set: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching the key set: %s", res.Status)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, maxJWKSBytes)).Decode(&set); err != nil {
		return nil, fmt.Errorf("decoding the key set: %w", err)
	}
	var keys []jwk
	for _, raw := range set.Keys {
		if k, err := parseJWK(raw); err == nil {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("the key set at %s has no usable key", s.url)
	}
	return keys, nil
}
