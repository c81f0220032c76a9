package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/policy"
)

// Policies keeps the live policy tiers: it compiles, stores, audits and
// activates them, from the API or from files, and watches the files.
type Policies struct {
	Store  rein.PolicyStore
	Active *policy.Active
	Log    *slog.Logger
	Now    func() time.Time
	// Changed, when set, is called (in its own goroutine) after a new
	// version of any tier becomes active, with that tier's document.
	Changed func(doc *rein.PolicyDoc)
	// Refused, when set, is called each time a policy file's new content is
	// refused (metrics); the last good version stays active.
	Refused func()

	mu     sync.Mutex
	docs   map[string]*rein.PolicyDoc // tier ("" = global) -> live document
	broken map[string]string          // file -> why its last edit was refused
	seen   map[string][]byte          // file -> bytes last read
}

func (ps *Policies) init() {
	if ps.docs == nil {
		ps.docs, ps.broken, ps.seen = map[string]*rein.PolicyDoc{}, map[string]string{}, map[string][]byte{}
	}
}

// Activate compiles src and, if it compiles, stores it with a policy.updated
// audit entry and makes it live. A policy that does not compile changes nothing.
func (ps *Policies) Activate(ctx context.Context, tenant string, src []byte, by, origin string) (*rein.PolicyDoc, error) {
	p, err := policy.Compile(src)
	if err != nil {
		return nil, err
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.init()
	if tenant != "" {
		// A tenant tier may only narrow the global one: settings it would
		// loosen are refused here, with what to change.
		if problems := policy.TierProblems(ps.Active.Tier(""), p); len(problems) > 0 {
			return nil, rein.Errorf(rein.ECodeBadRequest, "the tenant tier for %q would loosen the global tier: %v", tenant, problems)
		}
	}
	return ps.activate(ctx, tenant, p, by, origin)
}

func (ps *Policies) activate(ctx context.Context, tenant string, p *policy.Policy, by, origin string) (*rein.PolicyDoc, error) {
	now := ps.Now().UTC()
	doc := &rein.PolicyDoc{Tenant: tenant, Version: p.Version, Source: string(p.Source), LoadedAt: now, LoadedBy: by, Origin: origin}
	prev := ""
	if old := ps.docs[tenant]; old != nil {
		prev = old.Version
	}
	auditTenant, tier := tenant, policy.TierTenant
	if tenant == "" {
		auditTenant, tier = rein.AllTenants, policy.TierGlobal
	}
	entry := &rein.Entry{TS: now, Tenant: auditTenant, Kind: rein.KindPolicyUpdated, Actor: by, Subject: p.Version,
		PolicyVersion: p.Version, Data: map[string]any{"tier": tier, "version": p.Version, "previous_version": prev,
			"origin": origin, "rules": len(p.Rules), "source": doc.Source}}
	if err := ps.Store.SavePolicy(ctx, doc, entry); err != nil {
		return nil, rein.Errorf(rein.ECodeUnavailable, "the policy compiled but could not be stored, so it is not active: %v", err)
	}
	ps.docs[tenant] = doc
	ps.Active.Set(tenant, p)
	if ps.Changed != nil {
		go ps.Changed(doc)
	}
	ps.Log.Info("policy activated", "tier", tier, "tenant", tenant, "version", p.Version, "rules", len(p.Rules), "origin", origin, "by", by)
	return doc, nil
}

// Doc returns the live document of a tier, or nil.
func (ps *Policies) Doc(tenant string) *rein.PolicyDoc {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.docs == nil {
		return nil
	}
	return ps.docs[tenant]
}

// Restore activates the newest stored version of every tier.
func (ps *Policies) Restore(ctx context.Context) error {
	docs, err := ps.Store.Policies(ctx)
	if err != nil {
		return fmt.Errorf("read stored policies: %w", err)
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.init()
	for _, d := range docs {
		if cur := ps.docs[d.Tenant]; cur != nil && cur.Version == d.Version && cur.LoadedAt.Equal(d.LoadedAt) {
			continue // live already
		}
		p, err := policy.Compile([]byte(d.Source))
		if err != nil {
			// Stored policies compiled when they were activated; one that no
			// longer does stays inactive, and checks of its tier fail closed.
			ps.Log.Error("stored policy no longer compiles; tier left without policy", "tenant", d.Tenant, "version", d.Version, "err", err)
			continue
		}
		ps.docs[d.Tenant] = d
		ps.Active.Set(d.Tenant, p)
	}
	return nil
}

// Source is where policy files live: one file for the global tier, or a
// directory with global.yaml and tenants/<tenant>.yaml.
type Source struct {
	File string
	Dir  string
}

// files maps each policy file of the source to its tier.
func (s Source) files() (map[string]string, error) {
	out := map[string]string{}
	switch {
	case s.File != "":
		out[s.File] = ""
	case s.Dir != "":
		if _, err := os.Stat(s.Dir); err != nil {
			return nil, fmt.Errorf("policy directory: %w", err)
		}
		if g := filepath.Join(s.Dir, "global.yaml"); exists(g) {
			out[g] = ""
		}
		tenants, _ := filepath.Glob(filepath.Join(s.Dir, "tenants", "*.yaml"))
		for _, f := range tenants {
			t := strings.TrimSuffix(filepath.Base(f), ".yaml")
			if !rein.ValidTenant(t) {
				return nil, fmt.Errorf("policy file %s: %q is not a tenant name (lower-case letters, digits, '.', '_', '-')", f, t)
			}
			out[f] = t
		}
	}
	return out, nil
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// LoadFiles reads every file of the source. At start (strict) a file that
// does not compile is an error; on reload it is logged and reported by
// Broken, and the tier keeps its last good version.
func (ps *Policies) LoadFiles(ctx context.Context, src Source, strict bool) error {
	files, err := src.files()
	if err != nil {
		return err
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.init()
	var errs []error
	for file, tenant := range files {
		body, err := os.ReadFile(file)
		if err != nil {
			errs = append(errs, ps.refuse(file, fmt.Errorf("read %s: %w", file, err)))
			continue
		}
		if last, ok := ps.seen[file]; ok && bytes.Equal(last, body) {
			continue
		}
		ps.seen[file] = body
		p, err := policy.Compile(body)
		if err != nil {
			errs = append(errs, ps.refuse(file, fmt.Errorf("policy %s: %w", file, err)))
			continue
		}
		delete(ps.broken, file)
		if d := ps.docs[tenant]; d != nil && d.Version == p.Version {
			ps.Active.Set(tenant, p)
			continue
		}
		if _, err := ps.activate(ctx, tenant, p, "file", "file:"+file); err != nil {
			delete(ps.seen, file) // try again next time
			errs = append(errs, err)
		}
	}
	if strict {
		return errors.Join(errs...)
	}
	return nil
}

func (ps *Policies) refuse(file string, err error) error {
	if ps.broken[file] != err.Error() && ps.Refused != nil {
		ps.Refused()
	}
	ps.broken[file] = err.Error()
	ps.Log.Error("policy file refused; the last good version stays active", "file", file, "err", err)
	return err
}

// Broken describes policy files whose last edit was refused, or "".
func (ps *Policies) Broken() string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	out := make([]string, 0, len(ps.broken))
	for _, why := range ps.broken {
		out = append(out, why)
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// Watch reloads the source's files when they change, until ctx ends.
// Polling the content (not the mtime) catches editors that replace files and
// copies that keep timestamps.
func (ps *Policies) Watch(ctx context.Context, src Source, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			ps.LoadFiles(ctx, src, false)
		}
	}
}
