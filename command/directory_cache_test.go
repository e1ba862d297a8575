package command

import (
	"context"
	"testing"

	"github.com/invoicing/invoicing/events"
)

// countingDirectory knows one company per account, whose legal name a test
// changes, and counts the lookups that reach it.
type countingDirectory struct {
	Directory
	legalName string
	calls     int
}

func (d *countingDirectory) Company(_ context.Context, accountID, companyID string) (CompanyRecord, error) {
	d.calls++
	if companyID != "co-1" {
		return CompanyRecord{}, events.ErrNotFound
	}
	return CompanyRecord{ID: companyID, LegalName: d.legalName + " of " + accountID}, nil
}

func (d *countingDirectory) InvoiceStream(_ context.Context, accountID, companyID, invoiceID string) (string, error) {
	d.calls++
	if invoiceID == "missing" {
		return "", events.ErrNotFound
	}
	return "invoice-" + accountID + "-" + companyID + "-" + invoiceID, nil
}

func (d *countingDirectory) CompanyStream(_ context.Context, accountID, companyID string) (string, error) {
	d.calls++
	return "company-" + accountID + "-" + companyID, nil
}

func (d *countingDirectory) CustomerStream(_ context.Context, accountID, companyID, customerID string) (string, error) {
	d.calls++
	return "customer-" + accountID + "-" + companyID + "-" + customerID, nil
}

// TestCachedDirectoryRemembersStreamsOnly: stream names never change, so
// they are remembered; companies change (another instance may update one),
// so every lookup asks the directory and sees the change at once.
func TestCachedDirectoryRemembersStreamsOnly(t *testing.T) {
	ctx := context.Background()
	inner := &countingDirectory{legalName: "Old"}
	d := CachedDirectory(inner, 3)

	for range 2 {
		if s, err := d.InvoiceStream(ctx, "acme", "co-1", "inv-1"); err != nil || s != "invoice-acme-co-1-inv-1" {
			t.Fatalf("InvoiceStream = %q, %v", s, err)
		}
	}
	if inner.calls != 1 {
		t.Fatalf("%d calls; want the stream remembered (1)", inner.calls)
	}
	if s, _ := d.InvoiceStream(ctx, "globex", "co-1", "inv-1"); s != "invoice-globex-co-1-inv-1" || inner.calls != 2 {
		t.Fatalf("another account's lookup gave %q after %d calls; want its own", s, inner.calls)
	}
	for range 2 {
		if _, err := d.InvoiceStream(ctx, "acme", "co-1", "missing"); err != events.ErrNotFound {
			t.Fatalf("unknown invoice: %v, want events.ErrNotFound", err)
		}
	}
	if inner.calls != 4 {
		t.Fatalf("%d calls; want not found asked again each time (4)", inner.calls)
	}
	co, _ := d.CompanyStream(ctx, "acme", "co-1")
	cu, _ := d.CustomerStream(ctx, "acme", "co-1", "co-1")
	if co == cu || inner.calls != 6 {
		t.Fatalf("company %q and customer %q streams after %d calls; want both asked, apart", co, cu, inner.calls)
	}
	d.InvoiceStream(ctx, "acme", "co-1", "inv-1") // the map is full: it starts over
	if inner.calls != 7 {
		t.Fatalf("%d calls; want the full map emptied, so the invoice asked again (7)", inner.calls)
	}

	before, _ := d.Company(ctx, "acme", "co-1")
	inner.legalName = "New" // updated, say on another instance
	after, _ := d.Company(ctx, "acme", "co-1")
	if before.LegalName != "Old of acme" || after.LegalName != "New of acme" {
		t.Fatalf("company before and after an update: %q, %q; want the update seen at once", before.LegalName, after.LegalName)
	}
}
