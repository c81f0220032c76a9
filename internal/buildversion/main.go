// Command buildversion prints the version a build of this git checkout
// gets, the one `make release` stamps: a commit tagged vX.Y.Z is X.Y.Z; any
// other commit is the pseudo-version the Go toolchain records for it (what
// `go version -m` and `rein version` of a plain `go build` show), without
// its leading v. So file names, `rein version` and the running server name a
// build alike. Outside a checkout it prints rein.DevVersion.
//
//	go run ./internal/buildversion
package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein"
)

func main() {
	v, err := fromGit()
	if err != nil {
		fmt.Fprintf(os.Stderr, "buildversion: %v; using %s\n", err, rein.DevVersion)
		v = rein.DevVersion
	}
	fmt.Println(v)
}

func git(args ...string) (string, error) {
	out, err := exec.Command("git", args...).Output()
	return strings.TrimSpace(string(out)), err
}

// fromGit reads what version needs from the checkout.
func fromGit() (string, error) {
	rev, err := git("rev-parse", "HEAD")
	if err != nil {
		return "", fmt.Errorf("not a git checkout (git rev-parse HEAD: %v)", err)
	}
	status, err := git("status", "--porcelain")
	if err != nil {
		return "", fmt.Errorf("git status: %v", err)
	}
	unix, err := git("log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return "", fmt.Errorf("git log: %v", err)
	}
	secs, err := strconv.ParseInt(unix, 10, 64)
	if err != nil {
		return "", fmt.Errorf("commit time %q: %v", unix, err)
	}
	tag, _ := git("describe", "--tags", "--exact-match", "--match", "v[0-9]*", "HEAD")
	last, _ := git("describe", "--tags", "--abbrev=0", "--match", "v[0-9]*", "HEAD")
	return version(tag, last, time.Unix(secs, 0), rev, status != ""), nil
}

var release = regexp.MustCompile(`^v(\d+)\.(\d+)\.(\d+)$`)

// version is X.Y.Z for a commit tagged vX.Y.Z, else Go's pseudo-version
// for rev (https://go.dev/ref/mod#pseudo-versions): 0.0.0-<UTC commit
// time>-<12 hex digits of the commit> without an earlier release tag,
// X.Y.(Z+1)-0.<time>-<commit> after vX.Y.Z; +dirty when the work tree
// differs from the commit, as the Go toolchain marks it.
func version(tag, last string, at time.Time, rev string, dirty bool) string {
	suffix := ""
	if dirty {
		suffix = "+dirty"
	}
	if release.MatchString(tag) {
		return strings.TrimPrefix(tag, "v") + suffix
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	stamp := at.UTC().Format("20060102150405") + "-" + rev
	if m := release.FindStringSubmatch(last); m != nil {
		patch, _ := strconv.Atoi(m[3])
		return fmt.Sprintf("%s.%s.%d-0.%s%s", m[1], m[2], patch+1, stamp, suffix)
	}
	return "0.0.0-" + stamp + suffix
}
