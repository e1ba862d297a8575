package main

import (
	"bytes"
	"fmt"
	"net/http"
	"sync"
	"testing"
)

// TestACreateIsReadableAtOnceThroughEitherInstance: a 201 means readable,
// through the instance that answered it and through any other. Two
// instances share one database; each projection runs in exactly one of
// them (its lock), so a create through the other waits on the checkpoints
// in the database, and a create through the leader on its runners' memory.
// Creates go through both, concurrently, and each 201 is followed at once
// by a GET through the other instance, which must find the same invoice.
func TestACreateIsReadableAtOnceThroughEitherInstance(t *testing.T) {
	a := newService(t)
	b := newService(t, func(c *config) { c.DatabaseURL = a.dbURL })
	bill := newBilling(t, a, "read-your-writes", minimalCompany)
	instances := [2]*service{a, b}
	const n = 48
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			via, other := instances[i%2], instances[(i+1)%2]
			created := via.post(t, bill.path(""), bill.tok, fmt.Sprint("read-your-writes-", i), bill.invoiceBody(t, nil))
			if created.status != http.StatusCreated {
				t.Errorf("create %d: %d %s", i, created.status, created.body)
				return
			}
			id, _ := created.object(t)["id"].(string)
			for _, s := range []*service{other, via} {
				got := s.get(t, bill.path("/"+id), bill.tok)
				if got.status != http.StatusOK || !bytes.Equal(got.body, created.body) {
					t.Errorf("GET %d right after its 201: %d %s, want 200 with the created invoice %s", i, got.status, got.body, created.body)
				}
			}
		}()
	}
	wg.Wait()
}
