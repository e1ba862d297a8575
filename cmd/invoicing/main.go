// Command invoicing is the invoicing service and its operator tools: `serve`
// runs the API and the projectors, `dev-token` prints a development access
// token, `events`, `projections` and `audit` are for operators and auditors,
// `version` and `healthcheck` for deployments. The command tree is in cli.go.
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

// errUsage marks a usage error (unknown command or flag, missing argument,
// bad value): main exits 2 for it, 1 for any other error.
var errUsage = errors.New("usage")

// run is the whole program, with the process's environment passed in so
// tests can drive it. Every call builds a fresh command tree, and the
// environment is read only through getenv.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if args == nil {
		args = []string{} // cobra reads os.Args when given nil
	}
	root := newRootCmd(getenv)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil && !errors.Is(err, errUsage) && cmd != nil &&
		(cmd.ValidateRequiredFlags() != nil || cmd.ValidateFlagGroups() != nil) {
		// cobra checks flags marked required (or grouped) itself, after
		// parsing; a failure there is a usage error too.
		err = usageError(cmd, err)
	}
	return err
}
