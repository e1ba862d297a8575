package projections

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
)

// Finding is one disagreement between the events and the live read models.
type Finding struct {
	Table   string
	ID      string
	Problem string
}

func (f Finding) String() string { return f.Table + " " + f.ID + ": " + f.Problem }

// Verifier replays every event into a scratch copy of each projection and
// compares it with the live tables row by row, then recomputes every
// invoice's amounts from its lines.
type Verifier struct {
	Rebuilder
}

// Verify returns every finding; none means the read models agree with the
// events.
func (v *Verifier) Verify(ctx context.Context, projs []Projection) ([]Finding, error) {
	var findings []Finding
	for _, p := range projs {
		fs, err := v.verifyProjection(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("verify %s: %w", p.Name(), err)
		}
		findings = append(findings, fs...)
	}
	fs, err := verifyInvoiceAmounts(ctx, v.Pool)
	if err != nil {
		return nil, err
	}
	return append(findings, fs...), nil
}

// verifyProjection compares a scratch build with the live tables. The live
// projector may still be applying events: the comparison is repeated, with
// the scratch copy caught up again, until both stand at the same position.
func (v *Verifier) verifyProjection(ctx context.Context, p Projection) ([]Finding, error) {
	suffix := randomSuffix()
	scratch := target{schema: "audit_" + p.Name() + "_" + suffix, checkpoint: "audit:" + p.Name() + ":" + suffix, bulk: true}
	defer v.dropScratch(context.WithoutCancel(ctx), scratch)
	var findings []Finding
	for attempt := 0; attempt < 5; attempt++ {
		built, err := v.Build(ctx, p, scratch)
		if err != nil {
			return nil, err
		}
		live, err := readCheckpoint(ctx, v.Pool, p.Name())
		if err != nil {
			return nil, err
		}
		if findings, err = compareTables(ctx, v.Pool, p, scratch.schema); err != nil {
			return nil, err
		}
		if live.Compare(built) == 0 || len(findings) == 0 {
			return findings, nil
		}
	}
	return findings, nil
}

func (v *Verifier) dropScratch(ctx context.Context, scratch target) {
	_, err := v.Pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{scratch.schema}.Sanitize()+" CASCADE")
	if err == nil {
		_, err = v.Pool.Exec(ctx, `DELETE FROM public.projection_checkpoints WHERE name = $1`, scratch.checkpoint)
	}
	if err == nil {
		_, err = v.Pool.Exec(ctx, `DELETE FROM public.projection_quarantine WHERE name = $1`, scratch.checkpoint)
	}
	if err != nil {
		v.Logger.Warn("could not drop the audit's scratch copy", "schema", scratch.schema, "error", err)
	}
}

func randomSuffix() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// compareTables reports rows that differ between the scratch and the live
// copy of each table, by id, over every column, naming the columns that
// differ.
func compareTables(ctx context.Context, pool *pgxpool.Pool, p Projection, scratch string) ([]Finding, error) {
	var findings []Finding
	for _, table := range p.Tables() {
		cols, err := columns(ctx, pool, scratch, table)
		if err != nil {
			return nil, err
		}
		rows, err := pool.Query(ctx, compareSQL(cols, pgx.Identifier{"public", table}.Sanitize(), pgx.Identifier{scratch, table}.Sanitize()))
		if err != nil {
			return nil, fmt.Errorf("compare %s: %w", table, err)
		}
		got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Finding, error) {
			f := Finding{Table: table}
			return f, r.Scan(&f.ID, &f.Problem)
		})
		if err != nil {
			return nil, fmt.Errorf("compare %s: %w", table, err)
		}
		findings = append(findings, got...)
	}
	return findings, nil
}

// compareSQL finds the rows of live and shadow (tables with the given
// columns) that are not in the other, matches them by id, and names the
// columns in which a matched pair differs.
func compareSQL(cols []column, live, shadow string) string {
	selected := make([]string, len(cols))
	diffs := make([]string, len(cols))
	for i, c := range cols {
		quoted := pgx.Identifier{c.name}.Sanitize()
		selected[i] = quoted
		if c.text {
			selected[i] = quoted + "::text AS " + quoted
		}
		diffs[i] = fmt.Sprintf("CASE WHEN e.%s IS DISTINCT FROM u.%s THEN '%s' END", quoted, quoted, strings.ReplaceAll(c.name, "'", "''"))
	}
	list := strings.Join(selected, ", ")
	return `
		WITH expected AS (SELECT ` + list + ` FROM ` + shadow + ` EXCEPT SELECT ` + list + ` FROM ` + live + `),
		     unexpected AS (SELECT ` + list + ` FROM ` + live + ` EXCEPT SELECT ` + list + ` FROM ` + shadow + `)
		SELECT coalesce(e.id, u.id)::text,
		       CASE WHEN e.id IS NULL THEN 'is in the read model but no event produces it'
		            WHEN u.id IS NULL THEN 'is missing from the read model'
		            ELSE 'differs from what its events produce in column(s) ' ||
		                 array_to_string(array_remove(ARRAY[` + strings.Join(diffs, ", ") + `]::text[], NULL), ', ') END
		FROM expected e FULL JOIN unexpected u ON e.id = u.id
		ORDER BY 1`
}

