package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/google/uuid"

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

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return fmt.Sprint(*s) }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// eventsCommand runs `invoicing events read|export`.
func eventsCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "read" && args[0] != "export") {
		return fmt.Errorf("%w: events read --stream NAME | events export [--from POSITION] [--type T]... [--account ID] [--follow]", errUsage)
	}
	fs := flag.NewFlagSet("events "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	stream := fs.String("stream", "", "stream to read (events read)")
	from := fs.String("from", "", "resume after this position, as printed in an earlier line's \"position\"")
	account := fs.String("account", "", "only this account's events")
	follow := fs.Bool("follow", false, "keep printing new events until interrupted")
	var types stringList
	fs.Var(&types, "type", "only events of this type (repeatable)")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	opts := exportOptions{Types: types, Account: *account, Follow: *follow}
	if *from != "" {
		pos, err := events.ParsePosition(*from)
		if err != nil {
			return fmt.Errorf("%w: --from: %v", errUsage, err)
		}
		opts.From = pos
	}
	if args[0] == "read" && *stream == "" {
		return fmt.Errorf("%w: events read needs --stream", errUsage)
	}
	return withStore(ctx, getenv, func(store events.Store) error {
		if args[0] == "export" {
			return exportEvents(ctx, store, opts, stdout)
		}
		return readStream(ctx, store, *stream, stdout)
	})
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
