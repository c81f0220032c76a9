package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/client"
	"github.com/reinhq/rein/sandbox"
)

// TestDecideConnect: the egress proxy connects only on allow, or on a
// modify that leaves the destination as asked; a modify that changes it, an
// ask that was not decided in time and a deny refuse; every check is a
// net.connect of the run's session that waits for people.
func TestDecideConnect(t *testing.T) {
	for _, tc := range []struct {
		decision rein.Decision
		args     string
		allowed  bool
	}{
		{rein.Allow, `{"host":"registry.npmjs.org","port":443}`, true},
		{rein.Modify, `{"host":"registry.npmjs.org","port":443}`, true},
		{rein.Modify, `{"host":"evil.example","port":443}`, false},
		{rein.Ask, `{"host":"registry.npmjs.org","port":443}`, false},
		{rein.Deny, `{"host":"registry.npmjs.org","port":443}`, false},
		{rein.Throttle, `{"host":"registry.npmjs.org","port":443}`, false},
	} {
		var got rein.CheckRequest
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			json.Unmarshal(body, &got)
			json.NewEncoder(w).Encode(rein.CheckResponse{ID: "chk_1", Decision: tc.decision, Reason: "r", Args: json.RawMessage(tc.args)})
		}))
		v, err := decideConnect(context.Background(), client.New(srv.URL, "k"), "run-1", "registry.npmjs.org", 443)
		srv.Close()
		if err != nil || v.Allowed != tc.allowed || v.CheckID != "chk_1" {
			t.Errorf("%s %s: allowed %v (%v), want %v", tc.decision, tc.args, v.Allowed, err, tc.allowed)
		}
		if got.Tool != "net.connect" || got.Session != "run-1" || got.WaitMS != rein.MaxWaitMS || string(got.Args) != `{"host":"registry.npmjs.org","port":443}` {
			t.Errorf("the check sent: %+v", got)
		}
	}
}

// TestCheckHere: a profile rein answered with is checked again where it is
// applied, through this machine's symlinks.
func TestCheckHere(t *testing.T) {
	cases := map[string]string{"/": "the whole file system", "/usr": "", "/tmp/x": "/tmp"}
	// A symlink that leads into /proc, from a directory a profile may name
	// (this package's, or a system one where the test may write).
	wd, _ := os.Getwd()
	for _, parent := range []string{wd, "/srv", "/opt"} {
		dir, err := os.MkdirTemp(parent, ".rein-test-")
		if err != nil {
			continue
		}
		defer os.RemoveAll(dir)
		link := filepath.Join(dir, "tools")
		if rein.CheckProfileRead(link) == nil && os.Symlink("/proc/1", link) == nil {
			cases[link] = "is a symlink on this machine to /proc/1"
			break
		}
	}
	if len(cases) == 3 {
		t.Log("no directory a profile may name is writable here: the symlink case is not tried")
	}
	for p, want := range cases {
		err := checkHere(sandbox.Profile{Name: "p", Read: []string{p}})
		if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("read %s: %v, want %q", p, err, want)
		}
	}
	if err := checkHere(sandbox.Profile{Name: "p", Read: []string{"/usr"}, Env: []string{"GITHUB_TOKEN"}}); err == nil {
		t.Error("a secret-shaped variable passed")
	}
}

// TestStartContainedAppliesOnlyTheServersProfile: rein run applies the
// profile rein answers with; an answer without one (an older server) or
// with one that reads what no profile may refuses the run and records its
// end, so the session does not stay started.
func TestStartContainedAppliesOnlyTheServersProfile(t *testing.T) {
	for _, tc := range []struct {
		name, sandbox, want string
		ok                  bool
	}{
		{"the policy's profile", `{"profile":"docs","read":["/usr","/srv/docs"],"env":["CI"]}`, "", true},
		{"an older server", `{"profile":"docs"}`, "without the profile docs", false},
		{"another profile", `{"profile":"coding","read":["/usr"]}`, "without the profile docs", false},
		{"a path no profile reads", `{"profile":"docs","read":["/usr","/home/ann"]}`, "home directories", false},
	} {
		var ended bool
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var body struct{ Event string }
			json.NewDecoder(r.Body).Decode(&body)
			if body.Event == "ended" {
				ended = true
				w.WriteHeader(http.StatusNoContent)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"id":"run-1","sandbox":`+tc.sandbox+`}`)
		}))
		p, err := startContained(context.Background(), client.New(srv.URL, "k"), "run-1",
			client.SandboxStart{Profile: "docs", Workspace: "/srv/app", Command: []string{"make"}})
		srv.Close()
		switch {
		case tc.ok && (err != nil || p.Name != "docs" || strings.Join(p.Read, " ") != "/usr /srv/docs" || strings.Join(p.Env, " ") != "CI" || ended):
			t.Errorf("%s: %+v %v (ended %v)", tc.name, p, err, ended)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), tc.want) || !ended):
			t.Errorf("%s: %v, want %q and the end recorded (ended %v)", tc.name, err, tc.want, ended)
		}
	}
}
