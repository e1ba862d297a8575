package pgstore_test

import (
	"testing"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/events/eventstoretest"
)

func TestConformance(t *testing.T) {
	eventstoretest.Run(t, func(t *testing.T) events.Store {
		store, _ := newStore(t)
		return store
	})
}
