package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/audit"
)

func init() {
	register(&command{name: "audit", summary: "read, export and verify the signed audit log (auditor, admin)", sub: []*command{
		{name: "tail", summary: "print the latest audit entries, and follow new ones with --follow",
			args:    "[--start N] [--count 20] [--follow]",
			example: "  rein audit tail\n  rein audit tail --follow",
			run:     runAuditTail},
		{name: "export", summary: "write a bundle (entries, checkpoints, keys) for offline verification",
			args:    "--out DIR [--from N] [--to M] [--format native,otlp,ocsf] [--policy FILE]",
			example: "  rein audit export --out ./audit-2026-11\n  rein audit export --out ./audit --from 1000\n  rein audit export --out ./siem --format otlp,ocsf   # adds logs.otlp.jsonl and events.ocsf.jsonl\n  rein audit export --out ./audit --policy witnesses.policy   # the latest checkpoint cosigned",
			run:     runAuditExport},
		{name: "verify", summary: "verify an exported bundle offline; exit 1 with the first bad index on failure",
			args: "DIR --key VERIFIER [--key VERIFIER]... [--policy FILE] [--trusted CHECKPOINT_FILE] [--pin FILE]",
			example: `  rein audit verify ./audit --key "$(cat rein-audit.pub)"
  rein audit verify ./audit --key "$(cat rein-audit.pub)" --trusted last.checkpoint --pin last.checkpoint
  rein audit verify ./audit --policy witnesses.policy   # the latest checkpoint must carry the witness quorum`,
			run: runAuditVerify},
		{name: "keys", summary: "print the verifier keys of the log's checkpoints, the one in use last",
			args:    "[--output json]",
			example: "  rein audit verify ./bundle --key \"$(rein audit keys | tail -1)\"",
			run:     runAuditKeys},
		{name: "rotate-key", summary: "replace the checkpoint signing key; both keys sign the change (admin of tenant *)",
			args:    "",
			example: "  rein audit rotate-key >> rein-audit.pub",
			run:     runAuditRotate},
		{name: "keygen", summary: "print a new checkpoint signing key (for REIN_AUDIT_KEY or audit_key_file, shared by every replica) and its verifier key on stderr",
			args: "[--name NAME]",
			example: `  # Replicas on one PostgreSQL sign with one key:
  rein audit keygen > /etc/rein/audit.key 2> /etc/rein/audit.pub
  REIN_AUDIT_KEY="$(cat /etc/rein/audit.key)" rein serve --db postgres://rein@db/rein`,
			run: runAuditKeygen},
		{name: "receipt", summary: "print the receipt of a check (or of any entry with --index): a C2SP tlog-proof anyone can verify offline",
			args: "CHECK_ID | --index N [--policy FILE]",
			example: `  rein audit receipt chk_01JD... > chk.tlog-proof
  rein audit receipt chk_01JD... --policy witnesses.policy > chk.tlog-proof   # cosigned by the policy's witnesses`,
			run: runAuditReceipt},
		{name: "verify-receipt", summary: "verify a receipt offline; exit 1 if it does not prove its entry",
			args: "FILE --key VERIFIER [--key VERIFIER]... [--policy FILE] [--origin ORIGIN] [--subject ID] [--entry]",
			example: `  rein audit verify-receipt chk.tlog-proof --key "$(cat rein-audit.pub)" --subject chk_01JD...
  rein audit verify-receipt chk.tlog-proof --policy witnesses.policy --entry`,
			run: runAuditVerifyReceipt},
		{name: "witness", summary: "submit the latest checkpoint to the policy's witnesses (C2SP tlog-witness) and print it cosigned",
			args: "--policy FILE [--out FILE] [--every DURATION]",
			example: `  rein audit witness --policy witnesses.policy --out latest.cosigned
  # beside the server, offering each new checkpoint:
  rein audit witness --policy witnesses.policy --out latest.cosigned --every 10s`,
			run: runAuditWitness},
	}})
}

// auditCommand is the audit subcommand of that name.
func auditCommand(name string) *command {
	for _, c := range commandNamed("audit").sub {
		if c.name == name {
			return c
		}
	}
	return &command{name: name}
}

// isTerminal reports whether f is a terminal: progress is shown only there.
// (A character device is not enough: /dev/null is one.)
func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

