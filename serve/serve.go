// Package serve wires `rein serve`: the store, the bootstrap admin key, the
// policy tiers and their files, the decision pipeline and the HTTP API, with
// a graceful shutdown.
package serve

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.yaml.in/yaml/v3"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/console"
	"github.com/reinhq/rein/egress"
	"github.com/reinhq/rein/events"
	reinhttp "github.com/reinhq/rein/http"
	"github.com/reinhq/rein/mail"
	"github.com/reinhq/rein/notify"
	"github.com/reinhq/rein/pipeline"
	"github.com/reinhq/rein/policy"
	"github.com/reinhq/rein/postgres"
	"github.com/reinhq/rein/signin"
	"github.com/reinhq/rein/slack"
	"github.com/reinhq/rein/sqlite"
	"github.com/reinhq/rein/webhook"
	"github.com/reinhq/rein/webpush"
)

// Config is what `rein serve` runs with. A config file (YAML, same names)
// may set any of it; flags win over the file.
type Config struct {
	Data      string `yaml:"data"`
	Listen    string `yaml:"listen"`
	Policy    string `yaml:"policy"`
	PolicyDir string `yaml:"policy_dir"`
	DB        string `yaml:"db"`
	// BaseURL is the address people reach rein at, for links in approvals;
	// default http://<listen>.
	BaseURL string `yaml:"base_url"`
	// PolicyPoll is how often policy files are checked for changes.
	PolicyPoll time.Duration `yaml:"policy_poll"`
	// AuditOrigin names the log in its checkpoints; default rein/<deployment id>.
	AuditOrigin string `yaml:"audit_origin"`
	// AuditKeyFile holds the checkpoint signing key (a note signer key);
	// default <data>/audit.key, created on first start. REIN_AUDIT_KEY wins.
	AuditKeyFile string `yaml:"audit_key_file"`
	// AuditArgs chooses per tool glob how arguments are kept in audit
	// entries: redact_secrets (default), values or hashes.
	AuditArgs []pipeline.ArgsRule `yaml:"audit_args"`
	// Webhooks receive events (Standard Webhooks signatures, or Slack).
	Webhooks []*webhook.Target `yaml:"webhooks"`
	// Slack, Email and Notify bring approvals to approvers (notify.go).
	Slack  *slack.Config  `yaml:"slack"`
	Email  *mail.Config   `yaml:"email"`
	Notify notify.Routing `yaml:"notify"`
	// Push sends Web Push notifications of new approvals to the devices
	// approvers subscribe in the console (on unless disabled).
	Push webpush.Config `yaml:"push"`
	// OIDC signs people in to the console with their company's identity
	// provider (docs/approvers.md).
	OIDC *signin.Config `yaml:"oidc"`
	// ConsoleKeyFile holds the secret that signs console session cookies;
	// REIN_CONSOLE_KEY wins; by default it is derived from the audit
	// signing key, which replicas share already.
	ConsoleKeyFile string `yaml:"console_key_file"`
	// ConsoleSession and ConsoleIdle bound console sessions: at most this
	// long after sign-in (default 12h), and this long without a request
	// (default 1h).
	ConsoleSession time.Duration `yaml:"console_session"`
	ConsoleIdle    time.Duration `yaml:"console_idle"`
	// TLSCert and TLSKey serve HTTPS; both files are re-read when they
	// change, so a renewed certificate needs no restart.
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`
	// BodyTimeout bounds how long a request body may take to arrive.
	BodyTimeout time.Duration `yaml:"body_timeout"`
	// LogFormat is text (default) or json; Pprof serves Go's profiler on a
	// separate address. Both are read by the command that starts the server.
	LogFormat string `yaml:"log_format"`
	Pprof     string `yaml:"pprof"`
	// OTLPEndpoint, when set, receives OpenTelemetry traces over OTLP/HTTP
	// (e.g. http://127.0.0.1:4318); the standard OTEL_EXPORTER_OTLP_*
	// variables work too.
	OTLPEndpoint string `yaml:"otlp_endpoint"`
	// Resolver is the DNS server (host:port) that tools with resolve: true
	// are looked up with; empty: the system's resolver.
	Resolver string `yaml:"resolver"`
}

// LoadConfig reads a YAML config file strictly (unknown fields are errors).
func LoadConfig(path string) (Config, error) {
	var c Config
	body, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("read config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(body))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return c, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// Server is a running rein.
type Server struct {
	Addr string // the address it listens on
	URL  string // http://Addr, or https://Addr with TLS
	// BaseURL is the address people reach rein at: base_url, else the
	// default of defaultBaseURL.
	BaseURL  string
	Store    rein.Store
	Policies *Policies
	sealer   *audit.Sealer
	shared   bool // PostgreSQL: the integrator seals, on whichever replica it runs
	log      *slog.Logger
	http     *http.Server
	ln       net.Listener
	stop     context.CancelFunc
	done     chan struct{}
	tracing  *tracing
}

// Start opens the store, bootstraps, loads policy and starts listening.
// The admin key, when one is created, is printed to out.
func Start(ctx context.Context, cfg Config, log *slog.Logger, out io.Writer) (*Server, error) {
	if cfg.Data == "" {
		cfg.Data = "./rein-data"
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:8750"
	}
	if cfg.PolicyPoll == 0 {
		cfg.PolicyPoll = time.Second
	}
	for _, r := range cfg.AuditArgs {
		if r.Tool == "" {
			return nil, fmt.Errorf("audit_args: a rule needs a tool glob, e.g. \"payments.*\" or \"*\"")
		}
		switch r.Store {
		case pipeline.ArgsRedactSecrets, pipeline.ArgsValues, pipeline.ArgsHashes:
		default:
			return nil, fmt.Errorf("audit_args: store %q for tool %q: use redact_secrets, values or hashes", r.Store, r.Tool)
		}
	}
	for _, t := range cfg.Webhooks {
		if err := t.Check(); err != nil {
			return nil, err
		}
	}
	if err := checkSignIn(&cfg); err != nil {
		return nil, err
	}
	if err := checkNotify(&cfg); err != nil {
		return nil, err
	}
	if cfg.Policy != "" && cfg.PolicyDir != "" {
		return nil, errors.New("give --policy FILE or --policy-dir DIR, not both")
	}
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	store, pg, err := openStore(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			store.Close()
		}
	}()
	deployment, err := store.Meta(ctx, "deployment_id", func() string { return rein.NewID("dep") })
	if err != nil {
		return nil, fmt.Errorf("deployment id: %w", err)
	}
	if err := bootstrapAdmin(ctx, store, cfg.Data, out, cfg.LogFormat == "json"); err != nil {
		return nil, err
	}
	origin := cfg.AuditOrigin
	if origin == "" {
		origin = "rein/" + deployment
	}
	signer, vkey, skey, err := signingKey(cfg, origin)
	if err != nil {
		return nil, err
	}
	if err := store.AddAuditKey(ctx, &rein.AuditKey{Verifier: vkey, From: time.Now().UTC()}); err != nil {
		return nil, fmt.Errorf("record the audit signing key: %w", err)
	}
	known, err := knownVerifiers(ctx, store)
	if err != nil {
		return nil, fmt.Errorf("audit signing keys: %w", err)
	}
	sealer := &audit.Sealer{Store: store, Origin: origin, Signer: signer, Known: known, Now: time.Now}
	keys := &keyRing{origin: origin, path: keyPath(cfg), signer: signer, vkey: vkey, store: store, sealer: sealer}
	if pg != nil {
		// The integrator (whichever replica holds it) signs checkpoints.
		pg.SetSeal(func(ctx context.Context) error { _, err := sealer.Seal(ctx); return err })
	} else if _, err := sealer.Seal(ctx); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}

	active := &policy.Active{}
	pols := &Policies{Store: store, Active: active, Log: log, Now: time.Now}
	if err := pols.Restore(ctx); err != nil {
		return nil, err
	}
	src := Source{File: cfg.Policy, Dir: cfg.PolicyDir}
	if err := pols.LoadFiles(ctx, src, true); err != nil {
		return nil, err
	}

	var cert *certificate
	if cfg.TLSCert != "" || cfg.TLSKey != "" {
		if cert, err = newCertificate(cfg.TLSCert, cfg.TLSKey, func(err error) {
			log.Error("a changed TLS certificate could not be loaded; the last good one stays in use", "err", err)
		}); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	scheme := "http://"
	if cert != nil {
		ln, scheme = tls.NewListener(ln, cert.config()), "https://"
	}
	url := scheme + ln.Addr().String()
	base := cfg.BaseURL
	if base == "" {
		base = defaultBaseURL(scheme, ln.Addr())
	}

	secret, err := consoleSecret(cfg, skey)
	if err != nil {
		ln.Close()
		return nil, err
	}
	web := &console.Console{Keys: store, SignOuts: store, Log: log, Secure: strings.HasPrefix(base, "https://"),
		Sealer: &console.Sealer{Secret: secret, MaxAge: cfg.ConsoleSession, Idle: cfg.ConsoleIdle}}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	decisions := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rein_checks_total", Help: "Checks decided, by decision."}, []string{"decision"})
	latency := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rein_check_duration_seconds",
		Help: "Time to decide and durably record a check.", Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)})
	reg.MustRegister(decisions, latency)
	m := newMetrics(reg, store)
	tr, err := newTracing(ctx, cfg.OTLPEndpoint)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("OpenTelemetry traces: %w", err)
	}
	if cfg.Resolver != "" {
		lookup, err := egress.DNSResolver(cfg.Resolver)
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("resolver: %w", err)
		}
		pipeline.UseResolver(lookup)
	}
	if pg != nil {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "rein_audit_integrator",
			Help: "1 while this replica integrates the shared audit log (assigns indexes, signs checkpoints), else 0."},
			func() float64 {
				if pg.Leading() {
					return 1
				}
				return 0
			}))
	}

	bus := &events.Bus{}
	pipe := &pipeline.Pipeline{Store: store, Policies: active, BaseURL: base, Log: log, AuditArgs: cfg.AuditArgs, Events: bus,
		Observe: func(rec *rein.CheckRecord, took time.Duration) {
			decisions.WithLabelValues(string(rec.Decision)).Inc()
			latency.Observe(took.Seconds())
			if tr != nil {
				tr.check(rec, took)
			}
		},
		Resolved: func(a *rein.Approval) {
			m.approvalResolved(a)
			if tr != nil {
				tr.approval(a)
			}
		}}
	pols.Refused = m.policyRefused.Inc
	// Records kept before rein redacted secrets are redacted once, before
	// anything is served from them.
	if rw, ok := store.(interface {
		RewriteRecords(context.Context, string, func(string, []byte) []byte) (int, error)
	}); ok {
		n, err := rw.RewriteRecords(ctx, pipeline.RedactStoredSecrets, pipe.ConcealRecord)
		if err != nil {
			return nil, fmt.Errorf("redact the secrets of stored records: %w", err)
		}
		if n > 0 {
			log.Info("secrets redacted in stored records", "records", n)
		}
	}
	var rel *relay
	if pg != nil {
		rel = newRelay(pg, log)
		rel.pipe, rel.bus, rel.pols = pipe, bus, pols
		pipe.Replicas = rel
		pipe.SharedLimits = pg
		bus.OnPublish = rel.published
		bus.OnWatch = rel.announce
		pg.Subscribe(rel.receive)
	}
	if err := pipe.LoadLocks(ctx); err != nil {
		return nil, err
	}
	nt := newNotifications(cfg, store, pipe, base, secret, web, log)
	api := &reinhttp.Server{Push: nt.push, Slack: nt.slackHandler(), ApprovalLinks: nt.linkHandler(), BodyTimeout: cfg.BodyTimeout, Pipeline: pipe,
		KeyStore: store, CheckStore: store, ApprovalStore: store, QuestionStore: store, SessionStore: store,
		AuditStore: store, CheckpointStore: store, DeliveryStore: store, PasskeyStore: store, PushSubscriptionStore: store, Policies: active, Admin: pols, Log: log, Registry: reg, RotateKey: keys.Rotate, Events: bus,
		Console: withSignIn(web.Handler(), cfg, store, web, base, secret, log), Sessions: web, Passkeys: newPasskeys(store, base, secret),
		Ready: func(ctx context.Context) error {
			if err := store.Ping(ctx); err != nil {
				return fmt.Errorf("store unreachable: %v", err)
			}
			if active.Tier("") == nil && len(active.Tenants()) == 0 {
				return errors.New("no policy loaded: every check is denied")
			}
			return nil
		},
		// A refused policy file does not make rein unready: the last good
		// version keeps deciding. It is reported here and in metrics.
		ReadyDetail: func() map[string]any {
			if b := pols.Broken(); b != "" {
				m.policyBroken.Set(1)
				return map[string]any{"policy_refused": b, "policy": "the last good version is active"}
			}
			m.policyBroken.Set(0)
			return nil
		}}
	if err := store.Append(ctx, &rein.Entry{TS: time.Now().UTC(), Tenant: rein.AllTenants, Kind: rein.KindServerStarted,
		Actor: "rein", Subject: deployment, Data: map[string]any{"version": rein.Version, "listen": ln.Addr().String()}}); err != nil {
		ln.Close()
		return nil, fmt.Errorf("audit log: %w", err)
	}

	runCtx, stop := context.WithCancel(context.Background())
	s := &Server{tracing: tr, Addr: ln.Addr().String(), URL: url, BaseURL: base, Store: store, Policies: pols, sealer: sealer, shared: pg != nil, log: log, ln: ln, stop: stop, done: make(chan struct{}),
		http: &http.Server{Handler: api.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
			ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}}
	if src.File != "" || src.Dir != "" {
		go pols.Watch(runCtx, src, cfg.PolicyPoll)
	}
	s.http.RegisterOnShutdown(pipe.StopWaiting) // long-polls answer at once on shutdown
	s.http.RegisterOnShutdown(api.Stop)         // event streams end
	pols.Changed = func(doc *rein.PolicyDoc) {
		if rel != nil {
			rel.policyChanged()
		}
		tenant := doc.Tenant
		if tenant == "" {
			tenant = rein.AllTenants
		}
		bus.Publish(events.PolicyUpdated, tenant, map[string]any{"tenant": doc.Tenant, "version": doc.Version,
			"loaded_at": doc.LoadedAt, "loaded_by": doc.LoadedBy, "origin": doc.Origin})
		if n, err := pipe.Recheck(runCtx); err != nil {
			log.Error("re-checking pending approvals after a policy change failed", "err", err)
		} else if n > 0 {
			log.Info("pending approvals invalidated by the new policy", "count", n)
		}
	}
	go sweep(runCtx, pipe, log)
	if rel != nil {
		go rel.run(runCtx)
	}
	if pg == nil {
		go seal(runCtx, sealer, log)
	}
	if len(cfg.Webhooks) > 0 {
		(&webhook.Sender{Targets: cfg.Webhooks, Bus: bus, Log: m.deliveries(store), Logger: log, BaseURL: base, Route: nt.webhookRoute}).Run(runCtx)
	}
	nt.run(runCtx, bus)
	go func() {
		defer close(s.done)
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server stopped", "err", err)
		}
	}()
	log.Info("rein serving", "addr", s.Addr, "data", cfg.Data, "version", rein.Version, "deployment", deployment)
	ok = true
	return s, nil
}

// sweep expires approvals whose time ran out, every second, so that
// expiries are recorded (and waiters woken) even when nobody asks.
func sweep(ctx context.Context, pipe *pipeline.Pipeline, log *slog.Logger) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := pipe.Sweep(ctx); err != nil && ctx.Err() == nil {
				log.Error("expiring approvals failed", "err", err)
			}
		}
	}
}

// Shutdown stops taking requests, lets those in flight finish (up to the
// context's deadline) and closes the store.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stop()
	err := s.http.Shutdown(ctx)
	<-s.done
	s.tracing.shutdown(ctx) // the last spans are sent
	if s.shared {           // the store's integrator, if it runs here, places and seals what is left as it stops
		return errors.Join(err, s.Store.Close())
	}
	if _, serr := s.sealer.Seal(context.Background()); serr != nil { // the last checkpoint covers every entry
		s.log.Error("sealing the audit log on shutdown failed", "err", serr)
		err = errors.Join(err, serr)
	}
	return errors.Join(err, s.Store.Close())
}

// bootstrapAdmin creates the first admin key (tenant "*") when there is none:
// REIN_ADMIN_KEY if set, else a generated one written to <data>/admin.key
// (mode 0600) and printed once.
func bootstrapAdmin(ctx context.Context, store rein.KeyStore, data string, out io.Writer, asJSON bool) error {
	keys, err := store.Keys(ctx, rein.AllTenants)
	if err != nil {
		return fmt.Errorf("read keys: %w", err)
	}
	if len(keys) > 0 {
		return nil
	}
	secret := os.Getenv("REIN_ADMIN_KEY")
	generated := secret == ""
	if generated {
		secret, _ = rein.NewSecret()
	} else if len(secret) < 16 {
		return errors.New("REIN_ADMIN_KEY is shorter than 16 characters; use a long random value")
	}
	now := time.Now().UTC()
	k := &rein.Key{ID: rein.NewID("key"), Name: "admin", Tenant: rein.AllTenants, Roles: []rein.Role{rein.RoleAdmin},
		Groups: []string{}, CreatedAt: now, SecretHash: rein.HashSecret(secret)}
	if generated {
		path := filepath.Join(data, "admin.key")
		if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	entry := &rein.Entry{TS: now, Tenant: rein.AllTenants, Kind: rein.KindKeyCreated, Actor: "rein", Subject: k.ID,
		Data: map[string]any{"name": k.Name, "roles": k.Roles, "groups": k.Groups, "bootstrap": true}}
	if err := store.CreateKey(ctx, k, entry); err != nil {
		if rein.ErrorCode(err) == rein.ECodeConflict { // another replica, starting at the same time, made it
			if generated {
				os.Remove(filepath.Join(data, "admin.key"))
			}
			return nil
		}
		return fmt.Errorf("create admin key: %w", err)
	}
	switch {
	case asJSON:
		// One JSON object on stdout (never in the logs, which may be shipped
		// elsewhere): the generated secret, or where it came from.
		line := map[string]any{"msg": "admin key", "tenant": rein.AllTenants, "name": k.Name, "from": "REIN_ADMIN_KEY"}
		if generated {
			line["from"], line["key"], line["saved_to"] = "generated", secret, filepath.Join(data, "admin.key")
		}
		b, _ := json.Marshal(line)
		fmt.Fprintf(out, "%s\n", b)
	case generated:
		fmt.Fprintf(out, "Admin key (tenant *; shown once, also saved to %s):\n\n    %s\n\n", filepath.Join(data, "admin.key"), secret)
	default:
		fmt.Fprintln(out, "Admin key taken from REIN_ADMIN_KEY (tenant *).")
	}
	return nil
}

// sharedStore is the PostgreSQL store's part that serve wires: the
// integrator's sealing, and notifications between replicas.
type sharedStore interface {
	SetSeal(func(context.Context) error)
	Subscribe(func(payload string))
	Notify(ctx context.Context, payloads ...string) error
	pipeline.SharedLimits
	Leading() bool
}

// metaStore is a store that keeps settings (the deployment id).
type metaStore interface {
	rein.Store
	Meta(ctx context.Context, key string, init func() string) (string, error)
}

// openStore opens the store --db names: SQLite (the default, in the data
// directory, or sqlite:PATH) or PostgreSQL (postgres://…), shared by
// replicas. With PostgreSQL every replica must sign checkpoints with the
// same key, so the key must come from REIN_AUDIT_KEY or audit_key_file.
func openStore(ctx context.Context, cfg Config, log *slog.Logger) (metaStore, sharedStore, error) {
	switch {
	case strings.HasPrefix(cfg.DB, "postgres://") || strings.HasPrefix(cfg.DB, "postgresql://"):
		if os.Getenv("REIN_AUDIT_KEY") == "" && cfg.AuditKeyFile == "" {
			return nil, nil, errors.New("--db postgres: every replica must sign audit checkpoints with the same key; " +
				"create one with `rein audit keygen > audit.key` and give it to each replica as REIN_AUDIT_KEY or audit_key_file")
		}
		db, err := postgres.Open(ctx, cfg.DB, log)
		if err != nil {
			return nil, nil, err
		}
		return db, db, nil
	case cfg.DB == "" || strings.HasPrefix(cfg.DB, "sqlite:"):
		path := filepath.Join(cfg.Data, "rein.db")
		if cfg.DB != "" {
			path = strings.TrimPrefix(cfg.DB, "sqlite:")
		}
		db, err := sqlite.Open(ctx, path)
		return db, nil, err
	}
	return nil, nil, fmt.Errorf("--db %q: use sqlite:PATH (the default is SQLite in the data directory) or postgres://USER@HOST/DB", cfg.DB)
}

// defaultBaseURL is the address people reach rein at when base_url is not
// set: the listening address, except that plain HTTP on a loopback address
// is reached at localhost. A browser treats http://localhost as a secure
// context and WebAuthn accepts it as a relying party, where it refuses an IP
// address; so the console's passkeys, and the approvals that need one, work
// on a server started as the quick start starts it.
func defaultBaseURL(scheme string, addr net.Addr) string {
	if tcp, ok := addr.(*net.TCPAddr); ok && scheme == "http://" && tcp.IP.IsLoopback() {
		return scheme + net.JoinHostPort("localhost", strconv.Itoa(tcp.Port))
	}
	return scheme + addr.String()
}
