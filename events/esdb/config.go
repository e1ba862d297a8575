package esdb

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
)

// defaultDeadline bounds each non-streaming call (append, read-back) when the
// connection string sets no defaultDeadline. The caller's context may end
// it sooner.
const defaultDeadline = 10 * time.Second

// knownSetting reports whether client v4.2.0 reads a connection-string
// setting (lower-cased, as it compares them). Anything else is refused here:
// the client would only print "Unknown setting" to the console and carry on.
func knownSetting(key string) bool {
	switch key {
	case "discoveryinterval", "gossiptimeout", "maxdiscoverattempts", "nodepreference",
		"keepaliveinterval", "keepalivetimeout", "tls", "tlscafile", "usercertfile",
		"userkeyfile", "tlsverifycert", "defaultdeadline":
		return true
	}
	return false
}

// parseURL turns a connection string into the client's configuration,
// refusing what the client would silently get wrong.
func parseURL(raw string) (*esdb.Configuration, error) {
	rewritten, err := rewriteScheme(raw)
	if err == nil {
		err = checkSettings(rewritten)
	}
	if err != nil {
		return nil, fmt.Errorf("esdb: connection string %s: %w", redact(raw), err)
	}
	cfg, err := esdb.ParseConnectionString(rewritten)
	if err != nil {
		return nil, fmt.Errorf("esdb: connection string %s: %w", redact(raw), err)
	}
	if cfg.DefaultDeadline == nil {
		d := defaultDeadline
		cfg.DefaultDeadline = &d
	}
	return cfg, nil
}

// schemes maps every connection-string scheme Open accepts (lower-cased)
// to the one client v4.2.0 parses: KurrentDB's names, which the server's
// newer documentation uses, are aliases of EventStoreDB's.
var schemes = map[string]string{
	"esdb":               "esdb",
	"kurrent":            "esdb",
	"kurrentdb":          "esdb",
	"esdb+discover":      "esdb+discover",
	"kurrent+discover":   "esdb+discover",
	"kurrentdb+discover": "esdb+discover",
}

// IsConnectionString reports whether s has a scheme Open accepts: esdb,
// kurrent or kurrentdb, each also with +discover, in any case. It looks at
// the scheme only, so that configuration can tell an event store URL from,
// say, a PostgreSQL one; Open reports whatever else is wrong with s.
func IsConnectionString(s string) bool {
	scheme, _, ok := strings.Cut(strings.TrimSpace(s), "://")
	_, known := schemes[strings.ToLower(scheme)]
	return ok && known
}

// rewriteScheme maps an accepted scheme to the one the client parses.
func rewriteScheme(raw string) (string, error) {
	scheme, rest, ok := strings.Cut(strings.TrimSpace(raw), "://")
	if !ok {
		return "", fmt.Errorf("no scheme; want esdb://host:2113?tls=false")
	}
	if to, ok := schemes[strings.ToLower(scheme)]; ok {
		return to + "://" + rest, nil
	}
	return "", fmt.Errorf("scheme %q: want esdb://, esdb+discover://, kurrentdb:// or kurrentdb+discover://", scheme)
}

// checkSettings refuses unknown settings and the values the client would
// misread without a word: an unparsable defaultDeadline becomes 0 s, and a
// keepAliveInterval under 10 s is raised to 10 s by gRPC after a console
// warning.
func checkSettings(s string) error {
	_, query, _ := strings.Cut(s, "?")
	values, err := url.ParseQuery(query)
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	for key, vs := range values {
		k := strings.ToLower(key)
		if !knownSetting(k) {
			return fmt.Errorf("unknown setting %q", key)
		}
		if len(vs) == 0 {
			continue
		}
		switch n, err := strconv.Atoi(vs[0]); k {
		case "defaultdeadline":
			if err != nil || n < 1 {
				return fmt.Errorf("defaultDeadline %q: want a positive number of milliseconds", vs[0])
			}
		case "keepaliveinterval":
			if err != nil || n < -1 || n >= 0 && n < 10_000 {
				return fmt.Errorf("keepAliveInterval %q: want -1 (off) or at least 10000 ms", vs[0])
			}
		}
	}
	return nil
}

// redact hides credentials in a connection string before it goes into an
// error or a log.
func redact(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return "(no scheme)"
	}
	end := len(rest)
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		end = i
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		rest = "***@" + rest[at+1:]
	}
	return scheme + "://" + rest
}

// describe names the server or cluster a configuration points at, for
// messages.
func describe(cfg *esdb.Configuration) string {
	if len(cfg.GossipSeeds) == 0 {
		return cfg.Address
	}
	seeds := make([]string, len(cfg.GossipSeeds))
	for i, s := range cfg.GossipSeeds {
		seeds[i] = s.String()
	}
	return strings.Join(seeds, ",")
}
