package command

import (
	"context"
	"testing"

	"github.com/invoicing/invoicing/events"
)

// countingDirectory knows one company and one customer per account and
// counts the lookups that reach it.
type countingDirectory struct {
	Directory
	calls int
}

func (d *countingDirectory) Company(_ context.Context, accountID, companyID string) (CompanyRecord, error) {
	d.calls++
	if companyID != "co-1" {
		return CompanyRecord{}, events.ErrNotFound
	}
	return CompanyRecord{ID: companyID, LegalName: "Legal of " + accountID,
		Identifiers: []events.Identifier{{Scheme: "vat", Value: accountID}}}, nil
}

func (d *countingDirectory) Customer(_ context.Context, accountID, companyID, customerID string) (CustomerRecord, error) {
	d.calls++
	return CustomerRecord{ID: customerID, CompanyID: companyID, Name: "Name of " + accountID}, nil
}

func TestCachedDirectory(t *testing.T) {
	ctx := context.Background()
	inner := &countingDirectory{}
	d := CachedDirectory(inner, 2)

	first, _ := d.Company(ctx, "acme", "co-1")
	first.Identifiers[0].Value = "changed by a caller"
	again, err := d.Company(ctx, "acme", "co-1")
	if err != nil || inner.calls != 1 || again.Identifiers[0].Value != "acme" {
		t.Fatalf("second lookup: %+v, %v after %d calls; want the remembered company, unchanged, after 1", again, err, inner.calls)
	}
	other, _ := d.Company(ctx, "globex", "co-1")
	if inner.calls != 2 || other.LegalName != "Legal of globex" {
		t.Fatalf("another account's lookup gave %+v after %d calls; want its own company from the directory", other, inner.calls)
	}
	for range 2 {
		if _, err := d.Company(ctx, "acme", "co-2"); err != events.ErrNotFound {
			t.Fatalf("unknown company: %v, want events.ErrNotFound", err)
		}
	}
	if inner.calls != 4 {
		t.Fatalf("%d calls; want not found asked again each time (4)", inner.calls)
	}
	if c, _ := d.Customer(ctx, "acme", "co-1", "cu-1"); c.Name != "Name of acme" {
		t.Fatalf("customer %+v", c)
	}
	d.Customer(ctx, "acme", "co-1", "cu-1")
	if inner.calls != 5 {
		t.Fatalf("%d calls; want the customer remembered (5)", inner.calls)
	}
	d.Company(ctx, "initech", "co-1") // the third company: the map is full and starts over
	d.Company(ctx, "acme", "co-1")
	if inner.calls != 7 {
		t.Fatalf("%d calls; want the full map emptied, so acme asked again (7)", inner.calls)
	}
}
