package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/audit"
	"github.com/invoicing/invoicing/events"
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

func (o verifyLogOptions) inputs() ([]audit.Seal, ed25519.PublicKey, error) {
	var trusted ed25519.PublicKey
	if o.PublicKey != "" {
		key, err := audit.ParsePublicKey(o.PublicKey)
		if err != nil {
			return nil, nil, fmt.Errorf("--public-key: %w", err)
		}
		trusted = key
	}
	var seals []audit.Seal
	for _, path := range o.SealFiles {
		seal, err := readSeal(path)
		if err != nil {
			return nil, nil, err
		}
		seals = append(seals, seal)
	}
	return seals, trusted, nil
}

func readSeal(path string) (audit.Seal, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return audit.Seal{}, fmt.Errorf("seal: %w", err)
	}
	var seal audit.Seal
	if err := json.Unmarshal(b, &seal); err != nil {
		return audit.Seal{}, fmt.Errorf("seal %s: %w", path, err)
	}
	return seal, nil
}

// verifyLogInStore checks the live store against its recorded chain.
func verifyLogInStore(ctx context.Context, pool *pgxpool.Pool, store events.Store, o verifyLogOptions, w io.Writer) error {
	seals, trusted, err := o.inputs()
	if err != nil {
		return err
	}
	report, err := audit.VerifyLog(ctx, pool, store, seals, trusted)
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
	report, err := audit.VerifyExport(f, seals, trusted)
	if err != nil {
		return fmt.Errorf("export %s: %w", o.FromExport, err)
	}
	return printLogReport(w, report, o.Output)
}

func printLogReport(w io.Writer, r audit.LogReport, format outputFormat) error {
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

// unsignedWarning is what `audit seal` says on stderr when the seal it
// prints is unsigned.
const unsignedWarning = `warning: this seal is unsigned: it proves nothing against someone who can write the database, who could forge it.
To sign seals, set AUDIT_SIGNING_KEY to base64 of a 32-byte Ed25519 seed (head -c32 /dev/urandom | base64), the same for the service and for this command; keep it out of the database.
`

// sealLog is `audit seal`: it seals the log as it stands now (chaining what
// the sealer has not chained yet) with key, and prints the seal as one JSON
// object, the form `verify-log --seal` reads back; a warning goes to
// stderr when the seal is unsigned.
func sealLog(ctx context.Context, pool *pgxpool.Pool, store events.Store, key ed25519.PrivateKey, stdout, stderr io.Writer) error {
	seal, err := audit.SealNow(ctx, store, pool, key)
	if errors.Is(err, audit.ErrSigningKey) {
		return fmt.Errorf("%w; set AUDIT_SIGNING_KEY to the service's signing key", err)
	}
	if err != nil {
		return err
	}
	if seal.Signature == "" {
		fmt.Fprint(stderr, unsignedWarning)
	}
	return writeJSON(stdout, seal)
}
