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
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/projections"
)

// newProjectionsCmd is the `invoicing projections` group.
func newProjectionsCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "projections",
		Short: "Show, rebuild and retry the read-model projections",
	}
	cmd.AddCommand(newProjectionsStatusCmd(c), newProjectionsRebuildCmd(c), newProjectionsRetryCmd(c))
	return cmd
}

func newProjectionsStatusCmd(c *cli) *cobra.Command {
	var output *outputFormat
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show versions, checkpoints, lag and quarantined events",
		Long: `status shows each projection's code version, tables version, checkpoint, lag
in events and seconds, any unfinished rebuild and how many events it
quarantined, then lists the quarantined events.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withDatabases(cmd.Context(), c.getenv, func(pool *pgxpool.Pool, store events.Store) error {
				return printStatus(cmd.Context(), pool, store, *output, cmd.OutOrStdout())
			})
		},
	}
	output = addOutputFlag(cmd)
	return cmd
}

func newProjectionsRebuildCmd(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "rebuild [NAME]...",
		Short: "Rebuild projections beside the live tables and swap them in",
		Long: `rebuild replays every event into a shadow schema, catches up, then swaps the
tables in one short transaction; the API answers from the old tables until
then. An interrupted rebuild resumes. Without names it rebuilds every
projection. Progress goes to standard error.`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: completeProjectionNames,
		RunE: onSelectedProjections(c, func(cmd *cobra.Command, pool *pgxpool.Pool, store events.Store, selected []projections.Projection) error {
			return rebuild(cmd.Context(), pool, store, selected, cmd.ErrOrStderr())
		}),
	}
}

// onSelectedProjections runs act on the projections named by the
// arguments (all when none), with the databases open; an unknown name is a
// usage error.
func onSelectedProjections(c *cli, act func(*cobra.Command, *pgxpool.Pool, events.Store, []projections.Projection) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		selected, err := selectProjections(args)
		if err != nil {
			return usageError(cmd, err)
		}
		return withDatabases(cmd.Context(), c.getenv, func(pool *pgxpool.Pool, store events.Store) error {
			return act(cmd, pool, store, selected)
		})
	}
}

func newProjectionsRetryCmd(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "retry [NAME]...",
		Short: "Apply quarantined events again (exit 1 while some still fail)",
		Long: `retry applies the projections' quarantined events again, after the cause is
fixed. Per stream it goes in order and stops at the first event that still
fails. It prints what it applied and what is still quarantined, and exits 1
while anything is. Without names it retries every projection.`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: completeProjectionNames,
		RunE: onSelectedProjections(c, func(cmd *cobra.Command, pool *pgxpool.Pool, store events.Store, selected []projections.Projection) error {
			return retryQuarantined(cmd.Context(), pool, store, selected, cmd.OutOrStdout())
		}),
	}
}

// completeProjectionNames completes the projection names not yet given.
func completeProjectionNames(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var names []cobra.Completion
	for _, p := range projections.All() {
		if !slices.Contains(args, p.Name()) {
			names = append(names, p.Name())
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
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
			return nil, fmt.Errorf("no projection named %q", name)
		}
	}
	return out, nil
}

// statusJSON is `projections status --output json`: one object, its arrays
// always present (empty, never null). docs/operations.md documents it; keep it
// backward compatible (add fields, never rename or remove them).
type statusJSON struct {
	Projections       []projectionStatusJSON `json:"projections"`
	QuarantinedEvents []quarantinedEventJSON `json:"quarantined_events"`
}

type projectionStatusJSON struct {
	Name          string  `json:"name"`
	CodeVersion   int     `json:"code_version"`
	TablesVersion int     `json:"tables_version"` // 0: the tables were never created
	Checkpoint    string  `json:"checkpoint"`     // an event position, as events export prints it
	LagEvents     int64   `json:"lag_events"`
	LagSeconds    float64 `json:"lag_seconds"`
	// RebuildCheckpoint is an unfinished rebuild's position, else null.
	RebuildCheckpoint *string `json:"rebuild_checkpoint"`
	Quarantined       int64   `json:"quarantined"`
}

type quarantinedEventJSON struct {
	Projection string `json:"projection"`
	Position   string `json:"position"`
	EventID    string `json:"event_id"`
	Type       string `json:"type"`
	Stream     string `json:"stream"`
	Revision   uint64 `json:"revision"`
	Since      string `json:"since"` // RFC 3339, UTC
	Error      string `json:"error"`
}

func printStatus(ctx context.Context, pool *pgxpool.Pool, store events.Store, format outputFormat, w io.Writer) error {
	statuses, err := projections.Statuses(ctx, pool, store, projections.All(), time.Now())
	if err != nil {
		return err
	}
	quarantined, err := projections.QuarantinedEvents(ctx, pool, projections.All())
	if err != nil {
		return err
	}
	if format == outputJSON {
		doc := statusJSON{Projections: []projectionStatusJSON{}, QuarantinedEvents: []quarantinedEventJSON{}}
		for _, s := range statuses {
			ps := projectionStatusJSON{
				Name: s.Name, CodeVersion: s.CodeVersion, TablesVersion: s.LiveVersion, Checkpoint: s.Checkpoint.String(),
				LagEvents: s.LagEvents, LagSeconds: s.LagAge.Seconds(), Quarantined: s.Quarantined,
			}
			if s.Building != nil {
				at := s.Building.String()
				ps.RebuildCheckpoint = &at
			}
			doc.Projections = append(doc.Projections, ps)
		}
		for _, qe := range quarantined {
			doc.QuarantinedEvents = append(doc.QuarantinedEvents, quarantinedEventJSON{
				Projection: qe.Projection, Position: qe.Position.String(), EventID: uuid.UUID(qe.EventID).String(),
				Type: qe.Type, Stream: qe.Stream, Revision: qe.Revision,
				Since: qe.At.UTC().Format(time.RFC3339Nano), Error: qe.Error,
			})
		}
		return writeJSON(w, doc)
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
	if len(quarantined) == 0 {
		return nil
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

// RebuildLanes is how many projections a rebuild of several builds at
// once. A rebuild is a chain of batches, each read, then built, then
// written and committed, so one projection at a time left much of the
// machine idle: at 300,000 invoices the invoices projection took half of
// the whole, the others the rest one after the other.
const RebuildLanes = 2

// rebuild rebuilds projs, RebuildLanes at a time, each with its own
// progress; the first that fails stops those not yet started, and its
// error is returned (each rebuild resumes where it stopped).
func rebuild(ctx context.Context, pool *pgxpool.Pool, store events.Store, projs []projections.Projection, out io.Writer) error {
	var total int64 = -1
	if c, ok := store.(counter); ok {
		if n, err := c.CountAfter(ctx, events.Position{}); err == nil {
			total = n
		}
	}
	// One bar redrawn in place when one projection runs at a time; lines
	// otherwise, written whole.
	terminal := isTerminal(out) && len(projs) == 1
	out = &lockedWriter{w: out}
	var (
		lanes  errgroup.Group
		failed atomic.Bool
	)
	lanes.SetLimit(RebuildLanes)
	for _, p := range projs {
		lanes.Go(func() error {
			if failed.Load() {
				return nil // not started: stopped by an earlier failure
			}
			err := rebuildOne(ctx, pool, store, p, out, terminal, total)
			if err != nil {
				failed.Store(true)
			}
			return err
		})
	}
	return lanes.Wait()
}

// rebuildOne rebuilds p under its rebuild lock, with a progress bar.
func rebuildOne(ctx context.Context, pool *pgxpool.Pool, store events.Store, p projections.Projection, out io.Writer, terminal bool, total int64) error {
	bar := newProgressBar(out, terminal, total)
	r := &projections.Rebuilder{Store: store, Pool: pool, Logger: slog.New(slog.NewTextHandler(out, nil)), OnBatch: bar.update}
	err := projections.WithRebuildLock(ctx, pool, p, func() error { return r.Rebuild(ctx, p) })
	bar.done(p.Name(), err)
	if err != nil {
		return fmt.Errorf("rebuild %s: %w", p.Name(), err)
	}
	return nil
}

// lockedWriter writes whole lines of several goroutines one at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
