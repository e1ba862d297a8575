package main

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/projections"
)

// newAuditCmd is the `invoicing audit` group.
func newAuditCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Check the read models against the events, and the event log against its audit chain",
	}
	cmd.AddCommand(newAuditVerifyCmd(c), newAuditSealCmd(c), newAuditVerifyLogCmd(c))
	return cmd
}

func newAuditSealCmd(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "seal",
		Short: "Seal the event log as it stands now and print the seal (JSON), to keep outside the database",
		Long: `seal seals the event log as it stands now: it chains the events the sealer
has not chained yet, records a seal of the audit chain's hash after the last
event ("seq"), and prints it (when the newest seal covers every event
already, it prints that one). With AUDIT_SIGNING_KEY set, the same key as
the service's, the seal carries its Ed25519 public key and signature;
without, it is unsigned and a warning goes to stderr. Keep a copy where the
database's administrators cannot change it; audit verify-log --seal checks
the log against it later. The format is in audit/README.md.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, err := signingKey(c.getenv)
			if err != nil {
				return fmt.Errorf("configuration: %w", err)
			}
			return withDatabases(cmd.Context(), c.getenv, func(pool *pgxpool.Pool, store events.Store) error {
				return sealLog(cmd.Context(), pool, store, key, cmd.OutOrStdout(), cmd.ErrOrStderr())
			})
		},
	}
}

func newAuditVerifyLogCmd(c *cli) *cobra.Command {
	var opts verifyLogOptions
	var output *outputFormat
	cmd := &cobra.Command{
		Use:   "verify-log",
		Short: "Recompute the event log's audit chain and check it against the recorded chain and seals",
		Long: `verify-log recomputes the audit chain from the event store (or, with
--from-export, from a complete export, offline, without a database) and
checks it against the links the sealer recorded, every stored seal and every
seal given with --seal, verifying each seal's signature (--public-key pins
the only key trusted). It exits 0 when everything agrees, and 1 naming the
first sequence number that differs and how: changed, missing, inserted,
reordered, or differs from a seal.`,
		Example: `  invoicing audit seal > seal.json
  invoicing audit verify-log --seal seal.json
  invoicing events export > export.jsonl && invoicing audit verify-log --from-export export.jsonl --seal seal.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Output = *output
			if opts.FromExport != "" {
				return verifyLogOffline(opts, cmd.OutOrStdout())
			}
			return withDatabases(cmd.Context(), c.getenv, func(pool *pgxpool.Pool, store events.Store) error {
				return verifyLogInStore(cmd.Context(), pool, store, opts, cmd.OutOrStdout())
			})
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&opts.SealFiles, "seal", nil, "a seal kept from before, as audit seal printed it (repeatable)")
	f.StringVar(&opts.FromExport, "from-export", "", "verify this complete export (events export > FILE) instead of the store")
	f.StringVar(&opts.PublicKey, "public-key", "", "base64 Ed25519 public key: only seals it signed are accepted")
	output = addOutputFlag(cmd)
	return cmd
}

// auditJSON is `audit verify --output json`: one object, findings always
// an array. README.md documents it; keep it backward compatible.
type auditJSON struct {
	OK       bool          `json:"ok"` // no findings
	Findings []findingJSON `json:"findings"`
}

type findingJSON struct {
	Table   string `json:"table"`
	ID      string `json:"id"`
	Problem string `json:"problem"`
}

func newAuditVerifyCmd(c *cli) *cobra.Command {
	var output *outputFormat
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Replay every event into scratch copies and compare them with the read models",
		Long: `verify replays every event into scratch copies of the read models, compares
them with the live tables row by row (by id, over every column), recomputes
every invoice's line amounts and totals, prints each disagreement naming table
and id, and exits 0 only when everything agrees (1 otherwise).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withDatabases(cmd.Context(), c.getenv, func(pool *pgxpool.Pool, store events.Store) error {
				return auditVerify(cmd, pool, store, *output)
			})
		},
	}
	output = addOutputFlag(cmd)
	return cmd
}

func auditVerify(cmd *cobra.Command, pool *pgxpool.Pool, store events.Store, format outputFormat) error {
	v := &projections.Verifier{Rebuilder: projections.Rebuilder{Store: store, Pool: pool, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	findings, err := v.Verify(cmd.Context(), projections.All())
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if format == outputJSON {
		doc := auditJSON{OK: len(findings) == 0, Findings: []findingJSON{}}
		for _, f := range findings {
			doc.Findings = append(doc.Findings, findingJSON{Table: f.Table, ID: f.ID, Problem: f.Problem})
		}
		if err := writeJSON(w, doc); err != nil {
			return err
		}
	} else {
		for _, f := range findings {
			fmt.Fprintln(w, "MISMATCH", f)
		}
		if len(findings) == 0 {
			fmt.Fprintln(w, "OK: every read-model row matches its events, and every invoice's amounts recompute from its lines")
		}
	}
	if len(findings) > 0 {
		return fmt.Errorf("audit: %d disagreement(s) between the events and the read models", len(findings))
	}
	return nil
}
