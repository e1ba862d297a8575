package pdf

import (
	"strconv"
	"strings"

	"github.com/go-pdf/fpdf"

	"github.com/invoicing/invoicing/einvoice"
)

// Page geometry, millimetres (A4 portrait).
const (
	fontFamily = "go"
	pageW      = 210.0
	pageH      = 297.0
	marginX    = 18.0
	marginTop  = 16.0
	contentW   = pageW - 2*marginX
	bottom     = pageH - 24 // content stops here; the footer lives below
)

type rgb struct{ r, g, b int }

// The palette: near-black text, a muted grey for labels, one accent.
var (
	ink     = rgb{33, 37, 41}
	muted   = rgb{108, 117, 125}
	accent  = rgb{28, 63, 110}
	rule    = rgb{206, 212, 218}
	shade   = rgb{238, 242, 246}
	redMark = rgb{176, 32, 32}
)

// layout draws one document onto a fresh fpdf document.
type layout struct {
	p  *fpdf.Fpdf
	d  einvoice.Document
	c  *coverage
	lc locale
	y  float64 // where the next block starts on the current page
}

func (l *layout) draw() {
	l.newPage()
	l.header()
	l.parties()
	l.lineTable()
	l.summary()
	l.closing()
	l.footers()
}

// newPage starts a page: the DRAFT or VOID stamp first, so that everything
// drawn later lies on top of it; continuation pages repeat who and what.
func (l *layout) newPage() {
	l.p.AddPage()
	l.stamp()
	l.y = marginTop
	if l.p.PageNo() > 1 {
		l.font("B", 9, ink)
		l.cell(marginX, l.y, contentW/2, 5, l.ellipsis(l.c.clean(l.d.Seller.Name), contentW/2), "L")
		l.font("", 9, muted)
		l.cell(marginX+contentW/2, l.y, contentW/2, 5, l.title()+" "+l.lc.t("(continued)"), "R")
		l.y += 10
	}
}

func (l *layout) stamp() {
	word := l.stampWord()
	if word == "" {
		return
	}
	l.p.TransformBegin()
	l.p.TransformRotate(35, pageW/2, pageH/2)
	l.font("B", 110, rgb{242, 222, 222})
	if w := l.p.GetStringWidth(word); w > 220 { // longer words (BROUILLON) stay on the page
		l.p.SetFontSize(110 * 220 / w)
	}
	w := l.p.GetStringWidth(word)
	l.p.Text(pageW/2-w/2, pageH/2+14, word)
	l.p.TransformEnd()
}

func (l *layout) stampWord() string {
	switch l.d.Status {
	case einvoice.StatusDraft:
		return l.lc.t("DRAFT")
	case einvoice.StatusVoid:
		return l.lc.t("VOID")
	}
	return ""
}

func (l *layout) title() string { return l.c.clean(l.lc.title(l.d)) }

// header: the seller on the left, the title and the invoice's facts on the
// right.
func (l *layout) header() {
	top := l.y
	y := l.sellerBlock(top)
	ry := l.titleBlock(top)
	l.y = max(y, ry) + 6
	l.hrule(l.y)
	l.y += 6
}

// sellerBlock draws who sends the invoice; it returns the y below it.
func (l *layout) sellerBlock(top float64) float64 {
	s := l.d.Seller
	l.font("B", 15, accent)
	y := l.para(marginX, top, 100, 6.5, s.Name)
	l.font("", 9, muted)
	if s.TradingName != "" {
		y = l.para(marginX, y, 100, 4.3, s.TradingName)
	}
	l.font("", 9, ink)
	y = l.lines(marginX, y+1, 100, 4.3, addressLines(s.Address))
	l.font("", 8.5, muted)
	return l.lines(marginX, y+1, 100, 4, l.partyIDs(s, true))
}

