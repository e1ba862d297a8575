package bench

import (
	"bufio"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The idle measurement sets log_min_duration_statement = 0 and this prefix
// for its window, so that every statement is logged with the application
// and database that ran it.
const idleLogPrefix = "%m [%p] %a@%d "

var (
	logEntry    = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \S+ \[\d+\] (\S*)@(\S*) ([A-Z]+):  (.*)$`)
	logDuration = regexp.MustCompile(`(?s)^duration: ([0-9.]+) ms  (statement|execute|parse|bind)[^:]*: ?(.*)$`)
)

// statementStats is what the server log says one database ran.
type statementStats struct {
	Statements int           // executions (execute and simple-query statement entries)
	Time       time.Duration // server time over every logged step (parse, bind, execute)
	ByText     []textStats   // per statement text, most executed first
}

// textStats is one statement text's share.
type textStats struct {
	Text  string
	Count int
	Time  time.Duration
}

// countStatements reads a PostgreSQL log written with idleLogPrefix and
// log_min_duration_statement = 0, and counts the statements database db ran
// for applications other than those whose name starts with skipApp (the
// harness's own connections).
func countStatements(r io.Reader, db, skipApp string) (statementStats, error) {
	var st statementStats
	byText := map[string]*textStats{}
	type entry struct {
		app, db, level, msg string
	}
	var cur *entry
	flush := func() {
		if cur == nil || cur.level != "LOG" || cur.db != db || (skipApp != "" && strings.HasPrefix(cur.app, skipApp)) {
			return
		}
		m := logDuration.FindStringSubmatch(cur.msg)
		if m == nil {
			return
		}
		msTaken, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return
		}
		d := time.Duration(msTaken * float64(time.Millisecond))
		st.Time += d
		text := normalizeSQL(m[3])
		ts := byText[text]
		if ts == nil {
			ts = &textStats{Text: text}
			byText[text] = ts
		}
		ts.Time += d
		if m[2] == "execute" || m[2] == "statement" {
			st.Statements++
			ts.Count++
		}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := logEntry.FindStringSubmatch(line); m != nil {
			flush()
			cur = &entry{app: m[1], db: m[2], level: m[3], msg: m[4]}
			continue
		}
		if cur != nil { // a continuation line of a multi-line statement
			cur.msg += "\n" + line
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		return st, err
	}
	for _, ts := range byText {
		if ts.Count > 0 {
			st.ByText = append(st.ByText, *ts)
		}
	}
	slices.SortFunc(st.ByText, func(a, b textStats) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Text, b.Text)
	})
	return st, nil
}

// normalizeSQL collapses white space and shortens a statement for a report.
func normalizeSQL(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 100 {
		s = string(r[:100]) + "…"
	}
	return s
}
