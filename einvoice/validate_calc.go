package einvoice

import (
	"math/big"
	"strings"
)

// check adds the rules only a document read back can break: mandatory
// elements, the two-decimal limit, and the calculation rules.
func (rb *readBack) check(c *checker) {
	rb.presence(c)
	for _, s := range rb.notDecimal {
		c.add("XML-Schema", "", "%q is not a decimal amount", s)
	}
	for _, d := range rb.decimals {
		if _, f, ok := strings.Cut(d.value, "."); ok && len(f) > MaxDecimals {
			c.add(d.rule, "", "the amount %s (%s) has more than %d decimals", d.value, d.term, MaxDecimals)
		}
	}
	rb.totals(c)
	rb.categories(c)
}

func (rb *readBack) presence(c *checker) {
	if rb.specID == "" {
		c.add("BR-01", "", "an invoice shall have a specification identifier (BT-24)")
	}
	if !rb.sellerAddress {
		c.add("BR-08", "", "an invoice shall contain the seller postal address (BG-5)")
	}
	if !rb.buyerAddress {
		c.add("BR-10", "", "an invoice shall contain the buyer postal address (BG-8)")
	}
	for _, m := range []struct {
		rule, what string
		v          *big.Rat
	}{
		{"BR-12", "the sum of invoice line net amounts (BT-106)", rb.lineTotal},
		{"BR-13", "the invoice total amount without VAT (BT-109)", rb.taxExclusive},
		{"BR-14", "the invoice total amount with VAT (BT-112)", rb.taxInclusive},
		{"BR-15", "the amount due for payment (BT-115)", rb.payable},
	} {
		if m.v == nil {
			c.add(m.rule, "", "an invoice shall have %s", m.what)
		}
	}
	for i, l := range rb.lines {
		if l.net == nil {
			c.add("BR-24", "", "invoice line %d shall have an invoice line net amount (BT-131)", i+1)
		}
		if l.price == nil {
			c.add("BR-26", "", "invoice line %d shall have an item net price (BT-146)", i+1)
		}
	}
	for _, t := range rb.taxes {
		if t.taxable == nil {
			c.add("BR-45", "", "each VAT breakdown (BG-23) shall have a VAT category taxable amount (BT-116)")
		}
		if t.tax == nil {
			c.add("BR-46", "", "each VAT breakdown (BG-23) shall have a VAT category tax amount (BT-117)")
		}
		if t.category == "" {
			c.add("BR-47", "", "each VAT breakdown (BG-23) shall be defined through a VAT category code (BT-118)")
		}
	}
}

// orZero reads an absent amount as 0.
func orZero(r *big.Rat) *big.Rat {
	if r == nil {
		return new(big.Rat)
	}
	return r
}

func add(rs ...*big.Rat) *big.Rat {
	s := new(big.Rat)
	for _, r := range rs {
		s.Add(s, orZero(r))
	}
	return s
}

func neg(r *big.Rat) *big.Rat { return new(big.Rat).Neg(orZero(r)) }

// round2 rounds to two decimals as XPath's round does (half towards
// positive infinity), which is how CEN's rules compare sums.
func round2(r *big.Rat) *big.Rat {
	x := new(big.Rat).Mul(r, big.NewRat(100, 1))
	x.Add(x, big.NewRat(1, 2))
	q := new(big.Int).Div(x.Num(), x.Denom()) // Euclidean: floor for a positive divisor
	return new(big.Rat).SetFrac(q, big.NewInt(100))
}

func (rb *readBack) totals(c *checker) {
	var nets []*big.Rat
	for _, l := range rb.lines {
		nets = append(nets, l.net)
	}
	if rb.lineTotal != nil && rb.lineTotal.Cmp(round2(add(nets...))) != 0 {
		c.add("BR-CO-10", "", "the sum of invoice line net amounts (BT-106) %s is not the sum of the line net amounts (BT-131) %s",
			rb.lineTotal.FloatString(2), add(nets...).FloatString(2))
	}
	if rb.taxExclusive != nil && rb.lineTotal != nil &&
		rb.taxExclusive.Cmp(round2(add(rb.lineTotal, rb.chargeTotal, neg(rb.allowanceTotal)))) != 0 {
		c.add("BR-CO-13", "", "the invoice total without VAT (BT-109) shall be the line net sum (BT-106) minus allowances (BT-107) plus charges (BT-108)")
	}
	var taxes []*big.Rat
	for _, t := range rb.taxes {
		taxes = append(taxes, t.tax)
	}
	if rb.tax != nil && len(rb.taxes) > 0 && rb.tax.Cmp(round2(add(taxes...))) != 0 {
		c.add("BR-CO-14", "", "the invoice total VAT amount (BT-110) shall be the sum of the VAT category tax amounts (BT-117)")
	}
	if rb.taxInclusive != nil && rb.taxExclusive != nil && rb.taxInclusive.Cmp(round2(add(rb.taxExclusive, rb.tax))) != 0 {
		c.add("BR-CO-15", "", "the invoice total with VAT (BT-112) shall be the total without VAT (BT-109) plus the total VAT (BT-110)")
	}
	if rb.payable != nil && rb.taxInclusive != nil && rb.payable.Cmp(round2(add(rb.taxInclusive, neg(rb.paid), rb.rounding))) != 0 {
		c.add("BR-CO-16", "", "the amount due for payment (BT-115) shall be the total with VAT (BT-112) minus the paid amount (BT-113) plus rounding (BT-114)")
	}
	for _, t := range rb.taxes {
		rb.categoryTax(c, t)
	}
}

