package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/invoicing/invoicing/audit"
	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/projections"
)

// writeEvents prints events as JSON lines (audit.ExportLine): everything
// an auditor needs, the position to resume after, and each event's audit
// chain link (seq and chain) when the sealer has recorded it.
func writeEvents(ctx context.Context, pool *pgxpool.Pool, enc *json.Encoder, evs []events.RecordedEvent) error {
	positions := make([]events.Position, len(evs))
	for i, ev := range evs {
		positions[i] = ev.Position
	}
	links, err := audit.LinksAt(ctx, pool, positions)
	if err != nil {
		return err
	}
	for _, ev := range evs {
		var link *audit.ChainLink
		if l, ok := links[ev.Position]; ok {
			link = &l
		}
		if err := enc.Encode(audit.NewExportLine(ev, link)); err != nil {
			return err
		}
	}
	return nil
}

// exportOptions select the events of `events export`.
type exportOptions struct {
	From    events.Position
	Types   []string // empty: every type
	Account string   // empty: every account
	Follow  bool
}

func (o exportOptions) wants(ev events.RecordedEvent) bool {
	if len(o.Types) > 0 && !slices.Contains(o.Types, ev.Type) {
		return false
	}
	if o.Account == "" {
		return true
	}
	var md events.Metadata
	return json.Unmarshal(ev.Metadata, &md) == nil && md.AccountID == o.Account
}

// exportEvents streams events in global order as JSON lines, a page at a
// time (constant memory at any size). Without Follow it ends once caught up;
// with Follow it keeps tailing until ctx ends.
func exportEvents(ctx context.Context, pool *pgxpool.Pool, store events.Store, o exportOptions, w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if o.Follow {
		return followEvents(ctx, pool, store, o, enc)
	}
	const page = 500
	for from := o.From; ; {
		evs, err := store.ReadAll(ctx, from, page)
		if err != nil {
			return err
		}
		if err := writeEvents(ctx, pool, enc, slices.DeleteFunc(slices.Clone(evs), func(ev events.RecordedEvent) bool { return !o.wants(ev) })); err != nil {
			return err
		}
		if len(evs) < page {
			return nil
		}
		from = evs[len(evs)-1].Position
	}
}

func followEvents(ctx context.Context, pool *pgxpool.Pool, store events.Store, o exportOptions, enc *json.Encoder) error {
	sub, err := store.SubscribeAll(ctx, o.From)
	if err != nil {
		return err
	}
	for ev := range sub.Events() {
		if o.wants(ev) {
			if err := writeEvents(ctx, pool, enc, []events.RecordedEvent{ev}); err != nil {
				return err
			}
		}
	}
	if err := sub.Err(); err != nil {
		return err
	}
	return nil
}

// newEventsCmd is the `invoicing events` group.
func newEventsCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Print events as JSON lines",
		Long: `events prints events from the event store (EVENTSTORE_URL, else DATABASE_URL)
as JSON lines: position, stream, revision, id, type, recorded_at, data and
metadata. The event catalogue is events/README.md.`,
	}
	cmd.AddCommand(newEventsReadCmd(c), newEventsExportCmd(c))
	return cmd
}

func newEventsReadCmd(c *cli) *cobra.Command {
	var stream, entity string
	cmd := &cobra.Command{
		Use:   "read --stream NAME | --entity ID",
		Short: "Print one stream's events, or an entity's, in order",
		Long: `read prints the events of one stream (--stream), or of a company, customer
or invoice by its id (--entity; found through the read models: stream names
are hashes only the service computes). A company's invoice numbering stream
follows its own.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (stream == "") == (entity == "") {
				return usageErrorf(cmd, "give exactly one of --stream and --entity")
			}
			id, err := uuid.Parse(entity)
			if entity != "" && err != nil {
				return usageErrorf(cmd, "--entity %q: want a company, customer or invoice id (a UUID)", entity)
			}
			return withDatabases(cmd.Context(), c.getenv, func(pool *pgxpool.Pool, store events.Store) error {
				streams := []string{stream}
				if entity != "" {
					if streams, err = projections.EntityStreams(cmd.Context(), pool, id); err != nil {
						return err
					}
				}
				return readStreams(cmd.Context(), pool, store, streams, cmd.OutOrStdout())
			})
		},
	}
	cmd.Flags().StringVar(&stream, "stream", "", "the stream to print")
	cmd.Flags().StringVar(&entity, "entity", "", "the company, customer or invoice whose events to print")
	return cmd
}

func newEventsExportCmd(c *cli) *cobra.Command {
	var opts exportOptions
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Print every event in global order, resumable",
		Long: `export prints every event in global order, a page at a time. Pass the last
printed "position" as --from to resume without a gap or a duplicate; --follow
keeps printing new events until interrupted.`,
		Example: `  invoicing events export --type InvoiceIssued --account acme
  invoicing events export --from 1234/0 --follow`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withDatabases(cmd.Context(), c.getenv, func(pool *pgxpool.Pool, store events.Store) error {
				return exportEvents(cmd.Context(), pool, store, opts, cmd.OutOrStdout())
			})
		},
	}
	f := cmd.Flags()
	f.Var((*positionFlag)(&opts.From), "from", `resume after this position, as printed in an earlier line's "position"`)
	f.StringArrayVar(&opts.Types, "type", nil, "only events of this type (repeatable)")
	f.StringVar(&opts.Account, "account", "", "only this account's events")
	f.BoolVar(&opts.Follow, "follow", false, "keep printing new events until interrupted")
	return cmd
}

// positionFlag is an events.Position flag in the form Position.String
// prints.
type positionFlag events.Position

func (p *positionFlag) Type() string { return "POSITION" }
func (p *positionFlag) String() string {
	if *p == (positionFlag{}) {
		return "" // no default shown in --help
	}
	return events.Position(*p).String()
}
func (p *positionFlag) Set(v string) error {
	pos, err := events.ParsePosition(v)
	if err != nil {
		return err
	}
	*p = positionFlag(pos)
	return nil
}

// readStreams prints each stream's events in turn; a company's numbering
// stream may not exist yet, so only the first stream must.
func readStreams(ctx context.Context, pool *pgxpool.Pool, store events.Store, streams []string, w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i, stream := range streams {
		evs, err := store.ReadStream(ctx, stream)
		if errors.Is(err, events.ErrStreamNotFound) && i > 0 {
			continue
		}
		if errors.Is(err, events.ErrStreamNotFound) {
			return fmt.Errorf("stream %s has no events", stream)
		}
		if err != nil {
			return err
		}
		if err := writeEvents(ctx, pool, enc, evs); err != nil {
			return err
		}
	}
	return nil
}
