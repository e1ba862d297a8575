package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// outcome is what one attempt found.
type outcome struct {
	at      time.Time
	status  int // 0: no answer
	latency time.Duration
	err     string
	gone    bool // the endpoint no longer takes deliveries
}

func (o outcome) ok() bool { return o.status >= 200 && o.status < 300 }

// attempt sends one claimed delivery and records what happened. An
// attempt cut off by shutdown is not recorded: its lease is given back
// and another sender (or this one after its restart) sends it again. Nor
// is one that failed before anything was sent (the store, the read
// models, rendering): that is no fault of the receiver, so it neither
// uses up the delivery's retries nor counts against the endpoint's health,
// and its cause, which names the service's insides, is logged for the
// operators rather than shown in the delivery log.
func (s *Sender) attempt(ctx context.Context, c claimed) {
	req, err := s.request(ctx, c)
	var out outcome
	switch {
	case errors.Is(err, errEndpointGone):
		out = outcome{at: s.opts.Now(), err: err.Error(), gone: true}
	case err != nil && ctx.Err() == nil:
		s.logger.Error("prepare a delivery; it is tried again", "delivery", c.id, "error", err)
		s.postpone(c, s.opts.BackoffMin)
		return
	case err == nil:
		out = s.send(req)
	}
	if ctx.Err() != nil {
		s.release(c)
		return
	}
	if err := s.record(c, out); err != nil {
		s.logger.Error("record a delivery attempt", "delivery", c.id, "error", err)
		s.release(c)
	}
}

// request builds the signed request of one attempt: the endpoint's
// current URL and secrets, the public event as body, a fresh timestamp,
// and the event's id as webhook-id on every attempt (receivers drop
// duplicates by it).
func (s *Sender) request(ctx context.Context, c claimed) (*http.Request, error) {
	ep, err := s.endpoint(ctx, c)
	if err != nil {
		return nil, err
	}
	evs, err := s.store.ReadStream(ctx, c.stream)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", c.stream, err)
	}
	body, err := s.render(evs, c.revision)
	if err != nil {
		return nil, fmt.Errorf("render event %s: %w", c.eventID, err)
	}
	now := s.opts.Now()
	sig, err := Signature(ep.Secrets, c.eventID, now, body)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("request to the endpoint's URL: %w", err)
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set("user-agent", "invoicing-webhooks/1")
	req.Header.Set(HeaderID, c.eventID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(HeaderSignature, sig)
	return req, nil
}

// endpoint finds the delivery's endpoint among its account's live ones.
func (s *Sender) endpoint(ctx context.Context, c claimed) (Endpoint, error) {
	eps, err := s.endpoints.For(ctx, c.accountID)
	if err != nil {
		return Endpoint{}, fmt.Errorf("endpoints of the account: %w", err)
	}
	for _, ep := range eps {
		if ep.ID == c.endpointID {
			return ep, nil
		}
	}
	return Endpoint{}, errEndpointGone
}

// send posts req; a 2xx within the timeout is success, anything else a
// failure with the status (if one came) and why.
func (s *Sender) send(req *http.Request) outcome {
	start := s.opts.Now()
	resp, err := s.client.Do(req)
	out := outcome{at: start}
	if err != nil {
		out.latency, out.err = time.Since(start), errorText(err)
		return out
	}
	// Drained (up to a bound) so the connection is reused; the body itself
	// is the receiver's business.
	_, copyErr := io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	closeErr := resp.Body.Close()
	out.latency, out.status = time.Since(start), resp.StatusCode
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		out.err = "the endpoint redirected; redirects are not followed"
	case out.ok() && (copyErr != nil || closeErr != nil):
		out.status, out.err = 0, errorText(errors.Join(copyErr, closeErr)) // the answer did not arrive in time
	}
	return out
}

// record writes an attempt and its delivery's new state in one
// transaction, then counts it and checks whether the endpoint has been
// dead long enough to disable.
func (s *Sender) record(c claimed, out outcome) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	result := s.result(c, out)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := insertAttempt(ctx, tx, c, out); err != nil {
			return err
		}
		if err := s.updateDelivery(ctx, tx, c, out, result); err != nil {
			return err
		}
		if out.gone { // the owner's doing, not the receiver's
			return nil
		}
		return updateHealth(ctx, tx, c, out, result)
	})
	if err != nil {
		return fmt.Errorf("delivery %s: %w", c.id, err)
	}
	if s.opts.Observe != nil {
		s.opts.Observe(result)
	}
	if result == ResultSucceeded || out.gone {
		return nil
	}
	// The attempt is recorded; a failure to disable is retried with the
	// next failed attempt.
	if err := s.disableIfDead(ctx, c); err != nil {
		s.logger.Error("disable a dead endpoint", "endpoint", c.endpointID, "error", err)
	}
	return nil
}

// result classifies an attempt: a success, a failure with a retry to
// come, or the last failure (expired, or the endpoint gone).
func (s *Sender) result(c claimed, out outcome) string {
	switch {
	case out.ok():
		return ResultSucceeded
	case out.gone || !out.at.Before(c.expiresAt):
		return ResultFailed
	}
	return ResultRetried
}

func insertAttempt(ctx context.Context, tx pgx.Tx, c claimed, out outcome) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO webhook_attempts (delivery_id, n, at, status, latency_ms, error)
		VALUES ($1, $2, $3, nullif($4, 0), $5, nullif($6, ''))`,
		c.id, c.attempts+1, out.at, out.status, out.latency.Milliseconds(), out.err)
	if err != nil {
		return fmt.Errorf("insert attempt: %w", err)
	}
	return nil
}

func (s *Sender) updateDelivery(ctx context.Context, tx pgx.Tx, c claimed, out outcome, result string) error {
	status, next := "pending", out.at.Add(s.backoff(c.attempts+1))
	switch result {
	case ResultSucceeded:
		status, next = "succeeded", out.at
	case ResultFailed:
		status, next = "failed", out.at
	}
	_, err := tx.Exec(ctx, `
		UPDATE webhook_deliveries SET status = $2, attempts = attempts + 1, next_attempt_at = $3,
			lease_until = NULL, last_attempt_at = $4, last_status = nullif($5, 0), last_error = nullif($6, '')
		WHERE id = $1`,
		c.id, status, next, out.at, out.status, out.err)
	if err != nil {
		return fmt.Errorf("update delivery: %w", err)
	}
	return nil
}
