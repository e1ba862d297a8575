package projections

import (
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
)

// Customers projects CustomerCreated into the customers table.
type Customers struct{}

var customersSchema = mustSchema("customers.sql")

// Name implements Projection.
func (Customers) Name() string { return "customers" }

// Version implements Projection.
func (Customers) Version() int { return 2 }

// Schema implements Projection.
func (Customers) Schema() string { return customersSchema }

// Tables implements Projection.
func (Customers) Tables() []string { return []string{"customers"} }

// Apply implements Projection.
func (Customers) Apply(ev events.RecordedEvent, batch *pgx.Batch) error {
	if ev.Type != events.TypeCustomerCreated {
		return nil
	}
	var c events.CustomerCreated
	if err := json.Unmarshal(ev.Data, &c); err != nil {
		return fmt.Errorf("customers: decode %s event %x: %w", ev.Type, ev.ID, err)
	}
	address, identifiers, err := marshalValues(c.Address, c.Identifiers)
	if err != nil {
		return err
	}
	hi, lo := key(ev)
	batch.Queue(`
		INSERT INTO customers (id, company_id, account_id, stream_name, name, address, email,
			external_reference, identifiers, created_at, updated_at, version, position_hi, position_lo)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11, $12, $13)
		ON CONFLICT (id) DO NOTHING`,
		c.CustomerID, c.CompanyID, c.AccountID, ev.Stream, c.Name, address, nullable(c.Email),
		nullable(c.ExternalReference), identifiers, c.CreatedAt, int64(ev.Revision)+1, hi, lo)
	return nil
}
