package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/projections"
)

// errLogTampered is verify-log's failure: the log disagrees with what was
// recorded of it.
var errLogTampered = errors.New("the event log differs from its audit chain or seals")

// verifyLogOptions are the inputs of `audit verify-log`.
type verifyLogOptions struct {
	SealFiles  []string // seals an auditor kept
	FromExport string   // verify this export offline instead of the store
	PublicKey  string   // base64 Ed25519 key: the only signer trusted
	Output     outputFormat
}

// verifyLogJSON is `audit verify-log --output json`.
type verifyLogJSON struct {
	OK       bool          `json:"ok"`
	Events   int           `json:"events"`
	Chained  int           `json:"chained"`
	Seals    int           `json:"seals"`
	Problems []problemJSON `json:"problems"`
}

type problemJSON struct {
	Seq     uint64 `json:"seq"`
	Kind    string `json:"kind"`
	EventID string `json:"event_id,omitempty"`
	Detail  string `json:"detail"`
}

func (o verifyLogOptions) inputs() ([]events.Seal, ed25519.PublicKey, error) {
	var trusted ed25519.PublicKey
	if o.PublicKey != "" {
		key, err := base64.StdEncoding.DecodeString(o.PublicKey)
		if err != nil || len(key) != ed25519.PublicKeySize {
			return nil, nil, fmt.Errorf("--public-key: want base64 of a 32-byte Ed25519 public key")
		}
		trusted = key
	}
	var seals []events.Seal
	for _, path := range o.SealFiles {
		seal, err := readSeal(path)
		if err != nil {
			return nil, nil, err
		}
		seals = append(seals, seal)
	}
	return seals, trusted, nil
}

func readSeal(path string) (events.Seal, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return events.Seal{}, fmt.Errorf("seal: %w", err)
	}
	var seal events.Seal
	if err := json.Unmarshal(b, &seal); err != nil {
		return events.Seal{}, fmt.Errorf("seal %s: %w", path, err)
	}
	return seal, nil
}

// verifyLogInStore checks the live store against its recorded chain.
func verifyLogInStore(ctx context.Context, pool *pgxpool.Pool, store events.Store, o verifyLogOptions, w io.Writer) error {
	seals, trusted, err := o.inputs()
	if err != nil {
		return err
	}
	report, err := projections.VerifyLog(ctx, pool, store, seals, trusted)
	if err != nil {
		return err
	}
	return printLogReport(w, report, o.Output)
}

// verifyLogOffline checks an export against the links it carries and the
// seals given, without a database.
func verifyLogOffline(o verifyLogOptions, w io.Writer) error {
	seals, trusted, err := o.inputs()
	if err != nil {
		return err
	}
	f, err := os.Open(o.FromExport)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer f.Close()
	now, recorded, err := linksOfExport(f)
	if err != nil {
		return fmt.Errorf("export %s: %w", o.FromExport, err)
	}
	return printLogReport(w, events.VerifyLinks(now, recorded, seals, trusted), o.Output)
}

// linksOfExport recomputes the chain of a complete export and collects the
// links its lines recorded.
func linksOfExport(r io.Reader) (now, recorded []events.ChainLink, err error) {
	var b events.ChainBuilder
	scan := bufio.NewScanner(r)
	scan.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for scan.Scan() {
		var line events.ExportLine
		if err := json.Unmarshal(scan.Bytes(), &line); err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", len(b.Links())+1, err)
		}
		ev, err := line.Event()
		if err != nil {
			return nil, nil, err
		}
		if _, err := b.Add(ev); err != nil {
			return nil, nil, err
		}
		link, ok, err := line.Link()
		if err != nil {
			return nil, nil, err
		}
		if ok {
			recorded = append(recorded, link)
		}
	}
	return b.Links(), recorded, scan.Err()
}

func printLogReport(w io.Writer, r events.LogReport, format outputFormat) error {
	if format == outputJSON {
		doc := verifyLogJSON{OK: r.OK(), Events: r.Events, Chained: r.Chained, Seals: r.Seals, Problems: []problemJSON{}}
		for _, p := range r.Problems {
			doc.Problems = append(doc.Problems, problemJSON{Seq: p.Seq, Kind: p.Kind, EventID: eventIDText(p.EventID), Detail: p.Detail})
		}
		if err := writeJSON(w, doc); err != nil {
			return err
		}
	} else {
		for _, p := range r.Problems {
			fmt.Fprintln(w, "TAMPERED", p)
		}
		if r.OK() {
			fmt.Fprintf(w, "OK: %d events; %d chained links and %d seal(s) agree with the log\n", r.Events, r.Chained, r.Seals)
		}
	}
	if !r.OK() {
		first, _ := r.First()
		return fmt.Errorf("%w: first at seq %d (%s)", errLogTampered, first.Seq, first.Kind)
	}
	return nil
}

func eventIDText(id [16]byte) string {
	if id == ([16]byte{}) {
		return ""
	}
	return uuid.UUID(id).String()
}

// printLatestSeal writes the newest seal as one JSON object, the form
// `verify-log --seal` reads back.
func printLatestSeal(ctx context.Context, pool *pgxpool.Pool, w io.Writer) error {
	seal, err := projections.LatestSeal(ctx, pool)
	if err != nil {
		return err
	}
	return writeJSON(w, seal)
}
