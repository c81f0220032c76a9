package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/client"
)

// readPolicy reads a C2SP tlog-policy file.
func readPolicy(path string) (*audit.Policy, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := audit.ParsePolicy(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// witnessed has the policy's witnesses cosign a checkpoint that fetch
// returns, fetching a newer one when a witness has already cosigned a
// larger tree. It returns the cosigned checkpoint once the quorum is met.
func witnessed(ctx context.Context, e *env, c *client.Client, p *audit.Policy, fetch func() ([]byte, error)) ([]byte, error) {
	for try := 0; ; try++ {
		signed, err := fetch()
		if err != nil {
			return nil, err
		}
		cosigned, errs := c.WitnessAll(ctx, p, signed)
		var stale *client.StaleError
		retry := false
		for _, err := range errs {
			if errors.As(err, &stale) && try < 3 {
				retry = true
			}
		}
		if retry {
			continue
		}
		for _, err := range errs {
			fmt.Fprintf(e.stderr, "warning: %v\n", err)
		}
		if _, err := p.Check(cosigned); err != nil {
			return nil, err
		}
		return cosigned, nil
	}
}

func runAuditReceipt(ctx context.Context, e *env, args []string) int {
	const name = "rein audit receipt"
	fs := flags(e, name, auditCommand("receipt"))
	newClient := clientFlags(e, fs)
	index := fs.Int64("index", -1, "the audit entry's index, instead of a check id (auditor, admin)")
	policy := fs.String("policy", "", "a C2SP tlog-policy file: have its witnesses cosign the receipt's checkpoint and require its quorum")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if (len(pos) == 1) == (*index >= 0) || len(pos) > 1 {
		fmt.Fprintf(e.stderr, "%s: give a check id or --index N; see --help\n", name)
		return exitUsage
	}
	c := newClient()
	get := func() (*audit.Receipt, error) {
		var text []byte
		var err error
		if *index >= 0 {
			text, err = c.Receipt(ctx, *index)
		} else {
			text, err = c.CheckReceipt(ctx, pos[0])
		}
		if err != nil {
			return nil, err
		}
		return audit.ParseReceipt(text)
	}
	r, err := get()
	if err != nil {
		return fail(e, name, err)
	}
	if *policy != "" {
		p, err := readPolicy(*policy)
		if err != nil {
			fmt.Fprintf(e.stderr, "%s: %v\n", name, err)
			return exitUsage
		}
		first := true
		cosigned, err := witnessed(ctx, e, c, p, func() ([]byte, error) {
			if !first {
				if r, err = get(); err != nil {
					return nil, err
				}
			}
			first = false
			return r.Checkpoint, nil
		})
		if err != nil {
			fmt.Fprintf(e.stderr, "%s: %v\n", name, err)
			return exitNegative
		}
		r.Checkpoint = cosigned
	}
	e.stdout.Write(r.Format())
	return exitOK
}

func runAuditVerifyReceipt(ctx context.Context, e *env, args []string) int {
	const name = "rein audit verify-receipt"
	fs := flags(e, name, auditCommand("verify-receipt"))
	var keys listFlag
	fs.Var(&keys, "key", "a verifier key of the log's checkpoints (repeatable; see rein audit keys)")
	policy := fs.String("policy", "", "a C2SP tlog-policy file: its logs are accepted and its witness quorum is required")
	origin := fs.String("origin", "", "the log the receipt must be from (default: any log a key or the policy accepts)")
	entry := fs.Bool("entry", false, "print the entry after the summary")
	subject := fs.String("subject", "", "the id the entry must be about (a check id, an approval id, ...)")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 || (len(keys) == 0 && *policy == "") {
		fmt.Fprintf(e.stderr, "%s: give the receipt file and a --key or a --policy; see --help\n", name)
		return exitUsage
	}
	opt := audit.ReceiptOptions{Origin: *origin}
	if len(keys) > 0 {
		known, err := audit.Verifiers(keys...)
		if err != nil {
			fmt.Fprintf(e.stderr, "%s: %v\n", name, err)
			return exitUsage
		}
		opt.Known = known
	}
	if *policy != "" {
		p, err := readPolicy(*policy)
		if err != nil {
			fmt.Fprintf(e.stderr, "%s: %v\n", name, err)
			return exitUsage
		}
		opt.Policy = p
	}
	text, err := os.ReadFile(pos[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "%s: %v\n", name, err)
		return exitUsage
	}
	r, err := audit.ParseReceipt(text)
	if err == nil {
		var v *audit.VerifiedReceipt
		if v, err = audit.VerifyReceipt(r, opt); err == nil {
			kind, about := entryLabel(v.Entry)
			if *subject != "" && about != *subject {
				fmt.Fprintf(e.stdout, "FAILED: the receipt proves entry %d about %q (%s), not %q\n", v.Index, about, kind, *subject)
				return exitNegative
			}
			fmt.Fprintf(e.stdout, "OK: entry %d (%s %s) is in %s, size %d", v.Index, kind, about, v.Checkpoint.Origin, v.Checkpoint.Size)
			if len(v.Witnesses) > 0 {
				fmt.Fprintf(e.stdout, ", cosigned by %s", strings.Join(v.Witnesses, ", "))
			}
			fmt.Fprintln(e.stdout)
			if *entry {
				fmt.Fprintf(e.stdout, "%s\n", v.Entry)
			}
			return exitOK
		}
	}
	fmt.Fprintf(e.stdout, "FAILED: %v\n", err)
	return exitNegative
}

// entryLabel is an entry's kind and subject, for a summary line.
func entryLabel(entry []byte) (string, string) {
	var v struct{ Kind, Subject string }
	_ = json.Unmarshal(entry, &v)
	return v.Kind, v.Subject
}

func runAuditWitness(ctx context.Context, e *env, args []string) int {
	const name = "rein audit witness"
	fs := flags(e, name, auditCommand("witness"))
	newClient := clientFlags(e, fs)
	policy := fs.String("policy", "", "a C2SP tlog-policy file naming the witnesses (with their URLs) and the quorum")
	out := fs.String("out", "", "write the cosigned checkpoint here instead of stdout (replaced on each round)")
	every := fs.Duration("every", 0, "keep running: submit each new checkpoint at this interval (e.g. 10s) until interrupted")
	if _, code, ok := parse(fs, args); !ok {
		return code
	}
	if *policy == "" {
		fmt.Fprintf(e.stderr, "%s: --policy FILE is required\n", name)
		return exitUsage
	}
	if *every < 0 || (*every > 0 && *out == "") {
		fmt.Fprintf(e.stderr, "%s: --every needs a positive interval and --out FILE\n", name)
		return exitUsage
	}
	p, err := readPolicy(*policy)
	if err != nil {
		fmt.Fprintf(e.stderr, "%s: %v\n", name, err)
		return exitUsage
	}
	c := newClient()
	if *every == 0 {
		return witnessRound(ctx, e, c, p, name, *out)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	var last string
	for {
		// A round only when the log has a checkpoint the witnesses have not
		// been offered yet; a failed round is retried at the next tick.
		if signed, err := c.Checkpoint(ctx); err != nil {
			fmt.Fprintf(e.stderr, "%s: %v\n", name, err)
		} else if string(signed) != last && witnessRound(ctx, e, c, p, name, *out) == exitOK {
			last = string(signed)
		}
		select {
		case <-ctx.Done():
			return exitOK
		case <-time.After(*every):
		}
	}
}

// witnessRound has the latest checkpoint cosigned and writes it to out
// (or stdout).
func witnessRound(ctx context.Context, e *env, c *client.Client, p *audit.Policy, name, out string) int {
	cosigned, err := witnessed(ctx, e, c, p, func() ([]byte, error) { return c.Checkpoint(ctx) })
	if err != nil {
		var ce *client.Error
		if errors.As(err, &ce) {
			return fail(e, name, err)
		}
		fmt.Fprintf(e.stderr, "%s: %v\n", name, err)
		return exitNegative
	}
	if out == "" {
		e.stdout.Write(cosigned)
		return exitOK
	}
	tmp := out + ".tmp"
	err = os.WriteFile(tmp, cosigned, 0o644)
	if err == nil {
		err = os.Rename(tmp, out)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "%s: %v\n", name, err)
		return exitUsage
	}
	cp, _ := audit.ParseCheckpoint(noteText(cosigned))
	fmt.Fprintf(e.stdout, "cosigned %s at size %d by %s\n", cp.Origin, cp.Size, strings.Join(p.Cosigners(cosigned), ", "))
	return exitOK
}

// renderings writes the OTLP and OCSF files of an export next to the
// bundle: the entries shown in full, OTLP as one ExportLogsServiceRequest
// per line (a page of up to 1,000 entries), OCSF as one event per line.
type renderings struct {
	origin     string
	otlp, ocsf *os.File
	otlpW      *bufio.Writer
	ocsfW      *bufio.Writer
	page       [][]byte
	closed     bool
}

func newRenderings(dir, origin string, otlp, ocsf bool) (*renderings, error) {
	r := &renderings{origin: origin}
	var err error
	if otlp {
		if r.otlp, err = os.Create(filepath.Join(dir, "logs.otlp.jsonl")); err != nil {
			return nil, err
		}
		r.otlpW = bufio.NewWriterSize(r.otlp, 1<<20)
	}
	if ocsf {
		if r.ocsf, err = os.Create(filepath.Join(dir, "events.ocsf.jsonl")); err != nil {
			return nil, err
		}
		r.ocsfW = bufio.NewWriterSize(r.ocsf, 1<<20)
	}
	return r, nil
}

func (r *renderings) add(entry []byte) error {
	if r.ocsfW != nil {
		ev, err := audit.OCSFEvent(r.origin, rein.Version, entry)
		if err != nil {
			return err
		}
		r.ocsfW.Write(ev)
		r.ocsfW.WriteByte('\n')
	}
	if r.otlpW != nil {
		r.page = append(r.page, slices.Clone(entry))
		if len(r.page) == 1000 {
			return r.flushPage()
		}
	}
	return nil
}

func (r *renderings) flushPage() error {
	if len(r.page) == 0 {
		return nil
	}
	req, err := audit.OTLPLogs(r.origin, rein.Version, r.page)
	if err != nil {
		return err
	}
	r.otlpW.Write(req)
	r.otlpW.WriteByte('\n')
	r.page = r.page[:0]
	return nil
}

func (r *renderings) close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	var errs []error
	if r.otlpW != nil {
		errs = append(errs, r.flushPage(), r.otlpW.Flush(), r.otlp.Close())
	}
	if r.ocsfW != nil {
		errs = append(errs, r.ocsfW.Flush(), r.ocsf.Close())
	}
	return errors.Join(errs...)
}

func (r *renderings) names() []string {
	out := []string{"native"}
	if r.otlp != nil {
		out = append(out, "otlp")
	}
	if r.ocsf != nil {
		out = append(out, "ocsf")
	}
	return out
}
