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
		Short: "Check the read models against the events",
	}
	cmd.AddCommand(newAuditVerifyCmd(c))
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
