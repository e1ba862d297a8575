package bench

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/events"
)

// dataset describes the scale benchmark's store: which company holds which
// invoice, every id, reference and status, all derived from indexes so that
// the harness can pick a random invoice without keeping a million ids.
type dataset struct {
	Account   string
	Invoices  int
	Companies int
	Customers int
	BigShare  float64 // share of the invoices in company 0

	start    time.Time // creation time of invoice 0
	spacing  time.Duration
	custOf   [][]int // customer indexes of each company
	custComp []int   // company of each customer
}

// newDataset lays out invoices invoices over companies companies (company
// 0 holding bigShare of them) and customers customers, spread over the
// companies in proportion to their invoices.
func newDataset(invoices, companies, customers int, bigShare float64) *dataset {
	d := &dataset{Account: "bench-scale", Invoices: invoices, Companies: companies, Customers: customers, BigShare: bigShare}
	d.start = time.Date(2024, 1, 3, 0, 0, 0, 0, time.UTC)
	d.spacing = max(time.Duration(int64(365*24*time.Hour)/int64(invoices)).Truncate(time.Microsecond), 4*time.Microsecond)
	d.custOf = make([][]int, companies)
	d.custComp = make([]int, customers)
	big := max(1, int(float64(customers)*bigShare+0.5))
	big = min(big, customers-(companies-1))
	for k := range customers {
		c := 0
		if k >= big {
			c = 1 + (k-big)%(companies-1)
		}
		d.custComp[k] = c
		d.custOf[c] = append(d.custOf[c], k)
	}
	return d
}

// inBig reports whether invoice i belongs to company 0: exactly
// floor(n·share) of the first n invoices do, spread evenly.
func (d *dataset) inBig(i int) bool {
	return int(float64(i+1)*d.BigShare) > int(float64(i)*d.BigShare)
}

// companyOf returns the company index of invoice i.
func (d *dataset) companyOf(i int) int {
	if d.inBig(i) {
		return 0
	}
	others := i - int(float64(i)*d.BigShare) // invoices before i outside company 0
	return 1 + others%(d.Companies-1)
}

// customerOf returns the customer index of invoice i (a customer of its
// company).
func (d *dataset) customerOf(i int) int {
	cs := d.custOf[d.companyOf(i)]
	return cs[mix(uint64(i), 7)%uint64(len(cs))]
}

// customersOf returns the customer indexes of company c.
func (d *dataset) customersOf(c int) []int { return d.custOf[c] }

// externalRef is invoice i's external_reference: 1 invoice in 100 has one.
func (d *dataset) externalRef(i int) string {
	if i%100 == 42 {
		return fmt.Sprintf("EXT-%08d", i)
	}
	return ""
}

// status is invoice i's final status: 1 in 10 issued, 1 in 50 voided
// (drafts), the rest drafts.
func (d *dataset) status(i int) string {
	switch {
	case i%10 == 3:
		return events.StatusIssued
	case i%50 == 7:
		return events.StatusVoid
	}
	return events.StatusDraft
}

// bigInvoices counts company 0's invoices.
func (d *dataset) bigInvoices() int { return int(float64(d.Invoices) * d.BigShare) }

// eventCount counts every event the dataset's log holds.
func (d *dataset) eventCount() int {
	n := d.Companies + d.Customers + d.Invoices
	for i := range d.Invoices {
		switch d.status(i) {
		case events.StatusIssued:
			n += 2 // number assigned, issued
		case events.StatusVoid:
			n++
		}
	}
	return n
}

func (d *dataset) companyCreated(c int) time.Time {
	return d.start.Add(-48*time.Hour + time.Duration(c)*time.Minute)
}

func (d *dataset) customerCreated(k int) time.Time {
	return d.start.Add(-24*time.Hour + time.Duration(k)*time.Second)
}

func (d *dataset) invoiceCreated(i int) time.Time {
	return d.start.Add(time.Duration(i) * d.spacing)
}

// companyID, customerID and invoiceID are the UUIDv7 ids, derived from the
// creation time and the index.
func (d *dataset) companyID(c int) string {
	return uuid7(d.companyCreated(c), mix(uint64(c), 1)).String()
}

// customerID is customer k's id.
func (d *dataset) customerID(k int) string {
	return uuid7(d.customerCreated(k), mix(uint64(k), 2)).String()
}

// invoiceID is invoice i's id.
func (d *dataset) invoiceID(i int) string {
	return uuid7(d.invoiceCreated(i), mix(uint64(i), 3)).String()
}

// uuid7 builds a UUID version 7 from a time and 74 pseudo-random bits.
func uuid7(t time.Time, r uint64) uuid.UUID {
	var u uuid.UUID
	binary.BigEndian.PutUint64(u[0:8], uint64(t.UnixMilli())<<16)
	r2 := mix(r, 0xabc)
	u[6] = 0x70 | byte(r&0x0f)
	u[7] = byte(r >> 8)
	binary.BigEndian.PutUint64(u[8:16], r2)
	u[8] = 0x80 | u[8]&0x3f
	return u
}

