package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// Helpers of the issue-21 acceptance tests (records that change): merge
// patches, archive and restore, conditional writes, and the checks every
// write answer must pass.

const mergePatchType = "application/merge-patch+json"

// patch sends a JSON Merge Patch; headers (If-Match, say) may be nil.
func (s *service) patch(t *testing.T, path, tok, key, body string, headers map[string]string) response {
	t.Helper()
	return s.do(t, request{method: http.MethodPatch, path: path, token: tok, key: key, body: body,
		contentType: mergePatchType, headers: headers})
}

// action posts to path+"/"+verb (archive, unarchive, issue, void) with an
// optional body and headers.
func (s *service) action(t *testing.T, path, verb, tok, key, body string, headers map[string]string) response {
	t.Helper()
	return s.do(t, request{method: http.MethodPost, path: path + "/" + verb, token: tok, key: key, body: body, headers: headers})
}

// ifMatch is the header map of a conditional write.
func ifMatch(tags ...string) map[string]string {
	return map[string]string{"If-Match": strings.Join(tags, ", ")}
}

// tagOf is the ETag a record at version has: W/"<id>.<version>".
func tagOf(record map[string]any) string {
	return fmt.Sprintf(`W/"%s.%v"`, record["id"], record["version"])
}

// mustWrite checks a write's answer to the record at path: 200, an ETag
// naming its id and version, and a GET right after it serving the same
// body and tag (read-your-writes).
func (s *service) mustWrite(t *testing.T, path, tok string, res response) map[string]any {
	t.Helper()
	mustStatus(t, res, http.StatusOK)
	rec := res.object(t)
	if got := res.header.Get("ETag"); got != tagOf(rec) {
		t.Errorf("ETag = %q, want %q", got, tagOf(rec))
	}
	got := s.get(t, path, tok)
	mustStatus(t, got, http.StatusOK)
	if compactJSON(t, got.body) != compactJSON(t, res.body) {
		t.Fatalf("GET %s right after the 200 differs:\n200: %s\nGET: %s", path, res.body, got.body)
	}
	if got.header.Get("ETag") != res.header.Get("ETag") {
		t.Errorf("GET's ETag %q differs from the write's %q", got.header.Get("ETag"), res.header.Get("ETag"))
	}
	return rec
}

// mustReplay sends req again and expects the first answer: its status,
// body and ETag (a write's replay names the version it answers), marked
// Idempotent-Replayed.
func (s *service) mustReplay(t *testing.T, req request, first response) {
	t.Helper()
	again := s.do(t, req)
	if again.status != first.status || string(again.body) != string(first.body) {
		t.Fatalf("replay answered %d %s\nwant the first answer %d %s", again.status, again.body, first.status, first.body)
	}
	if again.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("a replay lacks Idempotent-Replayed: true: %v", again.header)
	}
	if again.header.Get("ETag") != first.header.Get("ETag") {
		t.Errorf("a replay's ETag %q, the first answer's %q", again.header.Get("ETag"), first.header.Get("ETag"))
	}
}

// mustFail checks an error answer: status, code, and exactly the details
// paths (none when paths is nil).
func mustFail(t *testing.T, res response, status int, code string, paths ...string) {
	t.Helper()
	mustCode(t, res, status, code)
	if got := detailPaths(t, res); paths != nil && !slices.Equal(got, paths) {
		t.Fatalf("details paths = %q, want %q; body %s", got, paths, res.body)
	}
}

// listed returns the items of the list at path with filters (one page of
// at most 100: the tests' lists are short). The event feed's pages always
// have a next_cursor (a client follows it): there a page under 100 is all.
func (s *service) listed(t *testing.T, path, tok string, filters url.Values) []map[string]any {
	t.Helper()
	q := url.Values{"limit": {"100"}}
	for k, v := range filters {
		q[k] = v
	}
	res := s.get(t, path+"?"+q.Encode(), tok)
	mustStatus(t, res, http.StatusOK)
	page := res.object(t)
	var out []map[string]any
	for _, item := range page["data"].([]any) {
		out = append(out, item.(map[string]any))
	}
	if next := page["pagination"].(map[string]any)["next_cursor"]; next != nil && (path != "/v1/events" || len(out) == 100) {
		t.Fatalf("%s has more than 100 items", path)
	}
	return out
}

// ids returns the ids of items, in order.
func ids(items []map[string]any) []string {
	var out []string
	for _, it := range items {
		out = append(out, it["id"].(string))
	}
	return out
}

// find returns the item with id, or nil.
func find(items []map[string]any, id string) map[string]any {
	for _, it := range items {
		if it["id"] == id {
			return it
		}
	}
	return nil
}

// absent marks a field that must not be in a record.
type absentField struct{}

var absent = absentField{}

// at returns the value at a dotted path ("address.line_2") and whether it
// is there.
func at(m map[string]any, path string) (any, bool) {
	var v any = m
	for _, step := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[step]; !ok {
			return nil, false
		}
	}
	return v, true
}

// setAt sets (or, for absent, deletes) the value at a dotted path of a deep
// copy of m.
func setAt(t *testing.T, m map[string]any, path string, value any) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal([]byte(mustJSON(t, m)), &out); err != nil {
		t.Fatal(err)
	}
	steps := strings.Split(path, ".")
	obj := out
	for _, step := range steps[:len(steps)-1] {
		obj = obj[step].(map[string]any)
	}
	last := steps[len(steps)-1]
	if value == absent {
		delete(obj, last)
	} else {
		var v any
		if err := json.Unmarshal([]byte(mustJSON(t, value)), &v); err != nil {
			t.Fatal(err)
		}
		obj[last] = v
	}
	return out
}

// checkChanged holds a record after a write to the one before it: every
// field in want as given, version one more, updated_at later, and nothing
// else changed.
func checkChanged(t *testing.T, before, after map[string]any, want map[string]any) {
	t.Helper()
	expected := before
	for path, v := range want {
		expected = setAt(t, expected, path, v)
	}
	expected["version"] = before["version"].(float64) + 1
	expected["updated_at"] = after["updated_at"]
	if mustJSON(t, after) != mustJSON(t, expected) {
		t.Errorf("after the write the record is\n%s\nwant\n%s", mustJSON(t, after), mustJSON(t, expected))
	}
	a, errA := time.Parse(time.RFC3339Nano, fmt.Sprint(after["updated_at"]))
	b, errB := time.Parse(time.RFC3339Nano, fmt.Sprint(before["updated_at"]))
	if errA != nil || errB != nil || !a.After(b) {
		t.Errorf("updated_at %v is not after %v", after["updated_at"], before["updated_at"])
	}
}

// eventCount counts the events of type typ whose data names id under field.
func (s *service) eventCount(t *testing.T, typ, field, id string) int {
	t.Helper()
	var n int
	err := s.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM events WHERE event_type = $1 AND data->>$2 = $3`, typ, field, id).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// streamsOf returns the distinct streams holding the events whose type
// starts with kind ("Company") and whose data names id under field, and the
// number of those events.
func (s *service) streamsOf(t *testing.T, kind, field, id string) (streams, count int) {
	t.Helper()
	err := s.pool.QueryRow(context.Background(),
		`SELECT count(DISTINCT stream_name), count(*) FROM events WHERE starts_with(event_type, $1) AND data->>$2 = $3`,
		kind, field, id).Scan(&streams, &count)
	if err != nil {
		t.Fatal(err)
	}
	return streams, count
}
