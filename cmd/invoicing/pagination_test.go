package main

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"
)

// walk follows next_cursor from the first page and returns every id seen.
func (s *service) walk(t *testing.T, path, tok string, limit int, filters url.Values) []string {
	t.Helper()
	var ids []string
	after := ""
	for range 1000 {
		q := url.Values{"limit": {fmt.Sprint(limit)}}
		for k, v := range filters {
			q[k] = v
		}
		if after != "" {
			q.Set("after", after)
		}
		res := s.get(t, path+"?"+q.Encode(), tok)
		mustStatus(t, res, http.StatusOK)
		page := res.object(t)
		data := page["data"].([]any)
		if len(data) > limit {
			t.Fatalf("page of %d items with limit %d", len(data), limit)
		}
		for _, item := range data {
			ids = append(ids, item.(map[string]any)["id"].(string))
		}
		next := page["pagination"].(map[string]any)["next_cursor"]
		if next == nil {
			return ids
		}
		after = next.(string)
	}
	t.Fatal("pagination did not end")
	return nil
}

func TestPaginationWalksEveryCompanyOnceWhileOthersAreCreated(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	var initial []string
	for i := range 12 {
		c := s.createCompany(t, tok, fmt.Sprintf("page-initial-%02d", i), companyWith(t, "legal_name", fmt.Sprint("Company ", i)))
		initial = append(initial, c["id"].(string))
	}
	for _, limit := range []int{1, 2, 7} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { // other companies are being created during the walk
				defer wg.Done()
				for i := range 6 {
					s.post(t, "/v1/companies", tok, fmt.Sprintf("page-during-%d-%d", limit, i), minimalCompany)
				}
			}()
			walked := s.walk(t, "/v1/companies", tok, limit, nil)
			wg.Wait()
			all := s.walk(t, "/v1/companies", tok, 100, nil)
			if !slices.Equal(walked, all[:min(len(walked), len(all))]) {
				t.Fatalf("the walk is not a prefix of the final creation-order list:\nwalk %v\nall  %v", walked, all)
			}
			if !slices.Equal(walked[:len(initial)], initial) {
				t.Fatalf("the walk does not start with every pre-existing company in creation order")
			}
			seen := map[string]bool{}
			for _, id := range walked {
				if seen[id] {
					t.Fatalf("company %s returned twice", id)
				}
				seen[id] = true
			}
		})
	}
}

func TestListFiltersByExternalReference(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	want := s.createCompany(t, tok, "filter-1", companyWith(t, "external_reference", "erp-1"))
	s.createCompany(t, tok, "filter-2", companyWith(t, "external_reference", "erp-10"))
	s.createCompany(t, tok, "filter-3", minimalCompany)
	ids := s.walk(t, "/v1/companies", tok, 1, url.Values{"external_reference": {"erp-1"}})
	if len(ids) != 1 || ids[0] != want["id"] {
		t.Fatalf("filter erp-1 = %v, want only %v", ids, want["id"])
	}
}

func TestBadCursorsAndParametersAre422(t *testing.T) {
	s := newService(t)
	acme, globex := token(t, "acme"), token(t, "globex")
	for i := range 3 {
		s.createCompany(t, acme, fmt.Sprint("cursor-a-", i), companyWith(t, "external_reference", "x"))
		s.createCompany(t, globex, fmt.Sprint("cursor-g-", i), minimalCompany)
	}
	first := s.get(t, "/v1/companies?limit=1", acme).object(t)
	cursor := first["pagination"].(map[string]any)["next_cursor"].(string)
	filtered := s.get(t, "/v1/companies?limit=1&external_reference=x", acme).object(t)
	filteredCursor := filtered["pagination"].(map[string]any)["next_cursor"].(string)
	tampered := []byte(cursor)
	tampered[len(tampered)/2] ^= 1
	if tampered[len(tampered)/2] == '-' || tampered[len(tampered)/2] == '_' {
		tampered[len(tampered)/2] = 'A'
	}
	tests := []struct {
		name, query, tok, wantPath string
	}{
		{"a tampered cursor", "after=" + string(tampered), acme, "after"},
		{"another account's cursor", "after=" + cursor, globex, "after"},
		{"a cursor of another filter", "after=" + filteredCursor, acme, "after"},
		{"a cursor of the unfiltered list under a filter", "after=" + cursor + "&external_reference=x", acme, "after"},
		{"a cursor outside the pattern", "after=abc%21", acme, "after"},
		{"limit 0", "limit=0", acme, "limit"},
		{"limit 101", "limit=101", acme, "limit"},
		{"limit not a number", "limit=ten", acme, "limit"},
		{"an unknown parameter", "colour=red", acme, "colour"},
		{"an empty filter", "external_reference=", acme, "external_reference"},
		{"a repeated parameter", "limit=1&limit=2", acme, "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.get(t, "/v1/companies?"+tt.query, tt.tok)
			mustStatus(t, res, http.StatusUnprocessableEntity)
			if paths := detailPaths(t, res); len(paths) != 1 || paths[0] != tt.wantPath {
				t.Errorf("paths = %v, want [%s]", paths, tt.wantPath)
			}
		})
	}
	mustStatus(t, s.get(t, "/v1/companies?limit=100", acme), http.StatusOK)
	mustStatus(t, s.get(t, "/v1/companies?after="+cursor, acme), http.StatusOK)
}
