package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/reinhq/rein"
)

// TestCast: the ballot's revision is sent as "revision" (and not at all
// when 0); a stale_revision answer is a *StaleRevisionError carrying the
// current approval, and still an *Error of its code.
func TestCast(t *testing.T) {
	current := rein.Approval{ID: "apr_1", Status: rein.StatusPending, Revision: 2, ArgsHash: "sha256:b",
		Args: json.RawMessage(`{"to":"acct-a"}`), ApprovedArgs: json.RawMessage(`{"to":"acct-mallory"}`)}
	var sent map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sent = nil
		json.Unmarshal(body, &sent)
		w.Header().Set("Content-Type", "application/json")
		if rev, ok := sent["revision"].(float64); ok && int(rev) != current.Revision && sent["vote"] != "reject" {
			w.WriteHeader(http.StatusConflict)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": "stale_revision", "message": "the action was edited", "details": current}})
			return
		}
		json.NewEncoder(w).Encode(current)
	}))
	defer srv.Close()
	c := New(srv.URL, "k")
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		b       Ballot
		wantRev any // the "revision" sent; nil: none
		stale   bool
	}{
		{"no revision", Ballot{Vote: "approve"}, nil, false},
		{"current revision", Ballot{Vote: "approve", Revision: 2}, float64(2), false},
		{"stale approve", Ballot{Vote: "approve", Revision: 1}, float64(1), true},
		{"stale edit", Ballot{Vote: "edit", Args: json.RawMessage(`{"to":"x"}`), Revision: 1}, float64(1), true},
		{"stale reject counts", Ballot{Vote: "reject", Revision: 1}, float64(1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := c.Cast(ctx, "apr_1", tc.b)
			if sent["revision"] != tc.wantRev {
				t.Errorf("sent revision %v, want %v (body %v)", sent["revision"], tc.wantRev, sent)
			}
			var se *StaleRevisionError
			if !tc.stale {
				if err != nil || a == nil || a.Revision != 2 {
					t.Fatalf("Cast = %v, %v", a, err)
				}
				return
			}
			if !errors.As(err, &se) || se.Current == nil || se.Current.Revision != 2 || string(se.Current.ApprovedArgs) != `{"to":"acct-mallory"}` {
				t.Fatalf("a stale vote's error: %#v", err)
			}
			if !IsCode(err, rein.ECodeStaleRevision) {
				t.Errorf("IsCode(stale_revision) is false for %v", err)
			}
		})
	}
}
