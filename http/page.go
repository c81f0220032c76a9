package http

import (
	"net/http"
	"strconv"

	"github.com/reinhq/rein"
)

// Every list the API pages (checks, a session's checks, approvals,
// questions, reviews, proposals) answers the same way: a JSON array, newest
// first, never null; ?limit= (1 to 500, default 100) and ?cursor= (the id of
// the last item of the previous page); a full page carries the next page's
// cursor in X-Next-Cursor and a Link header. A key of tenant * lists every
// tenant unless it names one.

// listTenant is the tenant a list reads: as tenantParam, except that a key
// of tenant * that names no tenant lists every tenant.
func (s *Server) listTenant(key *rein.Key, asked string) (string, error) {
	if key.Tenant == rein.AllTenants && asked == "" {
		return rein.AllTenants, nil
	}
	return s.tenantParam(key, asked)
}

// listLimit reads a list's limit (default 100, at most 500).
func listLimit(v string) (int, error) {
	if v == "" {
		return 100, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 500 {
		return 0, rein.Errorf(rein.ECodeBadRequest, "limit must be a number from 1 to 500")
	}
	return n, nil
}

// writePage answers a list, never null; a full page carries the cursor of
// the next one (X-Next-Cursor and a Link header). A limit the caller did not
// give is the stores' default page of 100.
func writePage[T any](w http.ResponseWriter, r *http.Request, list []T, limit int, id func(T) string) {
	if list == nil {
		list = []T{}
	}
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	if len(list) > 0 && len(list) == limit {
		nextPage(w, r, id(list[len(list)-1]))
	}
	writeJSON(w, http.StatusOK, list)
}

// nextPage points at the next page of a full list: its cursor is in the Link
// header (rel="next") and in X-Next-Cursor.
func nextPage(w http.ResponseWriter, r *http.Request, cursor string) {
	w.Header().Set("X-Next-Cursor", cursor)
	u := *r.URL
	qs := u.Query()
	qs.Set("cursor", cursor)
	u.RawQuery = qs.Encode()
	w.Header().Set("Link", "<"+u.RequestURI()+`>; rel="next"`)
}