// mix is SplitMix64 of x in stream s: cheap, deterministic, well spread.
func mix(x, s uint64) uint64 {
	z := x*0x9E3779B97F4A7C15 + s*0xD1B54A32D192ED03 + 0x632BE59BD9B4E019
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// genEvent is one row of the events table.
type genEvent struct {
	ID         uuid.UUID
	Stream     string
	Revision   int64
	Type       string
	Data       []byte
	Metadata   []byte
	RecordedAt time.Time
}

func (d *dataset) metadata(kind string, i int, keyHash string) []byte {
	fp := sha256.Sum256([]byte(fmt.Sprintf("bench-scale/%s/%d", kind, i)))
	b, _ := json.Marshal(events.Metadata{
		AccountID:          d.Account,
		Actor:              events.Actor{Subject: "bench-scale"},
		RequestID:          fmt.Sprintf("bench-scale-%s-%d", kind, i),
		RequestFingerprint: hex.EncodeToString(fp[:]),
		IdempotencyKey:     keyHash,
		SchemaVersion:      events.SchemaVersion,
	})
	return b
}

func event(stream string, rev int64, typ string, payload any, md []byte, at time.Time) (genEvent, error) {
	data, err := json.Marshal(payload)
	if err != nil {
		return genEvent{}, fmt.Errorf("encode %s: %w", typ, err)
	}
	return genEvent{ID: uuid.UUID(events.EventID(stream, uint64(rev))), Stream: stream, Revision: rev,
		Type: typ, Data: data, Metadata: md, RecordedAt: at}, nil
}

func (d *dataset) company(c int) events.CompanyCreated {
	a := companyAddress(c)
	return events.CompanyCreated{
		CompanyID: d.companyID(c), AccountID: d.Account,
		LegalName:               fmt.Sprintf("Benchmark Company %02d GmbH", c),
		Address:                 events.Address{Line1: a.Line1, City: a.City, PostalCode: a.PostalCode, CountryCode: a.CountryCode},
		DefaultCurrency:         "EUR",
		DefaultLanguage:         "en",
		DefaultPaymentTermsDays: 30,
		Email:                   fmt.Sprintf("billing@company%02d.example", c),
		Identifiers:             []events.Identifier{{Scheme: "vat", Value: fmt.Sprintf("DE%09d", 100000000+c), CountryCode: "DE"}},
		InvoiceNumberPrefix:     "INV-",
		CreatedAt:               d.companyCreated(c),
	}
}

func (d *dataset) customer(k int) events.CustomerCreated {
	a := customerAddress(k)
	return events.CustomerCreated{
		CustomerID: d.customerID(k), CompanyID: d.companyID(d.custComp[k]), AccountID: d.Account,
		Name:        fmt.Sprintf("Customer %04d Ltd", k),
		Address:     events.Address{Line1: a.Line1, City: a.City, PostalCode: a.PostalCode, CountryCode: a.CountryCode},
		Email:       fmt.Sprintf("ap@customer%04d.example", k),
		Identifiers: []events.Identifier{{Scheme: "vat", Value: fmt.Sprintf("GB%09d", 200000000+k), CountryCode: "GB"}},
		CreatedAt:   d.customerCreated(k),
	}
}

// generate calls emit with every event of the dataset in log order:
// companies, customers, then each invoice's draft followed by its issue
// (number assigned in the company's numbering stream, then issued) or its
// void. Payloads are the service's own event types, so they encode exactly
// as the service writes them; amounts come from the service's money code.
func (d *dataset) generate(emit func(genEvent) error) error {
	companies := make([]events.CompanyCreated, d.Companies)
	for c := range companies {
		companies[c] = d.company(c)
		key := fmt.Sprintf("bench-scale-company-%d", c)
		stream := events.StreamName(events.KindCompany, d.Account, "companies.create", "", key)
		ev, err := event(stream, 0, events.TypeCompanyCreated, companies[c], d.metadata("company", c, ""), companies[c].CreatedAt)
		if err != nil {
			return err
		}
		if err := emit(ev); err != nil {
			return err
		}
	}
	customers := make([]events.CustomerCreated, d.Customers)
	for k := range customers {
		customers[k] = d.customer(k)
		key := fmt.Sprintf("bench-scale-customer-%d", k)
		stream := events.StreamName(events.KindCustomer, d.Account, "customers.create", customers[k].CompanyID, key)
		ev, err := event(stream, 0, events.TypeCustomerCreated, customers[k], d.metadata("customer", k, ""), customers[k].CreatedAt)
		if err != nil {
			return err
		}
		if err := emit(ev); err != nil {
			return err
		}
	}
	sequence := make([]uint64, d.Companies) // numbers issued so far per company
	for i := range d.Invoices {
		evs, err := d.invoiceEvents(i, companies, customers, sequence)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if err := emit(ev); err != nil {
				return err
			}
		}
	}
	return nil
}

