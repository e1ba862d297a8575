// Command invoicing is the invoicing service: `serve` runs the API and the
// projectors, `dev-token` prints a development access token.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "invoicing:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

const usage = `usage: invoicing <command> [flags]

commands:
  serve       apply migrations, run the HTTP API and the projectors
  dev-token   print a development access token signed with AUTH_HS256_SECRET
  events      read --stream NAME | export [--from POSITION] [--type T]... [--account ID] [--follow]
              print events as JSON lines, in global order
  projections status | rebuild [NAME]... | retry [NAME]...
              show versions, checkpoints, lag and quarantined events; rebuild beside
              the live tables and swap; apply quarantined events again (exit 1 if
              some still fail)
  audit       verify: replay every event into a scratch copy and compare with the read models
`

// run is the whole program, with the process's environment passed in so
// tests can drive it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("%w: no command given", errUsage)
	}
	switch args[0] {
	case "serve":
		cfg, err := loadConfig(getenv)
		if err != nil {
			return err
		}
		return serve(ctx, cfg, stderr)
	case "dev-token":
		return devToken(args[1:], getenv, stdout, stderr)
	case "events":
		return eventsCommand(ctx, args[1:], getenv, stdout, stderr)
	case "projections":
		return projectionsCommand(ctx, args[1:], getenv, stdout, stderr)
	case "audit":
		return auditCommand(ctx, args[1:], getenv, stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
}
