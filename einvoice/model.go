// Package einvoice makes EN 16931 electronic invoices and credit notes
// (type code 381, referring to the invoice they correct): the document model
// (named after the standard's business terms), its UBL 2.1 and UN/CEFACT
// CII D16B renderings, the business rules the service checks before it
// renders (Check), and a validator for documents read back from XML.
//
// A Document is a plain value: rendering is a pure function of it (no clock,
// no random ids), so the same invoice gives byte-identical XML every time.
// Amounts are int64 minor units of the document currency, formatted with
// the currency's ISO 4217 exponent; no floating point touches an amount.
package einvoice

// SpecificationID is the specification identifier (BT-24) of every
// document the service makes: the EN 16931 core, no CIUS.
const SpecificationID = "urn:cen.eu:en16931:2017"

// Invoice type codes (BT-3, UNTDID 1001).
const (
	TypeCommercialInvoice = "380"
	TypeCreditNote        = "381"
)

// Document states, for the PDF stamp; they are not business terms.
const (
	StatusDraft  = "draft"
	StatusIssued = "issued"
	StatusVoid   = "void"
)

// VAT category codes (BT-118, BT-151; UNTDID 5305 as EN 16931 restricts it).
const (
	CategoryStandard       = "S"  // standard rate
	CategoryZero           = "Z"  // zero rated goods
	CategoryExempt         = "E"  // exempt from VAT
	CategoryReverseCharge  = "AE" // VAT reverse charge
	CategoryIntraCommunity = "K"  // intra-community supply (VAT exempt for EEA intra-community supply)
	CategoryExport         = "G"  // free export item, VAT not charged
	CategoryNotSubject     = "O"  // services outside scope of tax
	CategoryCanaryIslands  = "L"  // Canary Islands general indirect tax (IGIC)
	CategoryCeutaMelilla   = "M"  // tax for production, services and importation in Ceuta and Melilla (IPSI)
)

// Payment means codes (BT-81, UNTDID 4461) the service uses.
const (
	MeansCreditTransfer       = "30"
	MeansSEPACreditTransfer   = "58"
	MeansPaymentToBankAccount = "42"
)

// Document is one EN 16931 invoice or credit note. Optional business terms are "" (text),
// nil (groups) or absent from a slice; amounts are minor units of Currency.
type Document struct {
	Number                 string   // BT-1 invoice number
	IssueDate              string   // BT-2 issue date, YYYY-MM-DD
	TypeCode               string   // BT-3 invoice type code: TypeCommercialInvoice or TypeCreditNote
	Currency               string   // BT-5 invoice currency code (ISO 4217)
	DueDate                string   // BT-9 payment due date, YYYY-MM-DD
	BuyerReference         string   // BT-10 buyer reference
	PurchaseOrderReference string   // BT-13 purchase order reference
	Notes                  []string // BG-1 / BT-22 invoice notes (the invoice's notes)
	PaymentTerms           string   // BT-20 payment terms (the invoice's terms text)
	// PrecedingInvoice is BG-3, the invoice a credit note corrects; nil
	// for an invoice.
	PrecedingInvoice *DocumentReference

	Seller              Party                // BG-4 seller
	Buyer               Party                // BG-7 buyer
	Delivery            *Delivery            // BG-13 delivery information
	BillingPeriod       *Period              // BG-14 invoicing period
	PaymentInstructions *PaymentInstructions // BG-16 payment instructions

	Lines        []Line         // BG-25 invoice lines, at least one
	VATBreakdown []VATBreakdown // BG-23 VAT breakdown, one per category and rate
	Totals       Totals         // BG-22 document totals

	// Not business terms: what the PDF shows around the document.
	Status     string // StatusDraft, StatusIssued or StatusVoid
	Language   string // the invoice's language (BCP 47), for labels
	VoidReason string // why a void invoice was voided
}

// DocumentReference is a preceding invoice reference (BG-3).
type DocumentReference struct {
	Number    string // BT-25 preceding invoice reference
	IssueDate string // BT-26 preceding invoice issue date, YYYY-MM-DD
}

// Party is the seller (BG-4) or the buyer (BG-7). The seller's and the
// buyer's terms have different ids; both are given, seller first.
type Party struct {
	Name        string // BT-27 seller name / BT-44 buyer name
	TradingName string // BT-28 seller trading name / BT-45 buyer trading name
	// Identifiers are BT-29 seller identifiers / BT-46 buyer identifiers,
	// each with an optional ISO 6523 ICD scheme (BT-29-1 / BT-46-1).
	Identifiers []Identifier
	// LegalRegistration is BT-30 / BT-47 with its scheme (BT-30-1 /
	// BT-47-1); nil when absent.
	LegalRegistration *Identifier
	VATID             string             // BT-31 seller VAT identifier / BT-48 buyer VAT identifier, with its country prefix
	TaxRegistration   string             // BT-32 seller tax registration identifier (seller only)
	ElectronicAddress *ElectronicAddress // BT-34 / BT-49 electronic address with its EAS scheme
	Address           Address            // BG-5 seller postal address / BG-8 buyer postal address
	Email             string             // BT-43 seller contact email / BT-58 buyer contact email
}

// Identifier is an identifier with an optional ISO 6523 ICD scheme code
// (such as "0088" GLN, "0002" SIRENE); Scheme "" means none.
type Identifier struct {
	Scheme string
	Value  string
}

// ElectronicAddress is an electronic address (BT-34 / BT-49) and its
// scheme from the EAS code list (BT-34-1 / BT-49-1, such as "0088" or "EM").
type ElectronicAddress struct {
	Scheme string
	Value  string
}

