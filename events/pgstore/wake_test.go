package pgstore

import (
	"reflect"
	"testing"
)

func TestNotificationPayload(t *testing.T) {
	tests := []struct {
		payload string
		want    notification
	}{
		{"", notification{}}, // a version before typed notifications: wake every subscriber
		{"garbage", notification{}},
		{" InvoiceDrafted", notification{}},
		{"4f1c InvoiceDrafted", notification{sender: "4f1c", types: []string{"InvoiceDrafted"}}},
		{"4f1c CompanyCreated,InvoiceDrafted", notification{sender: "4f1c", types: []string{"CompanyCreated", "InvoiceDrafted"}}},
	}
	for _, tt := range tests {
		if got := parseNotification(tt.payload); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseNotification(%q) = %+v, want %+v", tt.payload, got, tt.want)
		}
	}
	n := notification{sender: "4f1c", types: []string{"CompanyCreated", "InvoiceDrafted"}}
	if got := parseNotification(n.String()); !reflect.DeepEqual(got, n) {
		t.Errorf("round trip of %+v gave %+v", n, got)
	}
}

func TestPendingTypesAreGatheredOnce(t *testing.T) {
	var p pendingTypes
	p.add([]string{"InvoiceDrafted", "InvoiceDrafted"})
	p.add([]string{"CompanyCreated", "InvoiceDrafted"})
	if got, want := p.take(), []string{"CompanyCreated", "InvoiceDrafted"}; !reflect.DeepEqual(got, want) {
		t.Errorf("take() = %v, want %v", got, want)
	}
	if got := p.take(); got != nil {
		t.Errorf("take() after take() = %v, want nil", got)
	}
}
