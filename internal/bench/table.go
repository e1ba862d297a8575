package bench

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// table is a plain-text table: the first column left-aligned, the others
// right-aligned, columns two spaces apart, a rule under the header.
type table struct {
	Header []string
	Rows   [][]string
}

// add appends a row; missing cells render empty.
func (t *table) add(cells ...string) { t.Rows = append(t.Rows, cells) }

// String renders the table, one line per row, each ending in a newline.
func (t *table) String() string {
	cols := len(t.Header)
	for _, r := range t.Rows {
		cols = max(cols, len(r))
	}
	width := make([]int, cols)
	for _, r := range append([][]string{t.Header}, t.Rows...) {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	line := func(r []string) {
		var l strings.Builder
		for i := range cols {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				l.WriteString("  ")
			}
			if i == 0 {
				l.WriteString(c + pad)
			} else {
				l.WriteString(pad + c)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
	line(t.Header)
	total := 0
	for _, w := range width {
		total += w
	}
	b.WriteString(strings.Repeat("-", total+2*(cols-1)) + "\n")
	for _, r := range t.Rows {
		line(r)
	}
	return b.String()
}

// Number formatting for cells; "-" stands for "not measured".

func fmtF(v float64, decimals int) string {
	if v != v { // NaN: not measured
		return "-"
	}
	return fmt.Sprintf("%.*f", decimals, v)
}

func fmtMs(d float64) string { return fmtF(d, 2) }

func fmtRatio(num, den float64) string {
	if den <= 0 || num != num || den != den {
		return "-"
	}
	return fmt.Sprintf("%.3f", num/den)
}
