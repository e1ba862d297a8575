package webhook

import (
	"context"
	"errors"
	"net/netip"
	"testing"
)

// fakeResolver answers from a table, as a DNS server would.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, s := range f[host] {
		out = append(out, netip.MustParseAddr(s))
	}
	if out == nil {
		return nil, errors.New("no such host")
	}
	return out, nil
}

func TestTheGuardRefusesEveryNetworkADeliveryMayNotReach(t *testing.T) {
	dns := fakeResolver{
		"hooks.example.com":  {"93.184.216.34"},
		"local.example.com":  {"127.0.0.1"},
		"ten.example.com":    {"10.1.2.3"},
		"meta.example.com":   {"169.254.169.254"},
		"six.example.com":    {"::1"},
		"mixed.example.com":  {"93.184.216.34", "192.168.1.1"},
		"mapped.example.com": {"::ffff:10.0.0.1"},
		"cgnat.example.com":  {"100.64.0.1"},
		"ula.example.com":    {"fd00::1"},
	}
	for _, tc := range []struct {
		url     string
		private bool // allowed when private networks are
		ok      bool
	}{
		{"https://hooks.example.com/in", true, true},
		{"https://local.example.com/in", true, false},
		{"https://ten.example.com/in", true, false},
		{"https://meta.example.com/latest/meta-data", true, false},
		{"https://six.example.com/in", true, false},
		{"https://mixed.example.com/in", true, false},
		{"https://mapped.example.com/in", true, false},
		{"https://cgnat.example.com/in", true, false},
		{"https://ula.example.com/in", true, false},
		{"https://127.0.0.1/in", true, false},
		{"https://[::1]:8443/in", true, false},
		{"https://169.254.169.254/", true, false},
		{"https://0.0.0.0/", true, false},
		{"http://hooks.example.com/in", true, false},
		{"https://nowhere.example.com/in", true, false},
		{"ftp://hooks.example.com/in", false, false},
		{"https://user:pw@hooks.example.com/in", false, false},
		{"/relative", false, false},
	} {
		t.Run(tc.url, func(t *testing.T) {
			strict := &Guard{Resolver: dns}
			var urlErr *URLError
			if err := strict.CheckURL(context.Background(), tc.url); (err == nil) != tc.ok || err != nil && !errors.As(err, &urlErr) {
				t.Errorf("CheckURL = %v, want ok %v", err, tc.ok)
			}
			lax := &Guard{Resolver: dns, AllowPrivate: true}
			if err := lax.CheckURL(context.Background(), tc.url); (err == nil) != (tc.ok || tc.private) {
				t.Errorf("with private networks allowed: %v, want ok %v", err, tc.ok || tc.private)
			}
		})
	}
}

// The dialer checks again: a name that resolved to a public address at
// registration and to a private one now is refused now.
func TestTheDialerChecksTheAddressItDials(t *testing.T) {
	g := &Guard{Resolver: fakeResolver{"hooks.example.com": {"10.0.0.7"}}}
	if _, err := g.DialContext(context.Background(), "tcp", "hooks.example.com:443"); !errors.Is(err, ErrForbiddenAddress) {
		t.Fatalf("dial = %v, want ErrForbiddenAddress", err)
	}
}