// titleBlock draws the title, the stamp and the facts at the top right; it
// returns the y below them.
func (l *layout) titleBlock(top float64) float64 {
	const x = 120.0
	l.font("B", 22, ink)
	l.cell(x, top-1, pageW-marginX-x, 9, l.lc.t(kindOf(l.d).heading), "R") // cell shrinks RECHNUNGSKORREKTUR to fit
	y := top + 10
	if w := l.stampWord(); w != "" {
		l.font("B", 11, redMark)
		l.cell(x, y, pageW-marginX-x, 5.5, w, "R")
		y += 6.5
	}
	for _, f := range l.facts() {
		l.font("", 8.5, muted)
		l.cell(x, y, 30, 4.8, f[0], "L")
		l.font("B", 9, ink)
		for _, v := range l.wrap(f[1], pageW-marginX-x-30) {
			l.cell(x+30, y, pageW-marginX-x-30, 4.8, v, "R")
			y += 4.8
		}
	}
	if p := l.d.PrecedingInvoice; p != nil {
		l.font("", 8.5, ink)
		y = l.para(x, y+1, pageW-marginX-x, 4, l.lc.tf("Credit note for invoice %s of %s", p.Number, l.lc.day(p.IssueDate)))
	}
	if l.d.Status == einvoice.StatusVoid && l.d.VoidReason != "" {
		l.font("", 8.5, redMark)
		y = l.para(x, y+1, pageW-marginX-x, 4, l.lc.tf("Voided: %s", l.d.VoidReason))
	}
	return y
}

// facts are the label/value pairs under the title.
func (l *layout) facts() [][2]string {
	d := l.d
	var out [][2]string
	add := func(label, value string) {
		if value != "" {
			out = append(out, [2]string{l.lc.t(label), l.c.clean(value)})
		}
	}
	k := kindOf(d)
	add(k.number, d.Number)
	add(k.date, l.lc.day(d.IssueDate))
	add("Due date", l.lc.day(d.DueDate))
	if d.Delivery != nil {
		add("Delivery date", l.lc.day(d.Delivery.Date))
	}
	if d.BillingPeriod != nil {
		add("Billing period", l.lc.day(d.BillingPeriod.Start)+" – "+l.lc.day(d.BillingPeriod.End))
	}
	add("Buyer reference", d.BuyerReference)
	add("Order reference", d.PurchaseOrderReference)
	add("Currency", d.Currency)
	return out
}

// parties: bill to, and deliver to when the delivery address differs.
func (l *layout) parties() {
	b := l.d.Buyer
	top := l.y
	l.label(marginX, top, l.lc.t("BILL TO"))
	l.font("B", 10.5, ink)
	y := l.para(marginX, top+5, 85, 5, b.Name)
	l.font("", 9, ink)
	if b.TradingName != "" {
		y = l.para(marginX, y, 85, 4.3, b.TradingName)
	}
	y = l.lines(marginX, y, 85, 4.3, addressLines(b.Address))
	l.font("", 8.5, muted)
	y = l.lines(marginX, y+1, 85, 4, l.partyIDs(b, false))
	ry := top
	if d := l.d.Delivery; d != nil && d.Address != nil {
		x := 110.0
		l.label(x, top, l.lc.t("DELIVER TO"))
		l.font("", 9, ink)
		ry = l.lines(x, top+5, pageW-marginX-x, 4.3, addressLines(*d.Address))
	}
	l.y = max(y, ry) + 8
}

// Columns of the line table: x offsets from marginX and widths, mm.
var columns = []struct {
	title string
	w     float64
	align string
}{
	{"#", 8, "L"}, {"Description", 68, "L"}, {"Qty", 16, "R"}, {"Unit", 17, "L"},
	{"Unit price", 24, "R"}, {"VAT", 16, "R"}, {"Net amount", 25, "R"},
}

func (l *layout) tableHeader() {
	l.font("", 7.5, muted)
	l.cell(marginX, l.y, contentW, 4, l.lc.tf("Amounts in %s", l.c.clean(l.d.Currency)), "R")
	l.y += 4.5
	l.p.SetFillColor(shade.r, shade.g, shade.b)
	l.p.Rect(marginX, l.y, contentW, 7, "F")
	l.font("B", 8, muted)
	x := marginX
	for _, c := range columns {
		l.cell(x, l.y+1, c.w, 5, l.lc.t(c.title), c.align)
		x += c.w
	}
	l.y += 8.5
}

