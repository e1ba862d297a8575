// Package projections builds the PostgreSQL read models from the event store.
//
// A Runner follows the store's global order from its checkpoint and, per
// batch, writes read-model rows and the new checkpoint in one transaction:
// the effect of every event lands exactly once, whatever crashes in between.
// One process at a time runs a projection (a session advisory lock); the
// others wait and take over when it dies. An event a projection cannot
// apply is quarantined rather than stopping it (see quarantine.go).
//
// Each projection owns its tables, described by a versioned schema. A new
// version is built beside the live tables in a shadow schema, from the first
// event, caught up, and swapped in (see rebuild.go); the API keeps answering
// from the old tables until the swap.
package projections

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/pgmigrate"
)

//go:embed migrations/*.sql
var migrations embed.FS

//go:embed schema/*.sql
var schemas embed.FS

// Projection turns events into read-model rows.
type Projection interface {
	// Name identifies the projection and its checkpoint.
	Name() string
	// Version is the version of Schema and Apply; bump it whenever either
	// changes, and the projection is rebuilt on the next start.
	Version() int
	// Schema is the DDL of the projection's tables, with unqualified names.
	Schema() string
	// Tables lists the tables Schema creates, in dependency order.
	Tables() []string
	// Apply queues on batch the statements that write the effect of ev.
	// Events of types it does not handle are ignored. The batch is sent in
	// one round trip, in the transaction that also moves the checkpoint.
	// Apply must be deterministic and use unqualified table names: rebuilds
	// run it against a shadow schema.
	Apply(ev events.RecordedEvent, batch *pgx.Batch) error
	// Handles reports whether Apply writes anything for events of the type.
	// A runner commits a batch of events it does not handle only now and
	// then (RunnerOptions.CheckpointEvery), and a writer waits only for the projections
	// that handle its event (Group.WaitFor).
	Handles(eventType string) bool
}

// All returns every projection of the service, in the order they run.
func All() []Projection {
	return []Projection{Companies{}, Customers{}, Invoices{}, CreditNotes{}, PublicEvents{}, WebhookEndpoints{}}
}

// Handles implements Projection: the events each of the service's
// projections writes rows for.
func (Companies) Handles(eventType string) bool {
	switch eventType {
	case events.TypeCompanyCreated, events.TypeCompanyUpdated, events.TypeCompanyArchived, events.TypeCompanyUnarchived:
		return true
	}
	return false
}

// Handles implements Projection.
func (Customers) Handles(eventType string) bool {
	switch eventType {
	case events.TypeCustomerCreated, events.TypeCustomerUpdated, events.TypeCustomerArchived, events.TypeCustomerUnarchived:
		return true
	}
	return false
}

// Handles implements Projection.
func (Invoices) Handles(eventType string) bool {
	switch eventType {
	case events.TypeInvoiceDrafted, events.TypeInvoiceRevised, events.TypeInvoiceIssued, events.TypeInvoiceVoided,
		events.TypeCreditNoteIssued, events.TypePaymentRecorded, events.TypePaymentReversed:
		return true
	}
	return false
}

// Handles implements Projection.
func (CreditNotes) Handles(eventType string) bool { return eventType == events.TypeCreditNoteIssued }

// Migrate creates the projections' bookkeeping tables.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return pgmigrate.Apply(ctx, pool, "projections", migrations, "migrations")
}

func mustSchema(file string) string {
	b, err := schemas.ReadFile("schema/" + file)
	if err != nil {
		panic(fmt.Sprintf("projections: embedded schema %s: %v", file, err))
	}
	return string(b)
}
