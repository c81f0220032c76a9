package main

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/reinhq/rein"
)

func TestDescribeBuild(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "false"}}
	cases := []struct {
		name                  string
		version, commit, date string
		bi                    *debug.BuildInfo
		want                  build
	}{
		{"a release stamped by make release",
			"1.2.0", "f00d", "2026-02-03T00:00:00Z",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/reinhq/rein", Version: "(devel)"}, Settings: vcs},
			build{Version: "1.2.0", Commit: "f00d", Date: "2026-02-03T00:00:00Z", Go: "go1.26.8", Module: "github.com/reinhq/rein", ModuleVer: "(devel)",
				VCSRevision: "abc123", VCSTime: "2026-01-02T03:04:05Z", VCSModified: "false"}},
		{"go build in a git clone: commit and date from the VCS stamp",
			rein.DevVersion, "", "",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/reinhq/rein", Version: "(devel)"}, Settings: vcs},
			build{Version: rein.DevVersion, Commit: "abc123", Date: "2026-01-02T03:04:05Z", Go: "go1.26.8", Module: "github.com/reinhq/rein", ModuleVer: "(devel)",
				VCSRevision: "abc123", VCSTime: "2026-01-02T03:04:05Z", VCSModified: "false"}},
		{"go install at a version: the module version is the version",
			rein.DevVersion, "", "",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/reinhq/rein", Version: "v1.3.0"}},
			build{Version: "1.3.0", Go: "go1.26.8", Module: "github.com/reinhq/rein", ModuleVer: "v1.3.0"}},
		{"go build in a git clone: the commit's pseudo-version is the version",
			rein.DevVersion, "", "",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/reinhq/rein", Version: "v0.0.0-20260102030405-abc123abc123+dirty"}, Settings: vcs},
			build{Version: "0.0.0-20260102030405-abc123abc123+dirty", Commit: "abc123", Date: "2026-01-02T03:04:05Z", Go: "go1.26.8", Module: "github.com/reinhq/rein",
				ModuleVer: "v0.0.0-20260102030405-abc123abc123+dirty", VCSRevision: "abc123", VCSTime: "2026-01-02T03:04:05Z", VCSModified: "false"}},
		{"a stamped version wins over the module version",
			"1.3.0-rc1", "", "",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/reinhq/rein", Version: "v1.3.0"}},
			build{Version: "1.3.0-rc1", Go: "go1.26.8", Module: "github.com/reinhq/rein", ModuleVer: "v1.3.0"}},
		{"no build information",
			rein.DevVersion, "", "", nil,
			build{Version: rein.DevVersion, Go: runtime.Version()}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.want.Platform = runtime.GOOS + "/" + runtime.GOARCH
			if got := describeBuild(c.version, c.commit, c.date, c.bi); got != c.want {
				t.Errorf("describeBuild =\n %+v\nwant\n %+v", got, c.want)
			}
		})
	}
}

func TestVersionCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	e := &env{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}
	if code := run(context.Background(), e, []string{"version", "--output", "json"}); code != exitOK {
		t.Fatalf("rein version --output json: exit %d\n%s", code, errOut.String())
	}
	var b build
	if err := json.Unmarshal(out.Bytes(), &b); err != nil {
		t.Fatalf("rein version --output json: %v\n%s", err, out.String())
	}
	if b.Version != rein.Version || b.Go == "" || b.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("rein version --output json = %+v", b)
	}
	out.Reset()
	if code := run(context.Background(), e, []string{"version"}); code != exitOK || !strings.HasPrefix(out.String(), "rein "+rein.Version+"\n") ||
		!strings.Contains(out.String(), "  go:") {
		t.Errorf("rein version: exit %d\n%s", code, out.String())
	}
}
