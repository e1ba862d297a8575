package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// MaxURLLength is the longest endpoint URL.
const MaxURLLength = 2048

// URLError says why an endpoint URL is refused; its message is for the
// client (422 at url).
type URLError struct {
	Reason string
}

func (e *URLError) Error() string { return "webhook: " + e.Reason }

// ErrForbiddenAddress means a delivery would reach an address inside the
// service's networks (loopback, private, link-local, ...).
var ErrForbiddenAddress = errors.New("webhook: the address is in a network deliveries may not reach")

// Resolver resolves host names; *net.Resolver is one, tests fake it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard keeps deliveries to the public internet: https only, and no
// address that would let an account reach the service's own networks or
// the cloud's metadata service through a webhook (server-side request
// forgery). It checks an address after resolving it, at registration and
// again on every connection (DialContext), so a name that resolves
// elsewhere later is refused then. AllowPrivate (on-premises, tests) lifts
// both rules: plain http and any address.
type Guard struct {
	AllowPrivate bool
	Resolver     Resolver
	// Dialer dials the address the guard checked; the zero value is fine.
	Dialer net.Dialer
}

// CheckURL checks an endpoint URL as registered: absolute, https (or http
// when private networks are allowed), with a host, no user info, and every
// address the host resolves to allowed.
func (g *Guard) CheckURL(ctx context.Context, raw string) error {
	u, err := parseEndpointURL(raw, g.AllowPrivate)
	if err != nil {
		return err
	}
	if g.AllowPrivate {
		return nil
	}
	addrs, err := g.resolve(ctx, u.Hostname())
	if err != nil {
		return &URLError{Reason: fmt.Sprintf("the host %q does not resolve", u.Hostname())}
	}
	for _, a := range addrs {
		if Forbidden(a) {
			return &URLError{Reason: fmt.Sprintf("the host %q resolves to %s, in a network deliveries may not reach (loopback, private, link-local, ...)", u.Hostname(), a)}
		}
	}
	return nil
}

func parseEndpointURL(raw string, allowHTTP bool) (*url.URL, error) {
	if len(raw) > MaxURLLength {
		return nil, &URLError{Reason: fmt.Sprintf("the URL is longer than %d characters", MaxURLLength)}
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || u.Opaque != "":
		return nil, &URLError{Reason: "must be an absolute URL"}
	case u.Scheme != "https" && !(allowHTTP && u.Scheme == "http"):
		return nil, &URLError{Reason: "must be an https URL"}
	case u.Hostname() == "":
		return nil, &URLError{Reason: "must name a host"}
	case u.User != nil:
		return nil, &URLError{Reason: "must not hold a user name or password"}
	case u.Fragment != "":
		return nil, &URLError{Reason: "must not have a fragment"}
	}
	return u, nil
}

// resolve is the host's addresses: itself when it is an IP literal.
func (g *Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{a}, nil
	}
	r := g.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err == nil && len(addrs) == 0 {
		err = fmt.Errorf("no address for %s", host)
	}
	return addrs, err
}

// DialContext is the delivery client's dialer: it resolves the host,
// refuses it when any address is forbidden, and dials the first address
// it checked, so that what is checked is what is reached.
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("webhook: resolve %s: %w", host, err)
	}
	if !g.AllowPrivate {
		for _, a := range addrs {
			if Forbidden(a) {
				return nil, fmt.Errorf("%w: %s resolves to %s", ErrForbiddenAddress, host, a)
			}
		}
	}
	return g.Dialer.DialContext(ctx, network, net.JoinHostPort(addrs[0].Unmap().String(), port))
}

// forbiddenPrefixes are the networks beyond the ones netip classifies:
// "this network", carrier-grade NAT, IETF protocol assignments, the
// documentation and benchmarking ranges, and the IPv6 translation and
// discard prefixes (whose embedded addresses may be anything).
var forbiddenPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("2002::/16"),
}

// Forbidden reports whether a delivery may not reach a: loopback, private
// (RFC 1918, fc00::/7), link-local (169.254.0.0/16 with the cloud metadata
// address, fe80::/10), unspecified, multicast, broadcast, or one of
// forbiddenPrefixes; an IPv4-mapped IPv6 address counts as its IPv4.
func Forbidden(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsUnspecified() || a.IsMulticast() ||
		a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() {
		return true
	}
	for _, p := range forbiddenPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