func (d *dataset) invoiceEvents(i int, companies []events.CompanyCreated, customers []events.CustomerCreated, sequence []uint64) ([]genEvent, error) {
	c := d.companyOf(i)
	co, cu := companies[c], customers[d.customerOf(i)]
	created := d.invoiceCreated(i)
	draft, err := d.draft(i, co, cu, created)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("bench-scale-invoice-%d", i)
	stream := events.StreamName(events.KindInvoice, d.Account, "invoices.create", co.CompanyID, key)
	first, err := event(stream, 0, events.TypeInvoiceDrafted, draft, d.metadata("invoice", i, ""), created)
	if err != nil {
		return nil, err
	}
	out := []genEvent{first}
	later := created.Add(d.spacing / 2)
	scope := co.CompanyID + "/" + draft.InvoiceID
	switch d.status(i) {
	case events.StatusIssued:
		sequence[c]++
		seq := sequence[c]
		keyHash := events.IdempotencyKeyHash(d.Account, "invoices.issue", scope, "bench-scale-issue-"+draft.InvoiceID)
		md := d.metadata("issue", i, keyHash)
		asg := events.InvoiceNumberAssigned{CompanyID: co.CompanyID, AccountID: d.Account, Sequence: seq,
			Number: events.InvoiceNumber(co.InvoiceNumberPrefix, seq), InvoiceID: draft.InvoiceID,
			InvoiceStream: stream, InvoiceRevision: 0, AssignedAt: later}
		numbering := events.NumberingStreamName(d.Account, co.CompanyID)
		ev1, err := event(numbering, int64(seq-1), events.TypeInvoiceNumberAssigned, asg, md, later)
		if err != nil {
			return nil, err
		}
		issued := events.InvoiceIssued{InvoiceID: draft.InvoiceID, CompanyID: co.CompanyID, AccountID: d.Account,
			Number: asg.Number, Sequence: seq, NumberingRevision: seq - 1, IssuedAt: later}
		ev2, err := event(stream, 1, events.TypeInvoiceIssued, issued, md, later)
		if err != nil {
			return nil, err
		}
		out = append(out, ev1, ev2)
	case events.StatusVoid:
		keyHash := events.IdempotencyKeyHash(d.Account, "invoices.void", scope, "bench-scale-void-"+draft.InvoiceID)
		voided := events.InvoiceVoided{InvoiceID: draft.InvoiceID, CompanyID: co.CompanyID, AccountID: d.Account,
			Reason: "Raised in error", VoidedAt: later}
		ev, err := event(stream, 1, events.TypeInvoiceVoided, voided, d.metadata("void", i, keyHash), later)
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// draft is invoice i as the create command records it: the request
// newInvoiceRequest describes, drafted by the write side's own code
// (command.DraftInvoice: defaults, snapshots, amounts), then given the id,
// account and creation time the command would give it.
func (d *dataset) draft(i int, co events.CompanyCreated, cu events.CustomerCreated, created time.Time) (events.InvoiceDrafted, error) {
	req := newInvoiceRequest(cu.CustomerID, created.Truncate(24*time.Hour), uint64(i), d.externalRef(i))
	draft, err := command.DraftInvoice(req.command(), companyRecord(co), customerRecord(cu))
	if err != nil {
		return events.InvoiceDrafted{}, fmt.Errorf("invoice %d: %w", i, err)
	}
	draft.InvoiceID, draft.AccountID, draft.CreatedAt = d.invoiceID(i), d.Account, created
	return draft, nil
}

// command is r as the write side has it once the body is validated.
func (r invoiceRequest) command() command.CreateInvoice {
	in := command.CreateInvoice{CustomerID: r.CustomerID, IssueDate: r.IssueDate,
		ExternalReference: r.ExternalReference, Notes: r.Notes}
	for _, l := range r.Lines {
		in.Lines = append(in.Lines, command.LineInput{Description: l.Description, Quantity: l.Quantity,
			Unit: l.Unit, UnitAmountMinor: l.UnitAmountMinor, TaxRateBps: l.TaxRateBps})
	}
	return in
}

// companyRecord is co as the write side's directory finds it.
func companyRecord(co events.CompanyCreated) command.CompanyRecord {
	return command.CompanyRecord{ID: co.CompanyID, LegalName: co.LegalName, TradingName: co.TradingName,
		Address: co.Address, Email: co.Email, Identifiers: co.Identifiers,
		DefaultCurrency: co.DefaultCurrency, DefaultLanguage: co.DefaultLanguage,
		DefaultPaymentTermsDays: co.DefaultPaymentTermsDays, InvoiceNumberPrefix: co.InvoiceNumberPrefix}
}

// customerRecord is cu as the write side's directory finds it.
func customerRecord(cu events.CustomerCreated) command.CustomerRecord {
	return command.CustomerRecord{ID: cu.CustomerID, CompanyID: cu.CompanyID, Name: cu.Name,
		Address: cu.Address, Email: cu.Email, Identifiers: cu.Identifiers}
}