// lineTable draws every line; a line that does not fit moves to a new page,
// which repeats the table header.
func (l *layout) lineTable() {
	l.tableHeader()
	for i, line := range l.d.Lines {
		l.font("", 9, ink)
		desc := l.wrap(line.ItemName, columns[1].w)
		l.font("", 7.5, muted)
		note := l.wrap(line.Note, columns[1].w)
		if line.Note == "" {
			note = nil
		}
		h := float64(len(desc))*4.3 + float64(len(note))*3.5 + 3
		if l.y+h > bottom && h <= bottom-marginTop-30 {
			l.newPage()
			l.tableHeader()
		}
		l.lineRow(i, line, desc, note, h)
	}
}

// rowText is one line of a row's description or note.
type rowText struct {
	s    string
	note bool
}

// lineRow draws one line of the table. A row taller than what is left of
// the page (only a description of many short lines can be) continues on
// the next pages, under the repeated header.
func (l *layout) lineRow(i int, line einvoice.Line, desc, note []string, h float64) {
	l.rowCells(i, line)
	texts := make([]rowText, 0, len(desc)+len(note))
	for _, d := range desc {
		texts = append(texts, rowText{d, false})
	}
	for _, n := range note {
		texts = append(texts, rowText{n, true})
	}
	y := l.y + 1
	for _, t := range texts {
		lh := l.rowFont(t.note)
		if y+lh > bottom {
			l.newPage()
			l.tableHeader()
			y = l.y + 1
			l.rowFont(t.note)
		}
		l.cell(marginX+columns[0].w, y, columns[1].w, lh, t.s, "L")
		y += lh
	}
	l.y = max(y+2, l.y+h)
	l.p.SetDrawColor(rule.r, rule.g, rule.b)
	l.p.SetLineWidth(0.15)
	l.p.Line(marginX, l.y-0.5, marginX+contentW, l.y-0.5)
}

// rowFont sets the font of a description or a note line and returns its
// line height.
func (l *layout) rowFont(note bool) float64 {
	if note {
		l.font("", 7.5, muted)
		return 3.5
	}
	l.font("", 9, ink)
	return 4.3
}

// rowCells draws a line's one-line cells: all but the description.
func (l *layout) rowCells(i int, line einvoice.Line) {
	id := line.ID
	if id == "" {
		id = strconv.Itoa(i + 1)
	}
	cells := []string{l.c.clean(id), "", l.lc.number(l.c.clean(line.Quantity)), l.c.clean(l.lc.t(unit(line.UnitCode))),
		l.amount(line.Price), l.c.clean(line.VATCategory) + " " + l.lc.number(rate(line.VATRateBps)), l.amount(line.NetAmount)}
	l.font("", 9, ink)
	x := marginX
	for j, c := range columns {
		if j != 1 {
			l.cell(x, l.y+1, c.w, 4.3, cells[j], c.align)
		}
		x += c.w
	}
}

// summary: the VAT breakdown on the left, the totals on the right, kept
// together on one page.
func (l *layout) summary() {
	h := max(l.vatHeight(), l.totalsHeight())
	if l.y+4+h > bottom {
		l.newPage()
	}
	top := l.y + 4
	l.vatTable(top)
	l.totals(top)
	l.y = top + h + 4
}

// vatHeight is the height vatTable will take.
func (l *layout) vatHeight() float64 {
	h := 10.0
	l.font("", 7.5, muted)
	for _, v := range l.d.VATBreakdown {
		h += 5
		if reason := exemption(v); reason != "" {
			h += 3.5 * float64(len(l.wrap(reason, 100)))
		}
	}
	return h
}

func (l *layout) vatTable(top float64) {
	l.label(marginX, top, l.lc.t("VAT BREAKDOWN"))
	widths := []float64{44, 14, 24, 22}
	heads := []string{"Category", "Rate", "Taxable", "VAT"}
	aligns := []string{"L", "R", "R", "R"}
	y := top + 5
	x := marginX
	l.font("B", 8, muted)
	for i, t := range heads {
		l.cell(x, y, widths[i], 4.5, l.lc.t(t), aligns[i])
		x += widths[i]
	}
	y += 5
	for _, v := range l.d.VATBreakdown {
		cells := []string{l.lc.t(categoryName(v.Category)) + " (" + l.c.clean(v.Category) + ")", l.lc.number(rate(v.RateBps)),
			l.amount(v.TaxableAmount), l.amount(v.TaxAmount)}
		x = marginX
		l.font("", 8.5, ink)
		for i, c := range cells {
			l.cell(x, y, widths[i], 4.5, c, aligns[i])
			x += widths[i]
		}
		y += 4.5
		if reason := exemption(v); reason != "" {
			l.font("", 7.5, muted)
			y = l.para(marginX+3, y, 100, 3.5, reason)
		}
		y += 0.5
	}
}

