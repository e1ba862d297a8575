package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/invoicing/invoicing/events"
)

// eventLine is one event of `events read` and `events export`, as a JSON
// line: everything an auditor needs, and the position to resume after.
type eventLine struct {
	Position   string          `json:"position"`
	Stream     string          `json:"stream"`
	Revision   uint64          `json:"revision"`
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	RecordedAt string          `json:"recorded_at"`
	Data       json.RawMessage `json:"data"`
	Metadata   json.RawMessage `json:"metadata"`
}

func writeEvent(enc *json.Encoder, ev events.RecordedEvent) error {
	return enc.Encode(eventLine{
		Position: ev.Position.String(), Stream: ev.Stream, Revision: ev.Revision,
		ID: uuid.UUID(ev.ID).String(), Type: ev.Type,
		RecordedAt: ev.RecordedAt.UTC().Format(time.RFC3339Nano), Data: ev.Data, Metadata: ev.Metadata,
	})
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
func exportEvents(ctx context.Context, store events.Store, o exportOptions, w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if o.Follow {
		return followEvents(ctx, store, o, enc)
	}
	const page = 500
	for from := o.From; ; {
		evs, err := store.ReadAll(ctx, from, page)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if o.wants(ev) {
				if err := writeEvent(enc, ev); err != nil {
					return err
				}
			}
			from = ev.Position
		}
		if len(evs) < page {
			return nil
		}
	}
}

func followEvents(ctx context.Context, store events.Store, o exportOptions, enc *json.Encoder) error {
	sub, err := store.SubscribeAll(ctx, o.From)
	if err != nil {
		return err
	}
	for ev := range sub.Events() {
		if o.wants(ev) {
			if err := writeEvent(enc, ev); err != nil {
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
	var stream string
	cmd := &cobra.Command{
		Use:   "read --stream NAME",
		Short: "Print one stream's events, in order",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if stream == "" {
				return usageErrorf(cmd, "--stream is required")
			}
			return withStore(cmd.Context(), c.getenv, func(store events.Store) error {
				return readStream(cmd.Context(), store, stream, cmd.OutOrStdout())
			})
		},
	}
	cmd.Flags().StringVar(&stream, "stream", "", "the stream to print (required)")
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
			return withStore(cmd.Context(), c.getenv, func(store events.Store) error {
				return exportEvents(cmd.Context(), store, opts, cmd.OutOrStdout())
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

func readStream(ctx context.Context, store events.Store, stream string, w io.Writer) error {
	evs, err := store.ReadStream(ctx, stream)
	if errors.Is(err, events.ErrStreamNotFound) {
		return fmt.Errorf("stream %s has no events", stream)
	}
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, ev := range evs {
		if err := writeEvent(enc, ev); err != nil {
			return err
		}
	}
	return nil
}
