// Package webhook delivers the account's public events to the HTTPS
// endpoints it registers, by the Standard Webhooks specification
// (https://www.standardwebhooks.com): each delivery signed with the
// endpoint's secret, retried until it succeeds or expires, never sent to
// an address inside the service's own networks.
//
// This file's siblings: secret.go derives the signing secrets, sign.go
// signs, guard.go keeps deliveries away from private networks.
// dispatcher.go follows the log (one leader, like a projection) and
// enqueues a delivery per public event and endpoint, with its checkpoint
// (checkpoint.go); sender.go runs every instance's workers, which claim due
// deliveries (claim.go: in order per endpoint and resource, a share per
// endpoint), send and record them (attempt.go) and disable dead endpoints
// (health.go); deliveries.go is the delivery log the API reads. The tables
// are webhook/migrations'.
package webhook