func exemption(v einvoice.VATBreakdown) string {
	switch {
	case v.ExemptionReason != "" && v.ExemptionReasonCode != "":
		return v.ExemptionReason + " (" + v.ExemptionReasonCode + ")"
	case v.ExemptionReasonCode != "":
		return v.ExemptionReasonCode
	}
	return v.ExemptionReason
}

func (l *layout) totalsHeight() float64 { return 5 + 5.5*float64(len(l.totalRows())) + 10 }

func (l *layout) totalRows() [][2]string {
	t := l.d.Totals
	rows := [][2]string{}
	add := func(label string, v int64) {
		rows = append(rows, [2]string{l.lc.t(label), l.amount(v)})
	}
	if t.LineTotal != t.TaxExclusive {
		add("Sum of lines", t.LineTotal)
	}
	add("Total excl. VAT", t.TaxExclusive)
	add("VAT", t.Tax)
	add("Total incl. VAT", t.TaxInclusive)
	if t.Paid != 0 {
		add("Paid", t.Paid)
	}
	return rows
}

func (l *layout) totals(top float64) {
	x, w := 124.0, pageW-marginX-124.0
	y := top + 5
	for _, r := range l.totalRows() {
		l.font("", 9, muted)
		l.cell(x, y, w/2, 5, r[0], "L")
		l.font("", 9, ink)
		l.cell(x+w/2, y, w/2, 5, r[1], "R")
		y += 5.5
	}
	y += 1
	l.p.SetFillColor(accent.r, accent.g, accent.b)
	l.p.Rect(x, y, w, 9, "F")
	l.font("B", 10, rgb{255, 255, 255})
	l.cell(x, y+2, w/2, 5, l.lc.t(kindOf(l.d).payable), "L")
	l.cell(x+w/2, y+2, w/2, 5, l.c.clean(l.d.Currency)+" "+l.amount(l.d.Totals.Payable), "R")
}

// block is a titled group of paragraphs at the end of the invoice.
type block struct {
	title string
	paras []string
}

// closing: payment instructions on the left, terms and notes on the right,
// on one page when they fit on one, else one after another across pages.
func (l *layout) closing() {
	left := []block{{l.lc.t("PAYMENT"), l.paymentParas()}}
	right := []block{{l.lc.t("TERMS"), nonEmpty(l.d.PaymentTerms)}, {l.lc.t(kindOf(l.d).notes), l.d.Notes}}
	const gutter = 8.0
	w := (contentW - gutter) / 2
	h := max(l.blocksHeight(left, w), l.blocksHeight(right, w))
	if l.y+h > bottom && marginTop+10+h <= bottom {
		l.newPage()
	}
	if l.y+h <= bottom {
		top := l.y
		l.drawBlocks(marginX, top, w, left)
		l.drawBlocks(marginX+w+gutter, top, w, right)
		l.y = top + h
		return
	}
	for _, b := range append(left, right...) {
		l.section(b.title, b.paras)
	}
}

const (
	paraLH  = 4.3 // line height of closing text
	paraGap = 1.5 // between paragraphs
	headH   = 8   // a heading and the space around it
)

func (l *layout) blocksHeight(bs []block, w float64) float64 {
	h := 0.0
	l.font("", 9, ink)
	for _, b := range bs {
		if len(b.paras) == 0 {
			continue
		}
		h += headH
		for _, p := range b.paras {
			h += paraLH*float64(len(l.wrap(p, w))) + paraGap
		}
	}
	return h
}

