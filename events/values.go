package events

// Address is a postal address, as sent by clients and frozen in snapshots.
type Address struct {
	City        string `json:"city"`
	CountryCode string `json:"country_code"`
	Line1       string `json:"line_1"`
	Line2       string `json:"line_2,omitempty"`
	PostalCode  string `json:"postal_code"`
	Region      string `json:"region,omitempty"`
}

// Identifier is a registration or tax identifier of a company or customer.
type Identifier struct {
	CountryCode string `json:"country_code,omitempty"`
	Scheme      string `json:"scheme"`
	Value       string `json:"value"`
}
