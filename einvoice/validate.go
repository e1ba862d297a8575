package einvoice

import (
	"errors"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strings"
)

// Syntaxes Validate recognises.
const (
	SyntaxUBL = "UBL"
	SyntaxCII = "CII"
)

// ErrNotAnInvoice means a well-formed XML document is neither a UBL 2.1
// Invoice or CreditNote nor a CII CrossIndustryInvoice.
var ErrNotAnInvoice = errors.New("einvoice: not a UBL Invoice, UBL CreditNote or CII CrossIndustryInvoice")

// Report is what Validate finds in one document.
type Report struct {
	Syntax   string
	Problems []Problem // Path names the record field when the rule is one of Check's; "" otherwise
}

// Validate reads a UBL or CII document (the service's or anyone's) and
// checks the EN 16931 rules the service implements: Check's business rules
// on the terms read back, the mandatory elements (BR-01 to BR-16), the
// calculation rules (BR-CO-10, BR-CO-13 to BR-CO-17, the VAT breakdown
// rules -01, -08 and -09 of every category) and the two-decimal rule on
// amounts (BR-DEC). Amounts are exact decimals (math/big), not floating
// point. It is no XML Schema check: CEN's artefacts remain the official
// check. The error is for input that is not an e-invoice at all.
func Validate(r io.Reader) (Report, error) {
	root, err := parseTree(r)
	if err != nil {
		return Report{}, err
	}
	var rb *readBack
	var syntax string
	switch {
	case root.space == ublInvoiceNS && root.local == "Invoice",
		root.space == ublCreditNoteNS && root.local == "CreditNote":
		syntax, rb = SyntaxUBL, readUBL(root)
	case root.space == ciiRSMNS && root.local == "CrossIndustryInvoice":
		syntax, rb = SyntaxCII, readCII(root)
	default:
		return Report{}, fmt.Errorf("%w (root element {%s}%s)", ErrNotAnInvoice, root.space, root.local)
	}
	c := checker{d: &rb.doc, taxRepVAT: rb.taxRepVAT, foreign: true, syntax: syntax}
	c.run()
	rb.check(&c)
	sort.SliceStable(c.problems, func(i, j int) bool { return ruleLess(c.problems[i].Rule, c.problems[j].Rule) })
	return Report{Syntax: syntax, Problems: c.problems}, nil
}

// ruleLess orders rule ids as people read them: BR-2 before BR-10.
func ruleLess(a, b string) bool {
	pa, na := splitRule(a)
	pb, nb := splitRule(b)
	if pa != pb {
		return pa < pb
	}
	return na < nb
}

func splitRule(r string) (string, int) {
	i := strings.LastIndexByte(r, '-')
	n := 0
	if i < 0 {
		return r, 0
	}
	if _, err := fmt.Sscanf(r[i+1:], "%d", &n); err != nil {
		return r, 0
	}
	return r[:i], n
}

// readBack is a document read back from XML: the business terms as a
// Document (for Check's rules) and what the calculation rules need, with
// exact decimal amounts (nil when absent).
type readBack struct {
	doc                         Document
	taxRepVAT                   string
	specID                      string
	sellerAddress, buyerAddress bool
	lines                       []rbLine
	taxes                       []rbTax
	allowances                  []rbAllowance
	lineTotal, allowanceTotal   *big.Rat
	chargeTotal, taxExclusive   *big.Rat
	tax, taxInclusive, paid     *big.Rat
	rounding, payable           *big.Rat
	decimals                    []rbDecimal
	notDecimal                  []string
}

type rbLine struct {
	net, price *big.Rat
	category   string
	rate       *big.Rat
}

type rbTax struct {
	taxable, tax *big.Rat
	category     string
	rate         *big.Rat
}

type rbAllowance struct {
	charge   bool
	amount   *big.Rat
	category string
	rate     *big.Rat
}

// rbDecimal is an amount whose number of decimals a BR-DEC rule limits.
type rbDecimal struct{ rule, term, value string }

// amount parses an xs:decimal amount; what is not one is noted (the XML
// Schema check's business) and read as absent.
func (rb *readBack) amount(s string) *big.Rat {
	if s == "" {
		return nil
	}
	if !isDecimal(s) {
		rb.notDecimal = append(rb.notDecimal, s)
		return nil
	}
	r, _ := new(big.Rat).SetString(s)
	return r
}

// limited parses an amount a BR-DEC rule limits to two decimals.
func (rb *readBack) limited(rule, term, s string) *big.Rat {
	if s != "" {
		rb.decimals = append(rb.decimals, rbDecimal{rule, term, s})
	}
	return rb.amount(s)
}

// isDecimal is xs:decimal's lexical space: an optional sign, digits, an
// optional point and digits, at least one digit.
func isDecimal(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	i, f, _ := strings.Cut(s, ".")
	return i+f != "" && strings.Trim(i+f, "0123456789") == ""
}

// rateBps turns a percentage into whole basis points (truncated) for
// Check's rate rules, which compare with zero only: a non-zero rate never
// truncates to 0.
func rateBps(r *big.Rat) int64 {
	if r == nil {
		return 0
	}
	n := new(big.Int).Mul(r.Num(), big.NewInt(100))
	n.Quo(n, r.Denom())
	if n.Sign() == 0 {
		return int64(r.Sign())
	}
	if !n.IsInt64() {
		return int64(n.Sign())
	}
	return n.Int64()
}

func ratSign(r *big.Rat) int64 {
	if r == nil {
		return 0
	}
	return int64(r.Sign())
}
