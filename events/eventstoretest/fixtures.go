package eventstoretest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/invoicing/invoicing/events"
)

// AppendCompanies appends n CompanyCreated events, each to a stream of its
// own, and returns the position of the last: a log for the tests of its
// followers (projection runners, the audit sealer) to follow.
func AppendCompanies(t testing.TB, store events.Store, n int) events.Position {
	t.Helper()
	var last events.Position
	for i := 0; i < n; i++ {
		stream := fmt.Sprintf("company-%s", uuid.NewString())
		data, err := json.Marshal(events.CompanyCreated{
			CompanyID: uuid.NewString(), AccountID: "acct", LegalName: fmt.Sprintf("Company %d", i),
			Address:         events.Address{City: "Berlin", CountryCode: "DE", Line1: "Str 1", PostalCode: "10115"},
			DefaultCurrency: "EUR", DefaultLanguage: "en", DefaultPaymentTermsDays: 30,
			Identifiers: []events.Identifier{}, CreatedAt: time.Now().UTC().Truncate(time.Microsecond),
		})
		if err != nil {
			t.Fatal(err)
		}
		res, err := store.Append(context.Background(), stream, events.NoStream(), events.EventData{
			ID: events.EventID(stream, 0), Type: events.TypeCompanyCreated, Data: data, Metadata: []byte(`{}`),
		})
		if err != nil {
			t.Fatal(err)
		}
		last = res.Position
	}
	return last
}