// Address is a postal address: BG-5 (seller), BG-8 (buyer) or BG-15
// (deliver to). The ids are the seller's; the others follow the same order.
type Address struct {
	Line1       string // BT-35 / BT-50 / BT-75 address line 1
	Line2       string // BT-36 / BT-51 / BT-76 address line 2
	City        string // BT-37 / BT-52 / BT-77 city
	PostalCode  string // BT-38 / BT-53 / BT-78 post code
	Subdivision string // BT-39 / BT-54 / BT-79 country subdivision
	CountryCode string // BT-40 / BT-55 / BT-80 country code (ISO 3166-1 alpha-2)
}

// Delivery is the delivery information (BG-13).
type Delivery struct {
	Date    string   // BT-72 actual delivery date, YYYY-MM-DD
	Address *Address // BG-15 deliver to address; nil when absent
}

// Period is the invoicing period (BG-14).
type Period struct {
	Start string // BT-73 invoicing period start date, YYYY-MM-DD
	End   string // BT-74 invoicing period end date, YYYY-MM-DD
}

// PaymentInstructions are BG-16 with one credit transfer (BG-17).
type PaymentInstructions struct {
	MeansCode             string // BT-81 payment means type code (UNTDID 4461)
	RemittanceInformation string // BT-83 remittance information
	IBAN                  string // BT-84 payment account identifier
	AccountName           string // BT-85 payment account name
	BIC                   string // BT-86 payment service provider identifier
}

// Line is one invoice line (BG-25).
type Line struct {
	ID          string // BT-126 invoice line identifier
	Note        string // BT-127 invoice line note
	Quantity    string // BT-129 invoiced quantity, an exact decimal string ("1.5")
	UnitCode    string // BT-130 unit of measure code (UN/ECE Rec 20/21)
	NetAmount   int64  // BT-131 invoice line net amount, minor units
	ItemName    string // BT-153 item name (the line's description)
	Price       int64  // BT-146 item net price per one unit, minor units
	VATCategory string // BT-151 invoiced item VAT category code
	VATRateBps  int64  // BT-152 invoiced item VAT rate, basis points (1900 = 19 %)
}

// VATBreakdown is one VAT breakdown (BG-23): one per category and rate.
type VATBreakdown struct {
	TaxableAmount       int64  // BT-116 VAT category taxable amount, minor units
	TaxAmount           int64  // BT-117 VAT category tax amount, minor units
	Category            string // BT-118 VAT category code
	RateBps             int64  // BT-119 VAT category rate, basis points
	ExemptionReason     string // BT-120 VAT exemption reason text
	ExemptionReasonCode string // BT-121 VAT exemption reason code (VATEX)
}

// Totals are the document totals (BG-22), minor units.
type Totals struct {
	LineTotal    int64 // BT-106 sum of invoice line net amounts
	TaxExclusive int64 // BT-109 invoice total amount without VAT
	Tax          int64 // BT-110 invoice total VAT amount
	TaxInclusive int64 // BT-112 invoice total amount with VAT
	Paid         int64 // BT-113 paid amount
	Payable      int64 // BT-115 amount due for payment
}

// CurrencyExponent is the ISO 4217 minor unit (the number of decimals) of
// currency, and whether the code is one EN 16931 accepts (its BR-CL-04
// list) with a defined minor unit. Codes without one (gold, SDR, test
// codes) report false: an amount in them cannot be written.
func CurrencyExponent(currency string) (int, bool) {
	e, ok := currencyExponents[currency]
	return e, ok
}

// MaxDecimals is the most decimals EN 16931 allows in an amount (the
// BR-DEC rules): a currency with a larger exponent cannot be rendered.
const MaxDecimals = 2

// currencyExponents holds every ISO 4217 code of EN 16931's code list with a
// minor unit; CurrencyExponent reads it (never written: a table, not state).
var currencyExponents = func() map[string]int {
	m := map[string]int{}
	for _, c := range []string{
		"AED", "AFN", "ALL", "AMD", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT",
		"BMD", "BND", "BOB", "BOV", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD", "CAD", "CDF",
		"CHE", "CHF", "CHW", "CNH", "CNY", "COP", "COU", "CRC", "CUP", "CVE", "CZK", "DKK",
		"DOP", "DZD", "EGP", "ERN", "ETB", "EUR", "FJD", "FKP", "GBP", "GEL", "GHS", "GIP",
		"GMD", "GTQ", "GYD", "HKD", "HNL", "HTG", "HUF", "IDR", "ILS", "INR", "IRR", "JMD",
		"KES", "KGS", "KHR", "KPW", "KYD", "KZT", "LAK", "LBP", "LKR", "LRD", "LSL", "MAD",
		"MDL", "MGA", "MKD", "MMK", "MNT", "MOP", "MRU", "MUR", "MVR", "MWK", "MXN", "MXV",
		"MYR", "MZN", "NAD", "NGN", "NIO", "NOK", "NPR", "NZD", "PAB", "PEN", "PGK", "PHP",
		"PKR", "PLN", "QAR", "RON", "RSD", "RUB", "SAR", "SBD", "SCR", "SDG", "SEK", "SGD",
		"SHP", "SLE", "SOS", "SRD", "SSP", "STD", "SVC", "SYP", "SZL", "THB", "TJS", "TMT",
		"TOP", "TRY", "TTD", "TWD", "TZS", "UAH", "USD", "USN", "UYU", "UZS", "VED", "VES",
		"WST", "XCD", "XCG", "YER", "ZAR", "ZMW", "ZWG",
	} {
		m[c] = 2
	}
	for _, c := range []string{
		"BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI",
		"VND", "VUV", "XAF", "XOF", "XPF",
	} {
		m[c] = 0
	}
	for _, c := range []string{"BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"} {
		m[c] = 3
	}
	for _, c := range []string{"CLF", "UYW"} {
		m[c] = 4
	}
	return m
}()
