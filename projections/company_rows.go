package projections

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
)

// Companies projects a company's events into the companies table: its
// creation as a row, updates and archiving onto it.
type Companies struct{}

var companiesSchema = mustSchema("companies.sql")

// Name implements Projection.
func (Companies) Name() string { return "companies" }

// Version implements Projection.
func (Companies) Version() int { return 6 }

// Schema implements Projection.
func (Companies) Schema() string { return companiesSchema }

// Tables implements Projection.
func (Companies) Tables() []string { return []string{"companies"} }

// Apply implements Projection.
func (Companies) Apply(ev events.RecordedEvent, batch *pgx.Batch) error {
	switch ev.Type {
	case events.TypeCompanyCreated:
		return applyCompanyCreated(ev, batch)
	case events.TypeCompanyUpdated:
		return applyCompanyUpdated(ev, batch)
	case events.TypeCompanyArchived:
		var e events.CompanyArchived
		if err := decode("companies", ev, &e); err != nil {
			return err
		}
		queueArchived(batch, "companies", e.CompanyID, &e.ArchivedAt, e.ArchivedAt, ev)
	case events.TypeCompanyUnarchived:
		var e events.CompanyUnarchived
		if err := decode("companies", ev, &e); err != nil {
			return err
		}
		queueArchived(batch, "companies", e.CompanyID, nil, e.UnarchivedAt, ev)
	}
	return nil
}

func applyCompanyCreated(ev events.RecordedEvent, batch *pgx.Batch) error {
	var c events.CompanyCreated
	if err := decode("companies", ev, &c); err != nil {
		return err
	}
	address, identifiers, err := marshalValues(c.Address, c.Identifiers)
	if err != nil {
		return err
	}
	bank, eaddr, err := optionalJSON(c.BankAccount, c.ElectronicAddress)
	if err != nil {
		return err
	}
	hi, lo := key(ev)
	batch.Queue(`
		INSERT INTO companies (id, account_id, stream_name, legal_name, trading_name, address,
			default_currency, default_language, default_payment_terms_days, email,
			external_reference, identifiers, created_at, updated_at, version, position_hi, position_lo,
			invoice_number_prefix, bank_account, electronic_address, credit_note_number_prefix)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13, $14, $15, $16, $17, $18, $19, $20)
		ON CONFLICT (id) DO NOTHING`,
		c.CompanyID, c.AccountID, ev.Stream, c.LegalName, nullable(c.TradingName), address,
		c.DefaultCurrency, c.DefaultLanguage, c.DefaultPaymentTermsDays, nullable(c.Email),
		nullable(c.ExternalReference), identifiers, c.CreatedAt, int64(ev.Revision)+1, hi, lo,
		c.InvoiceNumberPrefix, bank, eaddr, c.CreditNotePrefix())
	return nil
}

// applyCompanyUpdated overwrites the company's fields with the update's
// whole state.
func applyCompanyUpdated(ev events.RecordedEvent, batch *pgx.Batch) error {
	var c events.CompanyUpdated
	if err := decode("companies", ev, &c); err != nil {
		return err
	}
	address, identifiers, err := marshalValues(c.Address, c.Identifiers)
	if err != nil {
		return err
	}
	bank, eaddr, err := optionalJSON(c.BankAccount, c.ElectronicAddress)
	if err != nil {
		return err
	}
	batch.Queue(`
		UPDATE companies SET legal_name = $2, trading_name = $3, address = $4, default_currency = $5,
			default_language = $6, default_payment_terms_days = $7, email = $8, external_reference = $9,
			identifiers = $10, invoice_number_prefix = $11, updated_at = $12, version = $13,
			bank_account = $14, electronic_address = $15,
			credit_note_number_prefix = coalesce($16, credit_note_number_prefix)
		WHERE id = $1`,
		c.CompanyID, c.LegalName, nullable(c.TradingName), address, c.DefaultCurrency,
		c.DefaultLanguage, c.DefaultPaymentTermsDays, nullable(c.Email), nullable(c.ExternalReference),
		identifiers, c.InvoiceNumberPrefix, c.UpdatedAt, int64(ev.Revision)+1, bank, eaddr, c.CreditNoteNumberPrefix)
	return nil
}

// queueArchived sets a company's or customer's archived_at (nil: restored),
// updated_at and version.
func queueArchived(batch *pgx.Batch, table, id string, archivedAt *time.Time, at time.Time, ev events.RecordedEvent) {
	batch.Queue(`UPDATE `+table+` SET archived_at = $2, updated_at = $3, version = $4 WHERE id = $1`,
		id, archivedAt, at, int64(ev.Revision)+1)
}

// decode decodes an event's payload for the projection named name.
func decode(name string, ev events.RecordedEvent, into any) error {
	if err := json.Unmarshal(ev.Data, into); err != nil {
		return fmt.Errorf("%s: decode %s event %x: %w", name, ev.Type, ev.ID, err)
	}
	return nil
}

// nullable stores an absent optional string as NULL.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// marshalValues renders an address and identifiers as the API shows them
// (absent identifiers as an empty list), for reads to pass through.
func marshalValues(address events.Address, identifiers []events.Identifier) (a, ids []byte, err error) {
	if a, err = apiJSON(address); err != nil {
		return nil, nil, err
	}
	if ids, err = apiJSON(nonNilIdentifiers(identifiers)); err != nil {
		return nil, nil, err
	}
	return a, ids, nil
}

// optionalJSON renders a bank account and an electronic address as the
// API shows them, nil (NULL) for an absent one.
func optionalJSON(bank *events.BankAccount, eaddr *events.ElectronicAddress) (b, e []byte, err error) {
	if bank != nil {
		if b, err = apiJSON(bank); err != nil {
			return nil, nil, err
		}
	}
	if eaddr != nil {
		if e, err = apiJSON(eaddr); err != nil {
			return nil, nil, err
		}
	}
	return b, e, nil
}

func nonNilIdentifiers(ids []events.Identifier) []events.Identifier {
	if ids == nil {
		return []events.Identifier{}
	}
	return ids
}

// apiJSON encodes v as the API writes its bodies (apiEncoder). The read
// models keep this text in json columns, byte for byte, and reads pass it
// through.
func apiJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := apiEncoder(&b).Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// apiEncoder encodes as the API writes its bodies (transport's writeJSON):
// encoding/json without HTML escaping, so "&" stays "&" rather than the
// "\u0026" json.Marshal would store. Each value ends with a newline.
func apiEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

// key is a row's keyset key: the global position of the event that created
// it, which a rebuild reproduces exactly. Both stores' positions fit bigint.
func key(ev events.RecordedEvent) (hi, lo int64) {
	h, l := ev.Position.Parts()
	return int64(h), int64(l)
}
