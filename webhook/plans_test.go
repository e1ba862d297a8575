package webhook

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/invoicing/invoicing/internal/pgtest"
)

// The delivery tables of the plan test: planDeliveries deliveries over
// planEndpoints endpoints of acme, nine in ten succeeded over the last
// two months, a few failed, and a dead endpoint's backlog of pending ones
// in planDeadStreams streams (see loadDeliveryPlanData).
const (
	planDeliveries  = 200_000
	planEndpoints   = 200
	planDeadStreams = 300
)

// loadDeliveryPlanData fills the delivery tables straight from
// generate_series, with autovacuum off and without ANALYZE: the planner
// sees them as it would after a burst of events.
func loadDeliveryPlanData(t *testing.T, e *env) {
	t.Helper()
	ctx := context.Background()
	for _, stmt := range []string{
		`ALTER TABLE webhook_deliveries SET (autovacuum_enabled = off)`,
		`ALTER TABLE webhook_attempts SET (autovacuum_enabled = off)`,
		// Endpoint 'dead' (every tenth row) has been failing: its deliveries
		// are pending, one per stream tried. The rest succeeded or failed.
		fmt.Sprintf(`INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event_id, event_type, stream_name,
				revision, position_hi, position_lo, status, attempts, next_attempt_at, first_attempt_at,
				last_attempt_at, created_at)
			SELECT gen_random_uuid(), e, 'acme', gen_random_uuid(), 'invoice.drafted', 'invoice-' || (i %% %d), i, i / 100, i,
				s, CASE WHEN s <> 'pending' THEN 1 + (i %% 3) WHEN i %% %d < 10 THEN 2 ELSE 0 END,
				now() - (i %% 1000) * interval '1 minute', at - interval '1 minute', CASE WHEN s <> 'pending' OR i %% %d < 10 THEN at END,
				at - interval '2 minutes'
			FROM generate_series(1, %d) AS i,
				LATERAL (SELECT CASE WHEN i %% 10 = 0 THEN 'dead' ELSE 'ep-' || (i %% %d) END AS e,
					now() - (%d - i) * interval '30 seconds' AS at) AS d,
				LATERAL (SELECT CASE WHEN e = 'dead' THEN 'pending' WHEN i %% 50 = 1 THEN 'failed' ELSE 'succeeded' END AS s) AS st`,
			planDeadStreams, planDeadStreams*10, planDeadStreams*10, planDeliveries, planEndpoints, planDeliveries),
		`INSERT INTO webhook_attempts (delivery_id, n, at, status, latency_ms)
			SELECT d.id, k, d.last_attempt_at, 500, 12 FROM webhook_deliveries d, generate_series(1, d.attempts) AS k`,
	} {
		if _, err := e.pool.Exec(ctx, stmt); err != nil {
			t.Fatalf("%v\n%s", err, stmt)
		}
	}
}

// deliveryPlanCase is a statement of the delivery tables, the indexes its
// scans may read and the one they must.
type deliveryPlanCase struct {
	name    string
	sql     string
	args    []any
	must    string   // an index one of its scans reads
	may     []string // other indexes its scans may read
	noSorts bool     // a page: read in the index's order, never sorted
}

// wholeIndex is the one index a scan may read without a condition: the
// pending deliveries, which the claim and the gauges read all of by
// design (a dead endpoint's backlog is what they must pass over).
const wholeIndex = "webhook_deliveries_pending_order"

