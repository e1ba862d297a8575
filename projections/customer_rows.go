package projections

import (
	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
)

// Customers projects a customer's events into the customers table: its
// creation as a row, updates and archiving onto it.
type Customers struct{}

var customersSchema = mustSchema("customers.sql")

// Name implements Projection.
func (Customers) Name() string { return "customers" }

// Version implements Projection.
func (Customers) Version() int { return 4 }

// Schema implements Projection.
func (Customers) Schema() string { return customersSchema }

// Tables implements Projection.
func (Customers) Tables() []string { return []string{"customers"} }

// Apply implements Projection.
func (Customers) Apply(ev events.RecordedEvent, batch *pgx.Batch) error {
	switch ev.Type {
	case events.TypeCustomerCreated:
		return applyCustomerCreated(ev, batch)
	case events.TypeCustomerUpdated:
		return applyCustomerUpdated(ev, batch)
	case events.TypeCustomerArchived:
		var e events.CustomerArchived
		if err := decode("customers", ev, &e); err != nil {
			return err
		}
		queueArchived(batch, "customers", e.CustomerID, &e.ArchivedAt, e.ArchivedAt, ev)
	case events.TypeCustomerUnarchived:
		var e events.CustomerUnarchived
		if err := decode("customers", ev, &e); err != nil {
			return err
		}
		queueArchived(batch, "customers", e.CustomerID, nil, e.UnarchivedAt, ev)
	}
	return nil
}

func applyCustomerCreated(ev events.RecordedEvent, batch *pgx.Batch) error {
	var c events.CustomerCreated
	if err := decode("customers", ev, &c); err != nil {
		return err
	}
	address, identifiers, err := marshalValues(c.Address, c.Identifiers)
	if err != nil {
		return err
	}
	_, eaddr, err := optionalJSON(nil, c.ElectronicAddress)
	if err != nil {
		return err
	}
	hi, lo := key(ev)
	batch.Queue(`
		INSERT INTO customers (id, company_id, account_id, stream_name, name, address, email,
			external_reference, identifiers, created_at, updated_at, version, position_hi, position_lo,
			electronic_address)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11, $12, $13, $14)
		ON CONFLICT (id) DO NOTHING`,
		c.CustomerID, c.CompanyID, c.AccountID, ev.Stream, c.Name, address, nullable(c.Email),
		nullable(c.ExternalReference), identifiers, c.CreatedAt, int64(ev.Revision)+1, hi, lo, eaddr)
	return nil
}

// applyCustomerUpdated overwrites the customer's fields with the update's
// whole state.
func applyCustomerUpdated(ev events.RecordedEvent, batch *pgx.Batch) error {
	var c events.CustomerUpdated
	if err := decode("customers", ev, &c); err != nil {
		return err
	}
	address, identifiers, err := marshalValues(c.Address, c.Identifiers)
	if err != nil {
		return err
	}
	_, eaddr, err := optionalJSON(nil, c.ElectronicAddress)
	if err != nil {
		return err
	}
	batch.Queue(`
		UPDATE customers SET name = $2, address = $3, email = $4, external_reference = $5,
			identifiers = $6, updated_at = $7, version = $8, electronic_address = $9
		WHERE id = $1`,
		c.CustomerID, c.Name, address, nullable(c.Email), nullable(c.ExternalReference),
		identifiers, c.UpdatedAt, int64(ev.Revision)+1, eaddr)
	return nil
}
