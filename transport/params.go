package transport

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/query"
)

var cursorPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,512}$`)

var limitMessage = fmt.Sprintf("must be an integer between %d and %d", query.MinLimit, query.MaxLimit)

// listParams is a list's query string: the page parameters plus the named
// filters.
type listParams struct {
	page    query.PageRequest
	filters map[string]string
}

// parseList reads a list's query string, adding to perr every unknown,
// repeated or malformed parameter.
func parseList(perr *command.ValidationError, q url.Values, filters ...string) listParams {
	known := map[string]bool{"after": true, "limit": true}
	for _, f := range filters {
		known[f] = true
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	sort.Strings(names)
	out := listParams{page: query.PageRequest{Limit: query.DefaultLimit}, filters: map[string]string{}}
	for _, name := range names {
		values := q[name]
		switch {
		case !known[name]:
			perr.Add(name, "is not a known query parameter")
		case len(values) != 1:
			perr.Add(name, "must be given once")
		case name == "limit":
			n, err := strconv.Atoi(values[0])
			if err != nil || n < query.MinLimit || n > query.MaxLimit {
				perr.Add(name, limitMessage)
			}
			out.page.Limit = n
		case name == "after":
			if !cursorPattern.MatchString(values[0]) {
				perr.Add(name, "must be a cursor returned as next_cursor")
			}
			out.page.After = values[0]
		default:
			out.filters[name] = values[0]
		}
	}
	return out
}

// text checks an exact-match string filter of 1..max code points of text
// (events.CheckText: a query string may carry any bytes, %00 and %FF too).
func (p listParams) text(perr *command.ValidationError, name string, max int) string {
	v, ok := p.filters[name]
	if !ok {
		return ""
	}
	if err := events.CheckText(v, false); err != nil {
		perr.Add(name, err.Error())
		return ""
	}
	if n := utf8.RuneCountInString(v); n < 1 || n > max {
		perr.Add(name, "must be 1 to "+strconv.Itoa(max)+" characters")
	}
	return v
}

// boolean checks a true/false filter; absent is false.
func (p listParams) boolean(perr *command.ValidationError, name string) bool {
	v, ok := p.filters[name]
	if ok && v != "true" && v != "false" {
		perr.Add(name, "must be true or false")
	}
	return v == "true"
}

// pathUUID checks an id in the path or the query string, canonicalising
// its spelling so that equal ids compare equal (command.ParseUUID).
func pathUUID(perr *command.ValidationError, name, v string) string {
	id, ok := command.ParseUUID(v)
	if !ok {
		perr.Add(name, "must be a UUID")
		return ""
	}
	return id
}

// companyParam reads and checks the {company_id} path parameter alone.
func companyParam(r *http.Request) (string, error) {
	perr := &command.ValidationError{}
	id := pathUUID(perr, "company_id", r.PathValue("company_id"))
	return id, perr.OrNil()
}
