package pgtest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Plan modes of Explain: PostgreSQL plans a prepared statement's first
// executions for their values (custom plans) and may then keep one plan
// for any value (generic). Plan tests check both.
var PlanModes = []string{"force_custom_plan", "force_generic_plan"}

// Explain prepares sql on conn as name and returns the plan (EXPLAIN's
// JSON "Plan" node) it would be executed by with args under
// plan_cache_mode mode (one of PlanModes). EXPLAIN does not run it: a
// DELETE deletes nothing.
func Explain(ctx context.Context, conn *pgx.Conn, name, mode, sql string, args ...any) (map[string]any, error) {
	if _, err := conn.Exec(ctx, "SET plan_cache_mode = "+mode); err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "PREPARE "+name+" AS "+sql); err != nil {
		return nil, err
	}
	defer conn.Exec(ctx, "DEALLOCATE "+name)
	literals := make([]string, len(args))
	for i, a := range args {
		literals[i] = literal(a)
	}
	execute := "EXECUTE " + name
	if len(literals) > 0 {
		execute += "(" + strings.Join(literals, ", ") + ")"
	}
	var out []byte
	err := conn.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+execute).Scan(&out)
	if err != nil {
		return nil, err
	}
	var plans []struct {
		Plan map[string]any
	}
	if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
		return nil, fmt.Errorf("EXPLAIN output %s: %v", out, err)
	}
	return plans[0].Plan, nil
}

// literal is v as an SQL literal of EXECUTE's argument list.
func literal(v any) string {
	switch v := v.(type) {
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case int, int64:
		return fmt.Sprint(v)
	case time.Time:
		return "'" + v.UTC().Format(time.RFC3339Nano) + "'"
	case time.Duration:
		return fmt.Sprintf("'%d microseconds'", v.Microseconds())
	}
	panic(fmt.Sprintf("literal of %T", v))
}

// PlanNodes returns plan's nodes, depth first.
func PlanNodes(plan map[string]any) []map[string]any {
	nodes := []map[string]any{plan}
	children, _ := plan["Plans"].([]any)
	for _, child := range children {
		nodes = append(nodes, PlanNodes(child.(map[string]any))...)
	}
	return nodes
}

// IndentPlan is plan for a failure message.
func IndentPlan(plan map[string]any) string {
	b, _ := json.MarshalIndent(plan, "", "  ")
	return string(b)
}