func deliveryPlanCases(ids string) []deliveryPlanCase {
	now := time.Now()
	var cases []deliveryPlanCase
	for _, endpoint := range []string{"ep-7", "dead", "unknown"} {
		for _, at := range []struct {
			name   string
			hi, lo int64
		}{{"first page", -1, -1}, {"middle", planDeliveries / 200, planDeliveries / 2}, {"end", planDeliveries / 100, planDeliveries}} {
			cases = append(cases, deliveryPlanCase{name: "delivery log of " + endpoint + ", " + at.name, sql: listSQL,
				args: []any{"acme", endpoint, at.hi, at.lo, 101}, must: "webhook_deliveries_by_endpoint", noSorts: true})
		}
		cases = append(cases, deliveryPlanCase{name: "has deliveries, " + endpoint, sql: hasDeliveriesSQL,
			args: []any{"acme", endpoint}, must: "webhook_deliveries_by_endpoint"})
	}
	some := strings.Split(strings.Trim(ids, "{}"), ",")[0]
	return append(cases,
		deliveryPlanCase{name: "a delivery", sql: getSQL, args: []any{"acme", "ep-7", some}, must: "webhook_deliveries_pkey"},
		deliveryPlanCase{name: "a page's attempts", sql: attemptsSQL, args: []any{ids}, must: "webhook_attempts_pkey"},
		deliveryPlanCase{name: "a retry by hand", sql: retrySQL, args: []any{"acme", "ep-7", some, now, "key"},
			must: "webhook_deliveries_pkey"},
		deliveryPlanCase{name: "the senders' claim", sql: claimSQL, args: []any{now, 4, 16, time.Minute, DefaultRetryFor},
			must: "webhook_deliveries_pending_order", may: []string{"webhook_deliveries_pkey"}},
		deliveryPlanCase{name: "the queue's gauges", sql: statsSQL, must: "webhook_deliveries_pending_order"},
		deliveryPlanCase{name: "the purge", sql: purgeSQL, args: []any{now.Add(-DefaultRetention / 2), purgeBatch},
			must: "webhook_deliveries_finished", may: []string{"webhook_deliveries_pkey", "webhook_attempts_pkey"}},
	)
}

// TestEveryDeliveryQueryIsReadThroughItsIndexWhateverTheStatistics: the
// delivery log, the claim, the gauges and the purge never read a whole
// table, with or without statistics, custom or generic plan. The table
// holds a month of every event times every endpoint; a scan of it at
// every claim or scrape would be the service's largest cost.
func TestEveryDeliveryQueryIsReadThroughItsIndexWhateverTheStatistics(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 200,000 deliveries")
	}
	e := newEnv(t)
	loadDeliveryPlanData(t, e)
	var ids string
	err := e.pool.QueryRow(context.Background(), `SELECT array_agg(id)::text FROM
		(SELECT id FROM webhook_deliveries WHERE endpoint_id = 'ep-7' ORDER BY position_hi, position_lo LIMIT 100) AS page`).Scan(&ids)
	if err != nil {
		t.Fatal(err)
	}
	cases := deliveryPlanCases(ids)
	t.Run("unanalysed", func(t *testing.T) { checkDeliveryPlans(t, e, cases) })
	if _, err := e.pool.Exec(context.Background(), `ANALYZE webhook_deliveries, webhook_attempts`); err != nil {
		t.Fatal(err)
	}
	t.Run("analysed", func(t *testing.T) { checkDeliveryPlans(t, e, cases) })
}

func checkDeliveryPlans(t *testing.T, e *env, cases []deliveryPlanCase) {
	ctx := context.Background()
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, mode := range pgtest.PlanModes {
		for i, c := range cases {
			plan, err := pgtest.Explain(ctx, conn.Conn(), fmt.Sprintf("plan_%d", i), mode, c.sql, c.args...)
			if err != nil {
				t.Fatalf("%s (%s): %v", c.name, mode, err)
			}
			if problem := deliveryPlanProblem(plan, c); problem != "" {
				t.Errorf("%s (%s): %s\n%s", c.name, mode, problem, pgtest.IndentPlan(plan))
			}
		}
	}
}

// deliveryPlanProblem says what is wrong with plan for c, or "".
func deliveryPlanProblem(plan map[string]any, c deliveryPlanCase) string {
	found := false
	for _, n := range pgtest.PlanNodes(plan) {
		typ, _ := n["Node Type"].(string)
		index, _ := n["Index Name"].(string)
		switch {
		case typ == "Seq Scan":
			return fmt.Sprintf("reads all of %v", n["Relation Name"])
		case index != "" && index != wholeIndex && n["Index Cond"] == nil:
			return "reads all of index " + index
		case c.noSorts && strings.Contains(typ, "Sort"):
			return "sorts the page"
		case index == c.must:
			found = true
		case index != "" && !slices.Contains(c.may, index):
			return "reads index " + index
		}
	}
	if !found {
		return "does not read " + c.must
	}
	return ""
}
