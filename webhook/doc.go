// Package webhook delivers the account's public events to the HTTPS
// endpoints it registers, by the Standard Webhooks specification
// (https://www.standardwebhooks.com): each delivery signed with the
// endpoint's secret, retried until it succeeds or expires, never sent to
// an address inside the service's own networks.
//
// This file's siblings: secret.go derives the signing secrets, sign.go
// signs, guard.go keeps deliveries away from private networks.
package webhook
