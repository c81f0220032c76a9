package main

import (
	"testing"
	"time"
)

func TestVersion(t *testing.T) {
	at := time.Date(2026, 11, 27, 9, 7, 0, 0, time.FixedZone("CET", 3600))
	const rev = "13d912197ba8e6bf758637edc53913feac69f319"
	for _, tc := range []struct {
		tag, last string
		dirty     bool
		want      string
	}{
		{"", "", false, "0.0.0-20261127080700-13d912197ba8"},
		{"", "", true, "0.0.0-20261127080700-13d912197ba8+dirty"},
		{"v1.2.0", "v1.2.0", false, "1.2.0"},
		{"v1.2.0", "v1.2.0", true, "1.2.0+dirty"},
		{"", "v1.2.0", false, "1.2.1-0.20261127080700-13d912197ba8"},
		{"", "v1.3.0-rc1", false, "0.0.0-20261127080700-13d912197ba8"}, // only releases count as a base here
		{"vfoo", "", false, "0.0.0-20261127080700-13d912197ba8"},
	} {
		if got := version(tc.tag, tc.last, at, rev, tc.dirty); got != tc.want {
			t.Errorf("version(%q, %q, dirty %v) = %s, want %s", tc.tag, tc.last, tc.dirty, got, tc.want)
		}
	}
}