func runAuditTail(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein audit tail", commandNamed("audit").sub[0])
	newClient := clientFlags(e, fs)
	start := fs.Int64("start", -1, "first index to print (default: the last --count entries)")
	count := fs.Int("count", 20, "how many of the latest entries to print")
	follow := fs.Bool("follow", false, "keep printing new entries as they are sealed")
	if _, code, ok := parse(fs, args); !ok {
		return code
	}
	c := newClient()
	next := *start
	if next < 0 {
		note, err := c.Checkpoint(ctx)
		if err != nil {
			return fail(e, "rein audit tail", err)
		}
		cp, err := audit.ParseCheckpoint(noteText(note))
		if err != nil {
			fmt.Fprintf(e.stderr, "rein audit tail: %v\n", err)
			return exitUsage
		}
		next = max(0, cp.Size-int64(*count))
	}
	for {
		page, err := c.Entries(ctx, next, 1000)
		if err != nil {
			return fail(e, "rein audit tail", err)
		}
		lines := bytes.Count(page, []byte("\n"))
		e.stdout.Write(page)
		next += int64(lines)
		if !*follow {
			return exitOK
		}
		if lines < 1000 {
			select {
			case <-ctx.Done():
				return exitOK
			case <-time.After(time.Second):
			}
		}
	}
}

// noteText is the text of a signed note (before the blank line).
func noteText(signed []byte) string {
	text, _, _ := bytes.Cut(signed, []byte("\n\n"))
	return string(text) + "\n"
}

// Manifest describes an exported bundle.
type Manifest struct {
	Origin      string `json:"origin"`
	From        int64  `json:"from"` // first index shown in full (if visible)
	To          int64  `json:"to"`   // entries in the bundle: indexes 0 to To-1
	Full        int64  `json:"full"`
	Hidden      int64  `json:"hidden"`
	Checkpoints int    `json:"checkpoints"`
	Version     string `json:"rein_version"`
	ExportedAt  string `json:"exported_at"`
	// Formats lists the renderings written: "native" always, then "otlp"
	// (logs.otlp.jsonl) and "ocsf" (events.ocsf.jsonl) when asked for,
	// whose shape is ExportSchema.
	Formats      []string `json:"formats"`
	ExportSchema string   `json:"export_schema,omitempty"`
}

