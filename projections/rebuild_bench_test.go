package projections

import (
	"context"
	"testing"
)

// BenchmarkRebuild100k measures how fast a projection is rebuilt from
// 100,000 events: go test -run '^$' -bench Rebuild -benchtime 3x ./projections/
func BenchmarkRebuild100k(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	const n = 100_000
	_, err := e.pool.Exec(ctx, `
		INSERT INTO events (event_id, stream_name, stream_revision, event_type, data, metadata)
		SELECT gen_random_uuid(), 'company-bench-' || i, 0, 'CompanyCreated',
			json_build_object('company_id', gen_random_uuid(), 'account_id', 'bench-' || (i % 50),
				'legal_name', 'Company ' || i, 'address', json_build_object('line_1', 'Str ' || i,
				'city', 'Berlin', 'postal_code', '10115', 'country_code', 'DE'),
				'default_currency', 'EUR', 'default_language', 'en', 'default_payment_terms_days', 30,
				'identifiers', json_build_array(), 'created_at', '2026-01-01T00:00:00.000001Z'),
			'{"account_id":"bench","schema_version":1}'
		FROM generate_series(1, $1) AS i`, n)
	if err != nil {
		b.Fatal(err)
	}
	r := &Rebuilder{Store: e.store, Pool: e.pool, Logger: quiet}
	b.ResetTimer()
	for range b.N {
		if err := r.Rebuild(ctx, Companies{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "events/s")
}