// column is a column of a read-model table. json has no equality: its
// columns compare as text, which is what the API serves from them, so a
// difference in a single byte is one. jsonb compares by value, so key order
// in stored documents does not matter there.
type column struct {
	name string
	text bool
}

// columns lists a table's columns in table order.
func columns(ctx context.Context, pool *pgxpool.Pool, schema, table string) ([]column, error) {
	rows, err := pool.Query(ctx, `
		SELECT column_name, data_type = 'json' FROM information_schema.columns
		WHERE table_schema = $1 AND table_name = $2
		ORDER BY ordinal_position`, schema, table)
	if err != nil {
		return nil, err
	}
	cols, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (column, error) {
		var c column
		return c, r.Scan(&c.name, &c.text)
	})
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("table %s.%s has no columns", schema, table)
	}
	return cols, nil
}

// verifyInvoiceAmounts recomputes each live invoice's line amounts, VAT
// breakdown and totals from quantity, unit amount, tax rate and category.
func verifyInvoiceAmounts(ctx context.Context, pool *pgxpool.Pool) ([]Finding, error) {
	rows, err := pool.Query(ctx, `SELECT id::text, lines::json, document::json, subtotal_minor, tax_minor, total_minor FROM public.invoices ORDER BY position_hi, position_lo`)
	if err != nil {
		return nil, fmt.Errorf("read invoices: %w", err)
	}
	defer rows.Close()
	var findings []Finding
	for rows.Next() {
		var (
			id     string
			lines  []events.InvoiceLine
			doc    events.InvoiceDocumentFields
			stored events.Totals
		)
		if err := rows.Scan(&id, &lines, &doc, &stored.Subtotal, &stored.Tax, &stored.Total); err != nil {
			return nil, fmt.Errorf("scan invoice: %w", err)
		}
		for _, problem := range recomputeInvoice(lines, doc.TaxBreakdown, stored) {
			findings = append(findings, Finding{Table: "invoices", ID: id, Problem: problem})
		}
	}
	return findings, rows.Err()
}

// recomputeInvoice recomputes the lines, then the breakdown and totals by
// the rule the invoice was priced with: events.SumInvoice (the tax of each
// category and rate), or, for invoices written before the breakdown, the
// sum of the lines' taxes (events.SumLines, events.LineTaxBreakdown).
func recomputeInvoice(lines []events.InvoiceLine, breakdown []events.TaxBreakdown, stored events.Totals) []string {
	var problems []string
	amounts := make([]events.LineAmounts, len(lines))
	for i, l := range lines {
		q, err := events.ParseQuantity(l.Quantity)
		if err == nil {
			amounts[i], err = events.ComputeLine(q, l.UnitAmountMinor, l.TaxRateBps)
		}
		got := events.LineAmounts{Net: l.NetAmountMinor, Tax: l.TaxAmountMinor, Total: l.TotalAmountMinor}
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("line %d cannot be recomputed: %v", l.Position, err))
		case got != amounts[i]:
			problems = append(problems, fmt.Sprintf("line %d stores %+v, recomputed %+v", l.Position, got, amounts[i]))
		}
	}
	if len(problems) > 0 {
		return problems
	}
	totals, byGroup, err := events.SumInvoice(lines)
	if err != nil {
		return append(problems, fmt.Sprintf("totals cannot be recomputed: %v", err))
	}
	if !reflect.DeepEqual(breakdown, byGroup) {
		// Invoices from before the breakdown: their tax is the lines'.
		totals, err = events.SumLines(amounts)
		if err != nil {
			return append(problems, fmt.Sprintf("totals cannot be recomputed: %v", err))
		}
		if byLine := events.LineTaxBreakdown(lines); !reflect.DeepEqual(breakdown, byLine) {
			problems = append(problems, fmt.Sprintf("tax_breakdown stores %+v, recomputed %+v", breakdown, byGroup))
		}
	}
	if totals != stored {
		problems = append(problems, fmt.Sprintf("totals store %+v, recomputed from the lines %+v", stored, totals))
	}
	return problems
}
