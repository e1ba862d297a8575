package pgtest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// NestedPlans runs sql with args on a connection of its own to connString,
// under plan_cache_mode mode (one of PlanModes), and returns the plans of
// the statements that the functions it calls ran, by their text. EXPLAIN
// shows a function call, not what the function runs: auto_explain logs
// those, and at level NOTICE sends them to the client. Loading it takes a
// superuser, as the tests' own clusters have.
func NestedPlans(ctx context.Context, connString, mode, sql string, args ...any) (map[string]map[string]any, error) {
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		return nil, err
	}
	var notices []string
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n.Message) }
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	setup := []string{"LOAD 'auto_explain'", "SET auto_explain.log_min_duration = 0",
		"SET auto_explain.log_nested_statements = on", "SET auto_explain.log_format = json",
		"SET auto_explain.log_level = notice", "SET plan_cache_mode = " + mode}
	for _, s := range setup {
		if _, err := conn.Exec(ctx, s); err != nil {
			return nil, fmt.Errorf("%s: %w", s, err)
		}
	}
	notices = nil
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		return nil, err
	}
	return nestedPlans(notices, sql)
}

// nestedPlans reads auto_explain's notices ("duration: … plan:" and the
// plan's json) and keeps those of statements other than top.
func nestedPlans(notices []string, top string) (map[string]map[string]any, error) {
	plans := map[string]map[string]any{}
	for _, n := range notices {
		start := strings.Index(n, "{")
		if start < 0 {
			continue
		}
		var logged struct {
			QueryText string `json:"Query Text"`
			Plan      map[string]any
		}
		if err := json.Unmarshal([]byte(n[start:]), &logged); err != nil {
			return nil, fmt.Errorf("auto_explain's notice %q: %w", n, err)
		}
		if logged.QueryText != top {
			plans[logged.QueryText] = logged.Plan
		}
	}
	return plans, nil
}