// categoryTax is BR-CO-17: the tax of a breakdown is its taxable amount
// times its rate, within CEN's tolerance of one unit either way.
func (rb *readBack) categoryTax(c *checker, t rbTax) {
	if t.rate == nil || t.tax == nil || t.taxable == nil {
		return
	}
	absTax, absTaxable := new(big.Rat).Abs(t.tax), new(big.Rat).Abs(t.taxable)
	if roundInt(t.rate).Sign() == 0 {
		if roundInt(t.tax).Sign() != 0 {
			c.add("BR-CO-17", "", "a VAT breakdown with rate 0 shall have tax amount 0")
		}
		return
	}
	want := round2(new(big.Rat).Mul(absTaxable, new(big.Rat).Quo(t.rate, big.NewRat(100, 1))))
	if !within(absTax, want) {
		c.add("BR-CO-17", "", "the VAT category tax amount (BT-117) %s shall be the taxable amount (BT-116) times the rate (BT-119): %s",
			t.tax.FloatString(2), want.FloatString(2))
	}
}

// within is |a - b| < 1, CEN's tolerance.
func within(a, b *big.Rat) bool {
	d := new(big.Rat).Sub(a, b)
	return new(big.Rat).Abs(d).Cmp(big.NewRat(1, 1)) < 0
}

// roundInt is XPath's round (half towards positive infinity) to an integer.
func roundInt(r *big.Rat) *big.Int {
	x := new(big.Rat).Add(r, big.NewRat(1, 2))
	return new(big.Int).Div(x.Num(), x.Denom())
}

// perRate are the categories whose breakdowns are per rate (at least one
// each); the others have exactly one breakdown and tax 0.
var perRate = map[string]bool{CategoryStandard: true, CategoryCanaryIslands: true, CategoryCeutaMelilla: true}

// categories checks rules -01 (a breakdown for each category used), -08
// (its taxable amount is what the lines, allowances and charges of the
// category make) and -09 (tax 0 for the exempt categories).
func (rb *readBack) categories(c *checker) {
	used := map[string]bool{}
	for _, l := range rb.lines {
		used[l.category] = true
	}
	for _, a := range rb.allowances {
		used[a.category] = true
	}
	for cat := range used {
		r, ok := categoryRules[cat]
		if !ok {
			continue
		}
		n := 0
		for _, t := range rb.taxes {
			if t.category == cat {
				n++
			}
		}
		if n == 0 || (!perRate[cat] && n != 1) {
			c.add(r.prefix+"-01", "", "an invoice with %s items shall have %s VAT breakdown of that category", r.name, map[bool]string{true: "at least one", false: "exactly one"}[perRate[cat]])
		}
	}
	for _, t := range rb.taxes {
		rb.categoryTaxable(c, t)
	}
}

func (rb *readBack) categoryTaxable(c *checker, t rbTax) {
	r, ok := categoryRules[t.category]
	if !ok || t.taxable == nil {
		return
	}
	same := func(cat string, rate *big.Rat) bool {
		return cat == t.category && (!perRate[cat] || (rate != nil && t.rate != nil && rate.Cmp(t.rate) == 0))
	}
	sum := new(big.Rat)
	for _, l := range rb.lines {
		if same(l.category, l.rate) {
			sum.Add(sum, orZero(l.net))
		}
	}
	for _, a := range rb.allowances {
		if same(a.category, a.rate) {
			if a.charge {
				sum.Add(sum, orZero(a.amount))
			} else {
				sum.Sub(sum, orZero(a.amount))
			}
		}
	}
	if (perRate[t.category] && !within(t.taxable, sum)) || (!perRate[t.category] && t.taxable.Cmp(sum) != 0) {
		c.add(r.prefix+"-08", "", "the taxable amount (BT-116) %s of the %s VAT breakdown shall be its lines' net amounts plus charges minus allowances: %s",
			t.taxable.FloatString(2), r.name, sum.FloatString(2))
	}
	if !perRate[t.category] && t.tax != nil && t.tax.Sign() != 0 {
		c.add(r.prefix+"-09", "", "the tax amount (BT-117) of the %s VAT breakdown shall be 0", r.name)
	}
}
