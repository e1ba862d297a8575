package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// defaultHTTPAddr is serve's listen address when HTTP_ADDR is unset (as in
// loadConfig).
const defaultHTTPAddr = ":8080"

// readyzURL is the /readyz URL of a server listening on addr (HTTP_ADDR):
// a wildcard or empty host is reached on the loopback address.
func readyzURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = addr, "80"
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz"
}

// newHealthcheckCmd is `invoicing healthcheck`, for container health checks
// where there is no curl (the image is distroless).
func newHealthcheckCmd(c *cli) *cobra.Command {
	var (
		target  string
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "healthcheck",
		Short: "Exit 0 if the server's /readyz answers 200, else 1",
		Long: `healthcheck asks a running server whether it is ready (GET /readyz: the
database, the event store and the projectors are healthy) and exits 0 on
200 OK, 1 on anything else or no answer within --timeout. For Docker's
HEALTHCHECK, where the image has no curl.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			u, err := url.Parse(target)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return usageErrorf(cmd, "--url %q: want an http:// or https:// URL", target)
			}
			if timeout <= 0 {
				return usageErrorf(cmd, "--timeout %s: want a positive duration", timeout)
			}
			return healthcheck(cmd.Context(), target, timeout, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&target, "url", readyzURL(or(c.getenv("HTTP_ADDR"), defaultHTTPAddr)), "the readiness URL to ask; the default follows HTTP_ADDR")
	f.DurationVar(&timeout, "timeout", 3*time.Second, "give up after this long")
	return cmd
}

func healthcheck(ctx context.Context, target string, timeout time.Duration, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 512))
	summary := strings.Join(strings.Fields(string(body)), " ")
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s: %s %s", target, res.Status, summary)
	}
	fmt.Fprintf(out, "%s: %s %s\n", target, res.Status, summary)
	return nil
}