func runAuditExport(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein audit export", commandNamed("audit").sub[1])
	newClient := clientFlags(e, fs)
	out := fs.String("out", "", "directory to write the bundle to (created)")
	from := fs.Int64("from", 0, "first index to show in full; earlier entries are included as leaf hashes")
	to := fs.Int64("to", -1, "end of the bundle (default: the latest checkpoint); rounded down to a checkpoint")
	var formats listFlag
	fs.Var(&formats, "format", "native (the bundle, always written), otlp (OpenTelemetry logs, OTLP/JSON lines), ocsf (OCSF JSON lines); comma-separated")
	policy := fs.String("policy", "", "a C2SP tlog-policy file: have its witnesses cosign the bundle's latest checkpoint and require its quorum")
	if _, code, ok := parse(fs, args); !ok {
		return code
	}
	if *out == "" {
		fmt.Fprintln(e.stderr, "rein audit export: --out DIR is required")
		return exitUsage
	}
	withOTLP, withOCSF := false, false
	for _, f := range formats {
		switch f {
		case "native":
		case "otlp":
			withOTLP = true
		case "ocsf":
			withOCSF = true
		default:
			fmt.Fprintf(e.stderr, "rein audit export: unknown format %q (native, otlp, ocsf)\n", f)
			return exitUsage
		}
	}
	var pol *audit.Policy
	if *policy != "" {
		var err error
		if pol, err = readPolicy(*policy); err != nil {
			fmt.Fprintf(e.stderr, "rein audit export: %v\n", err)
			return exitUsage
		}
	}
	c := newClient()
	cps, err := c.Checkpoints(ctx, 1, 1<<62)
	if err != nil {
		return fail(e, "rein audit export", err)
	}
	notes := audit.SplitNotes(cps)
	var keep [][]byte
	var end int64
	var origin string
	for _, n := range notes {
		cp, err := audit.ParseCheckpoint(noteText(n))
		if err != nil {
			fmt.Fprintf(e.stderr, "rein audit export: the server sent a bad checkpoint: %v\n", err)
			return exitUsage
		}
		if *to >= 0 && cp.Size > *to {
			continue
		}
		keep, end, origin = append(keep, n), cp.Size, cp.Origin
	}
	if len(keep) == 0 {
		fmt.Fprintln(e.stderr, "rein audit export: no checkpoint in that range yet")
		return exitNegative
	}
	if pol != nil {
		cosigned, errs := c.WitnessAll(ctx, pol, keep[len(keep)-1])
		for _, err := range errs {
			fmt.Fprintf(e.stderr, "warning: %v\n", err)
		}
		if _, err := pol.Check(cosigned); err != nil {
			fmt.Fprintf(e.stderr, "rein audit export: %v (a witness cosigns only the newest checkpoint it has seen: export without --to)\n", err)
			return exitNegative
		}
		keep[len(keep)-1] = cosigned
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(e.stderr, "rein audit export: %v\n", err)
		return exitUsage
	}
	f, err := os.Create(filepath.Join(*out, "entries.ndjson"))
	if err != nil {
		fmt.Fprintf(e.stderr, "rein audit export: %v\n", err)
		return exitUsage
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	extra, err := newRenderings(*out, origin, withOTLP, withOCSF)
	if err != nil {
		fmt.Fprintf(e.stderr, "rein audit export: %v\n", err)
		return exitUsage
	}
	defer extra.close()
	progress := isTerminal(os.Stderr)
	m := Manifest{Origin: origin, From: *from, To: end, Checkpoints: len(keep), Version: rein.Version,
		ExportedAt: time.Now().UTC().Format(time.RFC3339)}
	for next := int64(0); next < end; {
		page, err := c.Entries(ctx, next, int(min(10000, end-next)))
		if err != nil {
			return fail(e, "rein audit export", err)
		}
		for _, line := range bytes.SplitAfter(page, []byte("\n")) {
			line = bytes.TrimSuffix(line, []byte("\n"))
			if len(line) == 0 {
				continue
			}
			hidden := bytes.HasPrefix(line, []byte(`{"index":`)) && bytes.Contains(line, []byte(`"leaf_hash":`))
			if !hidden && next < *from {
				h := tlog.RecordHash(line)
				line, _ = json.Marshal(audit.HiddenLeaf{Index: next, LeafHash: base64.StdEncoding.EncodeToString(h[:])})
				hidden = true
			}
			if hidden {
				m.Hidden++
			} else {
				m.Full++
				if err := extra.add(line); err != nil {
					fmt.Fprintf(e.stderr, "rein audit export: %v\n", err)
					return exitUsage
				}
			}
			w.Write(line)
			w.WriteByte('\n')
			next++
		}
		if progress {
			fmt.Fprintf(e.stderr, "\rexported %d of %d entries", next, end)
		}
		if len(page) == 0 {
			fmt.Fprintf(e.stderr, "rein audit export: the log ended at %d, before its checkpoint at %d\n", next, end)
			return exitNegative
		}
	}
	if progress {
		fmt.Fprintln(e.stderr)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(e.stderr, "rein audit export: %v\n", err)
		return exitUsage
	}
	if err := extra.close(); err != nil {
		fmt.Fprintf(e.stderr, "rein audit export: %v\n", err)
		return exitUsage
	}
	m.Formats = extra.names()
	if len(m.Formats) > 1 {
		m.ExportSchema = audit.ExportSchema
	}
	keys, err := c.AuditKeys(ctx)
	if err != nil {
		return fail(e, "rein audit export", err)
	}
	keysJSON, _ := json.MarshalIndent(map[string]any{"keys": keys}, "", "  ")
	manifest, _ := json.MarshalIndent(m, "", "  ")
	for name, body := range map[string][]byte{"checkpoints.txt": bytes.Join(keep, []byte("\n")),
		"keys.json": keysJSON, "manifest.json": manifest} {
		if err := os.WriteFile(filepath.Join(*out, name), body, 0o644); err != nil {
			fmt.Fprintf(e.stderr, "rein audit export: %v\n", err)
			return exitUsage
		}
	}
	fmt.Fprintf(e.stdout, "exported %d entries (%d in full, %d as leaf hashes) and %d checkpoints of %s to %s\n",
		m.To, m.Full, m.Hidden, m.Checkpoints, m.Origin, *out)
	return exitOK
}

func runAuditVerify(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein audit verify", commandNamed("audit").sub[2])
	var keys listFlag
	fs.Var(&keys, "key", "a verifier key that signs the log's checkpoints (repeatable; see GET /v1/audit/keys)")
	trusted := fs.String("trusted", "", "a checkpoint pinned earlier: the bundle must extend it")
	pin := fs.String("pin", "", "write the bundle's latest checkpoint here, to pass as --trusted next time")
	policy := fs.String("policy", "", "a C2SP tlog-policy file: its logs are accepted and the latest checkpoint must carry its witness quorum")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 || (len(keys) == 0 && *policy == "") {
		fmt.Fprintln(e.stderr, "rein audit verify: give the bundle directory and at least one --key or a --policy; see --help")
		return exitUsage
	}
	var known note.Verifiers
	var err error
	if len(keys) > 0 {
		if known, err = audit.Verifiers(keys...); err != nil {
			fmt.Fprintf(e.stderr, "rein audit verify: %v\n", err)
			return exitUsage
		}
	}
	var pol *audit.Policy
	if *policy != "" {
		if pol, err = readPolicy(*policy); err != nil {
			fmt.Fprintf(e.stderr, "rein audit verify: %v\n", err)
			return exitUsage
		}
	}
	cps, err := os.ReadFile(filepath.Join(pos[0], "checkpoints.txt"))
	if err != nil {
		fmt.Fprintf(e.stderr, "rein audit verify: %v\n", err)
		return exitUsage
	}
	f, err := os.Open(filepath.Join(pos[0], "entries.ndjson"))
	if err != nil {
		fmt.Fprintf(e.stderr, "rein audit verify: %v\n", err)
		return exitUsage
	}
	defer f.Close()
	opt := audit.Options{Known: known, Policy: pol}
	if *trusted != "" {
		if opt.Trusted, err = os.ReadFile(*trusted); err != nil {
			fmt.Fprintf(e.stderr, "rein audit verify: %v\n", err)
			return exitUsage
		}
	}
	if isTerminal(os.Stderr) {
		opt.Progress = func(n int64) { fmt.Fprintf(e.stderr, "\rverified %d entries", n) }
	}
	start := time.Now()
	rep, err := audit.Verify(audit.Bundle{Entries: bufio.NewReaderSize(f, 1<<20), Checkpoints: cps}, opt)
	if opt.Progress != nil {
		fmt.Fprintln(e.stderr)
	}
	if err != nil {
		fmt.Fprintf(e.stdout, "FAILED: %v\n", err)
		return exitNegative
	}
	witnesses := ""
	if len(rep.Witnesses) > 0 {
		witnesses = ", cosigned by " + strings.Join(rep.Witnesses, ", ")
	}
	fmt.Fprintf(e.stdout, "OK: %d entries (%d in full, %d as leaf hashes), %d checkpoints of %s, latest at size %d%s, in %s\n",
		rep.Entries, rep.Full, rep.Hidden, rep.Checkpoints, rep.Latest.Origin, rep.Latest.Size, witnesses, time.Since(start).Round(time.Millisecond))
	if *pin != "" {
		if err := os.WriteFile(*pin, rep.LatestNote, 0o644); err != nil {
			fmt.Fprintf(e.stderr, "rein audit verify: %v\n", err)
			return exitUsage
		}
	}
	return exitOK
}

func runAuditKeys(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein audit keys", commandNamed("audit").sub[3])
	newClient := clientFlags(e, fs)
	output := fs.String("output", "text", "text or json")
	if _, code, ok := parse(fs, args); !ok {
		return code
	}
	keys, err := newClient().AuditKeys(ctx)
	if err != nil {
		return fail(e, "rein audit keys", err)
	}
	if *output == "json" {
		printJSON(e, keys)
		return exitOK
	}
	for _, k := range keys {
		fmt.Fprintln(e.stdout, k.Verifier)
	}
	return exitOK
}

func runAuditRotate(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein audit rotate-key", commandNamed("audit").sub[4])
	newClient := clientFlags(e, fs)
	if _, code, ok := parse(fs, args); !ok {
		return code
	}
	k, err := newClient().RotateAuditKey(ctx)
	if err != nil {
		return fail(e, "rein audit rotate-key", err)
	}
	fmt.Fprintln(e.stdout, k.Verifier)
	fmt.Fprintln(e.stderr, "the new key signs every checkpoint from now on; verifiers need it and the old one (rein audit keys)")
	return exitOK
}

func runAuditKeygen(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein audit keygen", commandNamed("audit").sub[5])
	name := fs.String("name", "rein", "the key's name in signatures")
	if pos, code, ok := parse(fs, args); !ok || len(pos) > 0 {
		if ok {
			fmt.Fprintf(e.stderr, "rein audit keygen: unexpected argument %q\n", pos[0])
			return exitUsage
		}
		return code
	}
	skey, vkey, err := note.GenerateKey(rand.Reader, *name)
	if err != nil {
		fmt.Fprintf(e.stderr, "rein audit keygen: %v\n", err)
		return exitUsage
	}
	fmt.Fprintln(e.stdout, skey)
	fmt.Fprintln(e.stderr, vkey)
	return exitOK
}
