package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrNotACompanyStream and ErrNotACustomerStream mean a stream does not
// start with the entity's creating event.
var (
	ErrNotACompanyStream  = errors.New("events: not a company stream")
	ErrNotACustomerStream = errors.New("events: not a customer stream")
)

// Company is a company as its stream's events make it: the created
// company with every later update applied (CompanyCreated holds the
// current fields; CreatedAt stays the creation time), whether it is
// archived, and its version. The write side decides on it, and a replayed
// response renders it.
type Company struct {
	CompanyCreated
	ArchivedAt *time.Time
	UpdatedAt  time.Time
	// Version counts the stream's events: 1 when created, +1 per event.
	Version int
}

// FoldCompany folds a company stream's events, in revision order.
func FoldCompany(evs []RecordedEvent) (Company, error) {
	var c Company
	for i, ev := range evs {
		if err := c.apply(ev, i == 0); err != nil {
			return Company{}, fmt.Errorf("fold %s at revision %d: %w", ev.Stream, ev.Revision, err)
		}
	}
	if c.Version == 0 {
		return Company{}, ErrNotACompanyStream
	}
	return c, nil
}

// Resume folds evs, the events that follow those c was folded from, onto
// a copy of c: FoldCompany of the whole stream, without its start.
func (c Company) Resume(evs []RecordedEvent) (Company, error) {
	if c.Version == 0 {
		return Company{}, ErrNotACompanyStream
	}
	if err := resume(c.Version, evs, c.apply); err != nil {
		return Company{}, err
	}
	return c, nil
}

// resume applies evs to a fold at version, checking that each follows the
// one before (the loop of Company.Resume and Customer.Resume).
func resume(version int, evs []RecordedEvent, apply func(RecordedEvent, bool) error) error {
	for _, ev := range evs {
		if ev.Revision != uint64(version) {
			return fmt.Errorf("fold %s: revision %d follows version %d: %w", ev.Stream, ev.Revision, version, ErrStreamGap)
		}
		if err := apply(ev, false); err != nil {
			return fmt.Errorf("fold %s at revision %d: %w", ev.Stream, ev.Revision, err)
		}
		version++
	}
	return nil
}

// ErrStreamGap means a fold was resumed with events that do not follow
// the ones it holds.
var ErrStreamGap = errors.New("events: the events do not follow the fold")

func (c *Company) apply(ev RecordedEvent, first bool) error {
	if first != (ev.Type == TypeCompanyCreated) {
		return ErrNotACompanyStream
	}
	var err error
	switch ev.Type {
	case TypeCompanyCreated:
		err = json.Unmarshal(ev.Data, &c.CompanyCreated)
		c.UpdatedAt = c.CreatedAt
	case TypeCompanyUpdated:
		var e CompanyUpdated
		err = json.Unmarshal(ev.Data, &e)
		c.CompanyCreated = e.apply(c.CompanyCreated)
		c.UpdatedAt = e.UpdatedAt
	case TypeCompanyArchived:
		var e CompanyArchived
		err = json.Unmarshal(ev.Data, &e)
		c.ArchivedAt, c.UpdatedAt = &e.ArchivedAt, e.ArchivedAt
	case TypeCompanyUnarchived:
		var e CompanyUnarchived
		err = json.Unmarshal(ev.Data, &e)
		c.ArchivedAt, c.UpdatedAt = nil, e.UnarchivedAt
	default:
		return fmt.Errorf("unexpected event type %q", ev.Type)
	}
	c.Version++
	return err
}

// apply returns the company's creation record with the update's state in
// place of its mutable fields; ids and CreatedAt stay.
func (e CompanyUpdated) apply(c CompanyCreated) CompanyCreated {
	c.LegalName, c.TradingName, c.Address = e.LegalName, e.TradingName, e.Address
	c.DefaultCurrency, c.DefaultLanguage, c.DefaultPaymentTermsDays = e.DefaultCurrency, e.DefaultLanguage, e.DefaultPaymentTermsDays
	c.Email, c.ExternalReference, c.Identifiers = e.Email, e.ExternalReference, e.Identifiers
	c.InvoiceNumberPrefix, c.BankAccount, c.ElectronicAddress = e.InvoiceNumberPrefix, e.BankAccount, e.ElectronicAddress
	if e.CreditNoteNumberPrefix != nil {
		c.CreditNoteNumberPrefix = e.CreditNoteNumberPrefix
	}
	return c
}

// Customer is a customer as its stream's events make it, as Company.
type Customer struct {
	CustomerCreated
	ArchivedAt *time.Time
	UpdatedAt  time.Time
	Version    int
}

// FoldCustomer folds a customer stream's events, in revision order.
func FoldCustomer(evs []RecordedEvent) (Customer, error) {
	var c Customer
	for i, ev := range evs {
		if err := c.apply(ev, i == 0); err != nil {
			return Customer{}, fmt.Errorf("fold %s at revision %d: %w", ev.Stream, ev.Revision, err)
		}
	}
	if c.Version == 0 {
		return Customer{}, ErrNotACustomerStream
	}
	return c, nil
}

// Resume folds evs onto a copy of c, as Company.Resume.
func (c Customer) Resume(evs []RecordedEvent) (Customer, error) {
	if c.Version == 0 {
		return Customer{}, ErrNotACustomerStream
	}
	if err := resume(c.Version, evs, c.apply); err != nil {
		return Customer{}, err
	}
	return c, nil
}

func (c *Customer) apply(ev RecordedEvent, first bool) error {
	if first != (ev.Type == TypeCustomerCreated) {
		return ErrNotACustomerStream
	}
	var err error
	switch ev.Type {
	case TypeCustomerCreated:
		err = json.Unmarshal(ev.Data, &c.CustomerCreated)
		c.UpdatedAt = c.CreatedAt
	case TypeCustomerUpdated:
		var e CustomerUpdated
		err = json.Unmarshal(ev.Data, &e)
		c.Name, c.Address, c.Email = e.Name, e.Address, e.Email
		c.ExternalReference, c.Identifiers = e.ExternalReference, e.Identifiers
		c.ElectronicAddress, c.UpdatedAt = e.ElectronicAddress, e.UpdatedAt
	case TypeCustomerArchived:
		var e CustomerArchived
		err = json.Unmarshal(ev.Data, &e)
		c.ArchivedAt, c.UpdatedAt = &e.ArchivedAt, e.ArchivedAt
	case TypeCustomerUnarchived:
		var e CustomerUnarchived
		err = json.Unmarshal(ev.Data, &e)
		c.ArchivedAt, c.UpdatedAt = nil, e.UnarchivedAt
	default:
		return fmt.Errorf("unexpected event type %q", ev.Type)
	}
	c.Version++
	return err
}
