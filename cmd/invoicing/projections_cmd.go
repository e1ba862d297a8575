package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/projections"
)

const projectionsUsage = "projections status | projections rebuild [NAME]... | projections retry [NAME]..."

// projectionsCommand runs `invoicing projections status|rebuild|retry`.
func projectionsCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || !slices.Contains([]string{"status", "rebuild", "retry"}, args[0]) {
		return fmt.Errorf("%w: %s", errUsage, projectionsUsage)
	}
	selected, err := selectProjections(args[1:])
	if err != nil {
		return err
	}
	return withDatabases(ctx, getenv, func(pool *pgxpool.Pool, store events.Store) error {
		switch args[0] {
		case "status":
			return printStatus(ctx, pool, store, stdout)
		case "retry":
			return retryQuarantined(ctx, pool, store, selected, stdout)
		}
		return rebuild(ctx, pool, store, selected, stderr)
	})
}

func selectProjections(names []string) ([]projections.Projection, error) {
	all := projections.All()
	if len(names) == 0 {
		return all, nil
	}
	var out []projections.Projection
	for _, name := range names {
		found := false
		for _, p := range all {
			if p.Name() == name {
				out, found = append(out, p), true
			}
		}
		if !found {
			return nil, fmt.Errorf("%w: no projection named %q", errUsage, name)
		}
	}
	return out, nil
}

func printStatus(ctx context.Context, pool *pgxpool.Pool, store events.Store, w io.Writer) error {
	statuses, err := projections.Statuses(ctx, pool, store, projections.All(), time.Now())
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROJECTION\tCODE VERSION\tTABLES VERSION\tCHECKPOINT\tLAG EVENTS\tLAG SECONDS\tREBUILD\tQUARANTINED")
	for _, s := range statuses {
		building := "-"
		if s.Building != nil {
			building = "at " + s.Building.String()
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%.1f\t%s\t%d\n", s.Name, s.CodeVersion, s.LiveVersion, s.Checkpoint, s.LagEvents, s.LagAge.Seconds(), building, s.Quarantined)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	quarantined, err := projections.QuarantinedEvents(ctx, pool, projections.All())
	if err != nil || len(quarantined) == 0 {
		return err
	}
	fmt.Fprintln(w, "\nQuarantined events (the projections go on without them; fix the cause, then run `invoicing projections retry`):")
	return printQuarantined(w, quarantined, true)
}

// printQuarantined lists events, one a line; withError adds when each was
// quarantined and why.
func printQuarantined(w io.Writer, list []projections.QuarantinedEvent, withError bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := "PROJECTION\tPOSITION\tTYPE\tSTREAM\tREVISION"
	if withError {
		header += "\tSINCE\tERROR"
	}
	fmt.Fprintln(tw, header)
	for _, qe := range list {
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%d", qe.Projection, qe.Position, qe.Type, qe.Stream, qe.Revision)
		if withError {
			line += "\t" + qe.At.UTC().Format(time.RFC3339) + "\t" + strings.Join(strings.Fields(qe.Error), " ")
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// errStillQuarantined makes `projections retry` exit 1.
var errStillQuarantined = errors.New("events are still quarantined")

// retryQuarantined runs `invoicing projections retry`: it re-applies each
// projection's quarantined events and lists what it applied and what is
// still quarantined.
func retryQuarantined(ctx context.Context, pool *pgxpool.Pool, store events.Store, projs []projections.Projection, w io.Writer) error {
	var applied, remaining []projections.QuarantinedEvent
	for _, p := range projs {
		res, err := projections.RetryQuarantined(ctx, pool, store, p)
		applied, remaining = append(applied, res.Applied...), append(remaining, res.Remaining...)
		if err != nil {
			return fmt.Errorf("retry %s: %w", p.Name(), err)
		}
	}
	fmt.Fprintf(w, "%d applied, %d still quarantined\n", len(applied), len(remaining))
	if len(applied) > 0 {
		fmt.Fprintln(w, "\nApplied:")
		if err := printQuarantined(w, applied, false); err != nil {
			return err
		}
	}
	if len(remaining) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nStill quarantined:")
	if err := printQuarantined(w, remaining, true); err != nil {
		return err
	}
	return fmt.Errorf("%w: %d event(s); see the errors above", errStillQuarantined, len(remaining))
}

// counter is implemented by stores that can count events cheaply (the
// PostgreSQL store); with it, progress shows an ETA.
type counter interface {
	CountAfter(ctx context.Context, from events.Position) (int64, error)
}

func rebuild(ctx context.Context, pool *pgxpool.Pool, store events.Store, projs []projections.Projection, out io.Writer) error {
	var total int64 = -1
	if c, ok := store.(counter); ok {
		if n, err := c.CountAfter(ctx, events.Position{}); err == nil {
			total = n
		}
	}
	for _, p := range projs {
		bar := newProgressBar(out, isTerminal(out), total)
		r := &projections.Rebuilder{Store: store, Pool: pool, Logger: slog.New(slog.NewTextHandler(out, nil)), OnBatch: bar.update}
		err := projections.WithRebuildLock(ctx, pool, p, func() error { return r.Rebuild(ctx, p) })
		bar.done(p.Name(), err)
		if err != nil {
			return fmt.Errorf("rebuild %s: %w", p.Name(), err)
		}
	}
	return nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// auditCommand runs `invoicing audit verify`.
func auditCommand(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) != 1 || args[0] != "verify" {
		return fmt.Errorf("%w: audit verify", errUsage)
	}
	return withDatabases(ctx, getenv, func(pool *pgxpool.Pool, store events.Store) error {
		v := &projections.Verifier{Rebuilder: projections.Rebuilder{Store: store, Pool: pool, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}}
		findings, err := v.Verify(ctx, projections.All())
		if err != nil {
			return err
		}
		for _, f := range findings {
			fmt.Fprintln(stdout, "MISMATCH", f)
		}
		if len(findings) > 0 {
			return fmt.Errorf("audit: %d disagreement(s) between the events and the read models", len(findings))
		}
		fmt.Fprintln(stdout, "OK: every read-model row matches its events, and every invoice's amounts recompute from its lines")
		return nil
	})
}
