package projections

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
)

// appendEvent appends payload as the first event of a new stream of kind and
// returns the stream, the event's data as stored, and its global position.
func appendEvent(t *testing.T, store events.Store, kind, typ string, payload any) (stream string, data []byte, pos events.Position) {
	t.Helper()
	data, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	stream = kind + "-" + uuid.NewString()
	res, err := store.Append(context.Background(), stream, events.NoStream(), events.EventData{
		ID: events.EventID(stream, 0), Type: typ, Data: data, Metadata: []byte(`{}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	return stream, data, res.Position
}

// runAll runs every projection of the service until each has passed pos.
func runAll(t *testing.T, e env, pos events.Position) {
	t.Helper()
	for _, p := range All() {
		runUntil(t, e, NewRunner(p, e.store, e.pool, quiet, RunnerOptions{}), pos)
	}
}

// field decodes one member of an event's JSON data, as the event recorded it.
func field(t *testing.T, data []byte, name string) any {
	t.Helper()
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		t.Fatal(err)
	}
	return decodeJSON(t, members[name])
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return v
}

func ptr[T any](v T) *T { return &v }

var testAddress = events.Address{City: "Berlin", CountryCode: "DE", Line1: "Str 1", Line2: "Hof", PostalCode: "10115", Region: "BE"}

// customerRow is a customers row; JSON columns decoded, times in UTC.
type customerRow struct {
	ID, CompanyID, AccountID, Stream, Name string
	Address, Identifiers                   any
	Email, ExternalReference               *string
	ArchivedAt                             *time.Time
	CreatedAt, UpdatedAt                   time.Time
	Version                                int
}

func readCustomer(t *testing.T, pool *pgxpool.Pool, id string) customerRow {
	t.Helper()
	var (
		r                    customerRow
		address, identifiers []byte
	)
	err := pool.QueryRow(context.Background(), `
		SELECT id::text, company_id::text, account_id, stream_name, name, address, identifiers,
			email, external_reference, archived_at, created_at, updated_at, version
		FROM customers WHERE id = $1`, id).Scan(&r.ID, &r.CompanyID, &r.AccountID, &r.Stream, &r.Name,
		&address, &identifiers, &r.Email, &r.ExternalReference, &r.ArchivedAt, &r.CreatedAt, &r.UpdatedAt, &r.Version)
	if err != nil {
		t.Fatalf("read customer %s: %v", id, err)
	}
	r.Address, r.Identifiers = decodeJSON(t, address), decodeJSON(t, identifiers)
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	return r
}

func TestCustomerCreatedProjectsARowEqualToTheEvent(t *testing.T) {
	e := newEnv(t)
	created := time.Date(2026, 3, 1, 9, 30, 15, 123456000, time.UTC)
	full := events.CustomerCreated{
		CustomerID: uuid.NewString(), CompanyID: uuid.NewString(), AccountID: "acct", Name: "Globex GmbH",
		Address: testAddress, Email: "billing@globex.example", ExternalReference: "crm-42",
		Identifiers: []events.Identifier{{CountryCode: "DE", Scheme: "vat", Value: "DE123"}}, CreatedAt: created,
	}
	minimal := events.CustomerCreated{
		CustomerID: uuid.NewString(), CompanyID: full.CompanyID, AccountID: "acct", Name: "Initech",
		Address: events.Address{City: "Paris", CountryCode: "FR", Line1: "Rue 2", PostalCode: "75001"}, CreatedAt: created,
	}
	tests := []struct {
		name            string
		event           events.CustomerCreated
		email, ref      *string
		wantIdentifiers func(data []byte) any
	}{
		{"every optional field is copied", full, ptr(full.Email), ptr(full.ExternalReference),
			func(data []byte) any { return field(t, data, "identifiers") }},
		{"absent optional fields are NULL and absent identifiers an empty array", minimal, nil, nil,
			func([]byte) any { return []any{} }},
	}
	type sent struct {
		stream string
		data   []byte
	}
	var last events.Position
	streams := make([]sent, len(tests))
	for i, tt := range tests {
		streams[i].stream, streams[i].data, last = appendEvent(t, e.store, "customer", events.TypeCustomerCreated, tt.event)
	}
	runAll(t, e, last)

	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, data := tt.event, streams[i].data
			want := customerRow{
				ID: c.CustomerID, CompanyID: c.CompanyID, AccountID: c.AccountID, Stream: streams[i].stream,
				Name: c.Name, Address: field(t, data, "address"), Identifiers: tt.wantIdentifiers(data),
				Email: tt.email, ExternalReference: tt.ref, CreatedAt: created, UpdatedAt: created, Version: 1,
			}
			if got := readCustomer(t, e.pool, c.CustomerID); !reflect.DeepEqual(got, want) {
				t.Fatalf("customers row differs from its event:\nwant %+v\ngot  %+v", want, got)
			}
		})
	}
}
