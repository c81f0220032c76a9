package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"text/tabwriter"

	"github.com/reinhq/rein"
)

// build is what `rein version` reports: the release stamped at build time
// and what the Go toolchain recorded in the binary.
type build struct {
	Version     string `json:"version"`
	Commit      string `json:"commit,omitempty"`
	Date        string `json:"date,omitempty"`
	Go          string `json:"go"`
	Platform    string `json:"platform"`
	Module      string `json:"module,omitempty"`
	ModuleVer   string `json:"module_version,omitempty"`
	VCSRevision string `json:"vcs_revision,omitempty"`
	VCSTime     string `json:"vcs_time,omitempty"`
	VCSModified string `json:"vcs_modified,omitempty"`
}

// describeBuild joins the stamped release (version, commit, date, set with
// -ldflags -X) with the binary's build information (bi may be nil). A binary
// that was not stamped still tells where it came from: `go install
// ...@v1.2.3` records the module version, and a build in a git checkout
// records the revision, its time and the pseudo-version of the commit,
// which is then the version (without its v, as `make release` names it).
func describeBuild(version, commit, date string, bi *debug.BuildInfo) build {
	b := build{Version: version, Commit: commit, Date: date, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		return b
	}
	b.Go = bi.GoVersion
	b.Module, b.ModuleVer = bi.Main.Path, bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.VCSRevision = s.Value
		case "vcs.time":
			b.VCSTime = s.Value
		case "vcs.modified":
			b.VCSModified = s.Value
		}
	}
	if b.Version == rein.DevVersion && b.ModuleVer != "" && b.ModuleVer != "(devel)" {
		b.Version = strings.TrimPrefix(b.ModuleVer, "v")
	}
	if b.Commit == "" {
		b.Commit = b.VCSRevision
	}
	if b.Date == "" {
		b.Date = b.VCSTime
	}
	return b
}

// stampVersion makes rein.Version the version `rein version` prints, so
// that the server (its metrics, audit entries, traces, webhooks) names the
// build the same way as the binary's file name and `rein version`.
func stampVersion() {
	bi, _ := debug.ReadBuildInfo()
	rein.Version = describeBuild(rein.Version, rein.Commit, rein.BuildDate, bi).Version
}

func init() {
	register(&command{name: "version", args: "", summary: "print the version of rein and how it was built",
		example: "  rein version\n  rein version --output json",
		run: func(ctx context.Context, e *env, args []string) int {
			fs := flags(e, "rein version", commandNamed("version"))
			output := fs.String("output", "text", "text or json")
			if _, code, ok := parse(fs, args); !ok {
				return code
			}
			bi, _ := debug.ReadBuildInfo()
			b := describeBuild(rein.Version, rein.Commit, rein.BuildDate, bi)
			if *output == "json" {
				printJSON(e, b)
				return exitOK
			}
			fmt.Fprintf(e.stdout, "rein %s\n", b.Version)
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 1, ' ', 0)
			for _, f := range [][2]string{
				{"commit", b.Commit}, {"date", b.Date}, {"go", b.Go}, {"platform", b.Platform},
				{"module", b.Module}, {"module version", b.ModuleVer},
				{"vcs.revision", b.VCSRevision}, {"vcs.time", b.VCSTime}, {"vcs.modified", b.VCSModified},
			} {
				if f[1] != "" {
					fmt.Fprintf(tw, "  %s:\t%s\n", f[0], f[1])
				}
			}
			tw.Flush()
			return exitOK
		}})
}