func (l *layout) drawBlocks(x, y, w float64, bs []block) {
	for _, b := range bs {
		if len(b.paras) == 0 {
			continue
		}
		l.label(x, y+3, b.title)
		y += headH
		l.font("", 9, ink)
		for _, p := range b.paras {
			y = l.para(x, y, w, paraLH, p) + paraGap
		}
	}
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// paymentParas say how to pay: the amount and date, then the account.
func (l *layout) paymentParas() []string {
	var out, account []string
	if l.d.DueDate != "" && l.d.Totals.Payable > 0 { // a paid invoice asks for nothing
		out = append(out, l.lc.tf("Please pay %s by %s.", l.d.Currency+" "+l.amount(l.d.Totals.Payable), l.lc.day(l.d.DueDate)))
	}
	pi := l.d.PaymentInstructions
	if pi == nil {
		return out
	}
	if m := meansName(pi.MeansCode); m != "" {
		account = append(account, l.lc.tf("Payment by %s", l.lc.t(m)))
	}
	if pi.AccountName != "" {
		account = append(account, l.lc.tf("Account holder: %s", pi.AccountName))
	}
	if pi.IBAN != "" {
		account = append(account, "IBAN: "+groupIBAN(pi.IBAN))
	}
	if pi.BIC != "" {
		account = append(account, "BIC: "+pi.BIC)
	}
	if ref := pi.RemittanceInformation; ref != "" {
		account = append(account, l.lc.tf("Reference: %s", ref))
	} else if l.d.Number != "" {
		account = append(account, l.lc.tf("Reference: %s", l.d.Number))
	}
	if len(account) > 0 {
		out = append(out, strings.Join(account, "\n"))
	}
	return out
}

// section is a small heading and paragraphs, breaking pages between lines.
func (l *layout) section(title string, paras []string) {
	if len(paras) == 0 {
		return
	}
	const lh, gap = paraLH, paraGap
	l.font("", 9, ink)
	wrapped := make([][]string, len(paras))
	h := 8.0
	for i, para := range paras {
		wrapped[i] = l.wrap(para, contentW)
		h += lh*float64(len(wrapped[i])) + gap
	}
	// Keep a section on one page when it fits on one; else keep at least
	// its heading with two lines.
	if l.y+h > bottom && (h < bottom-marginTop-10 || l.y+8+2*lh > bottom) {
		l.newPage()
	}
	l.y += 3
	l.label(marginX, l.y, title)
	l.y += 5
	l.font("", 9, ink)
	for _, lines := range wrapped {
		for _, line := range lines {
			if l.y+lh > bottom {
				l.newPage()
				l.font("", 9, ink)
			}
			l.cell(marginX, l.y, contentW, lh, line, "L")
			l.y += lh
		}
		l.y += gap
	}
}

// footers go on every page once the page count is known.
func (l *layout) footers() {
	n := l.p.PageCount()
	s := l.d.Seller
	left := []string{s.Name}
	if s.VATID != "" {
		left = append(left, l.lc.tf("VAT ID %s", s.VATID))
	}
	if s.Email != "" {
		left = append(left, s.Email)
	}
	for i := 1; i <= n; i++ {
		l.p.SetPage(i)
		l.p.SetFont(fontFamily, "", 1) // fpdf skips a SetFont equal to its current one; a page needs its own
		l.p.SetDrawColor(rule.r, rule.g, rule.b)
		l.p.SetLineWidth(0.2)
		l.p.Line(marginX, pageH-17, pageW-marginX, pageH-17)
		l.font("", 7.5, muted)
		l.cell(marginX, pageH-15.5, 122, 4, l.ellipsis(l.c.clean(strings.Join(left, " · ")), 122), "L")
		l.cell(pageW-marginX-60, pageH-15.5, 60, 4, l.title()+" · "+l.lc.tf("Page %d of %d", i, n), "R")
	}
}

// Drawing helpers.

// font sets the text's size and colour; style "B" is bold. Bold is the
// regular face filled and stroked in its own colour (text rendering mode
// 2) rather than Go Bold: fpdf parses each font again for every document,
// and a second face doubled the cost of a render (docs/benchmarks.md).
func (l *layout) font(style string, size float64, c rgb) {
	l.p.SetFont(fontFamily, "", size)
	l.p.SetTextColor(c.r, c.g, c.b)
	if style == "B" {
		l.p.SetDrawColor(c.r, c.g, c.b)
		l.p.SetLineWidth(size * boldStroke)
		l.p.SetTextRenderingMode(2)
		return
	}
	l.p.SetTextRenderingMode(0)
}

// boldStroke is the outline that makes the regular face bold, in mm per
// point of font size (3 % of the size).
const boldStroke = 0.03 * 25.4 / 72

// cell draws one line of already cleaned text. Text wider than the cell
// (the largest amounts the API accepts, a long quantity) is set smaller
// rather than run into its neighbour.
func (l *layout) cell(x, y, w, h float64, s, align string) {
	l.p.SetXY(x, y)
	room := w - 2*l.p.GetCellMargin()
	if tw := l.p.GetStringWidth(s); tw > room && room > 0 {
		pt, _ := l.p.GetFontSize()
		l.p.SetFontSize(pt * room / tw)
		defer l.p.SetFontSize(pt)
	}
	l.p.CellFormat(w, h, s, "", 0, align, false, 0, "")
}

// ellipsis shortens s to fit w in the current font, marking the cut.
func (l *layout) ellipsis(s string, w float64) string {
	room := w - 2*l.p.GetCellMargin()
	if l.p.GetStringWidth(s) <= room {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && l.p.GetStringWidth(string(r)+"…") > room {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

func (l *layout) label(x, y float64, s string) {
	l.font("B", 7.5, muted)
	l.cell(x, y, 80, 4, s, "L")
}

// para draws raw text wrapped to w and returns the y below it.
func (l *layout) para(x, y, w, lh float64, s string) float64 {
	return l.lines(x, y, w, lh, l.wrap(s, w))
}

// lines draws one cell per line (wrapping each to w) and returns the y
// below them.
func (l *layout) lines(x, y, w, lh float64, lines []string) float64 {
	for _, line := range lines {
		for _, part := range l.wrap(line, w) {
			l.cell(x, y, w, lh, part, "L")
			y += lh
		}
	}
	return y
}

// wrap cleans s and splits it into lines that fit w in the current font.
func (l *layout) wrap(s string, w float64) []string {
	var out []string
	for _, para := range l.c.cleanLines(s) {
		if para == "" {
			out = append(out, "")
			continue
		}
		out = append(out, l.p.SplitText(para, w)...)
	}
	return out
}

func (l *layout) hrule(y float64) {
	l.p.SetDrawColor(rule.r, rule.g, rule.b)
	l.p.SetLineWidth(0.3)
	l.p.Line(marginX, y, pageW-marginX, y)
}

// addressLines are an address as printed: street lines, post code and
// city, subdivision and country.
func addressLines(a einvoice.Address) []string {
	var out []string
	for _, s := range []string{a.Line1, a.Line2, strings.TrimSpace(a.PostalCode + " " + a.City)} {
		if s != "" {
			out = append(out, s)
		}
	}
	last := a.CountryCode
	if a.Subdivision != "" {
		last = strings.TrimSpace(a.Subdivision + " " + last)
	}
	if last != "" {
		out = append(out, last)
	}
	return out
}

// partyIDs are a party's identifiers and contact, one per line.
func (l *layout) partyIDs(p einvoice.Party, seller bool) []string {
	var out []string
	if p.VATID != "" {
		out = append(out, l.lc.tf("VAT ID: %s", p.VATID))
	}
	if seller && p.TaxRegistration != "" {
		out = append(out, l.lc.tf("Tax number: %s", p.TaxRegistration))
	}
	if p.LegalRegistration != nil && p.LegalRegistration.Value != "" {
		out = append(out, l.lc.tf("Registration: %s", p.LegalRegistration.Value))
	}
	for _, id := range p.Identifiers {
		out = append(out, l.lc.tf("ID: %s", id.Value))
	}
	if p.Email != "" {
		out = append(out, p.Email)
	}
	if e := p.ElectronicAddress; e != nil && e.Value != "" && e.Value != p.Email {
		out = append(out, l.lc.tf("E-invoicing address: %s", e.Value))
	}
	return out
}

// amount is minor units of the document's currency as the locale writes
// them; the currency was checked before layout began.
func (l *layout) amount(minor int64) string {
	s, _ := money(minor, l.d.Currency)
	return l.lc.number(s)
}

func meansName(code string) string {
	switch code {
	case einvoice.MeansSEPACreditTransfer:
		return "SEPA credit transfer"
	case einvoice.MeansCreditTransfer:
		return "credit transfer"
	case einvoice.MeansPaymentToBankAccount:
		return "payment to bank account"
	}
	return ""
}

// groupIBAN prints an IBAN in groups of four, as banks do.
func groupIBAN(iban string) string {
	s := strings.ReplaceAll(iban, " ", "")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}
