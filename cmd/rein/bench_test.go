package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func benchEnv(vars map[string]string) (*env, *bytes.Buffer, *bytes.Buffer) {
	var out, errs bytes.Buffer
	return &env{stdout: &out, stderr: &errs, getenv: func(k string) string { return vars[k] }}, &out, &errs
}

func TestParseBench(t *testing.T) {
	e, _, _ := benchEnv(map[string]string{"REIN_SERVER": "http://10.0.0.1:8750", "REIN_KEY": "rein_k"})
	o, _, ok := parseBench(e, []string{"--concurrency", "64", "--duration", "30s", "--warmup", "5s", "--mix", "allow=90,deny=10"})
	if !ok {
		t.Fatal("valid flags refused")
	}
	if o.target != "rein" || o.server != "http://10.0.0.1:8750" || o.key != "rein_k" || o.concurrency != 64 ||
		o.duration != 30*time.Second || o.warmup != 5*time.Second || o.shares["allow"] != 90 || o.shares["deny"] != 10 ||
		len(o.shares) != 2 || !strings.HasPrefix(o.session, "bench-") {
		t.Fatalf("%+v", o)
	}
	if u := o.targetFor().URL; u != "http://10.0.0.1:8750/v1/check" {
		t.Fatalf("rein target URL %s", u)
	}

	e, _, _ = benchEnv(nil)
	o, _, ok = parseBench(e, []string{"--target", "opa"})
	if !ok || o.server != "http://127.0.0.1:8181" || o.targetFor().URL != "http://127.0.0.1:8181/v1/data/rein/bench/decision" ||
		o.shares["throttle"] != 10 || o.concurrency != 32 {
		t.Fatalf("opa defaults: %+v", o)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "needs an agent key"},
		{[]string{"--key", "k", "--target", "envoy"}, "rein or opa"},
		{[]string{"--key", "k", "--concurrency", "0"}, "--concurrency"},
		{[]string{"--key", "k", "--duration", "0s"}, "--duration"},
		{[]string{"--key", "k", "--mix", "allow=70,maybe=30"}, "the decisions are"},
		{[]string{"--key", "k", "--server", "127.0.0.1:8750"}, "give a URL"},
		{[]string{"--key", "k", "--output", "yaml"}, "text or json"},
		{[]string{"--key", "k", "extra"}, "unexpected argument"},
	} {
		e, _, errs := benchEnv(nil)
		if _, code, ok := parseBench(e, c.args); ok || code != exitUsage || !strings.Contains(errs.String(), c.want) {
			t.Errorf("%v: ok=%v code=%d stderr %q; want a usage error saying %q", c.args, ok, code, errs, c.want)
		}
	}

	e, out, _ := benchEnv(nil)
	if _, code, ok := parseBench(e, []string{"--help"}); ok || code != exitOK || !strings.Contains(out.String(), "Example:") ||
		!strings.Contains(out.String(), "--target opa") {
		t.Errorf("--help: code %d\n%s", code, out)
	}
}

func TestThousands(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 1234567.4: "1,234,567", 10423.6: "10,424"} {
		if got := thousands(in); got != want {
			t.Errorf("thousands(%v) = %q, want %q", in, got, want)
		}
	}
}
