package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/reinhq/rein/serve"
)

func init() {
	register(&command{name: "serve", summary: "run the rein server",
		args: "[--data DIR] [--listen ADDR] [--policy FILE | --policy-dir DIR] [--db URL] [--config FILE] [--pprof ADDR]",
		example: `  # The quick start: embedded SQLite in ./rein-data, the sample policy, an admin key printed once.
  rein serve --policy examples/policy.yaml

  # One policy per tenant: DIR/global.yaml and DIR/tenants/<tenant>.yaml.
  rein serve --data /var/lib/rein --listen 0.0.0.0:8750 --policy-dir /etc/rein/policy`,
		run: runServe})
}

func runServe(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein serve", commandNamed("serve"))
	var cfg serve.Config
	data := fs.String("data", "", "data directory: SQLite database, admin key (default ./rein-data)")
	listen := fs.String("listen", "", "address to listen on (default 127.0.0.1:8750)")
	pol := fs.String("policy", "", "policy file, reloaded when it changes")
	polDir := fs.String("policy-dir", "", "policy directory: global.yaml and tenants/<tenant>.yaml")
	db := fs.String("db", "", "database URL (default: SQLite in the data directory)")
	config := fs.String("config", "", "YAML config file with the same settings (flags win)")
	baseURL := fs.String("base-url", "", "external address for links in approvals (default http://<listen>)")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	pprofAddr := fs.String("pprof", "", "serve Go's profiler (/debug/pprof/) on this separate address, e.g. 127.0.0.1:6060; keep it private")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(e.stderr, "rein serve: unexpected argument %q\n", pos[0])
		return exitUsage
	}
	if *config != "" {
		var err error
		if cfg, err = serve.LoadConfig(*config); err != nil {
			fmt.Fprintf(e.stderr, "rein serve: %v\n", err)
			return exitUsage
		}
	}
	for _, o := range []struct {
		flag string
		dst  *string
	}{{*data, &cfg.Data}, {*listen, &cfg.Listen}, {*pol, &cfg.Policy}, {*polDir, &cfg.PolicyDir}, {*db, &cfg.DB}, {*baseURL, &cfg.BaseURL}} {
		if o.flag != "" {
			*o.dst = o.flag
		}
	}
	var handler slog.Handler = slog.NewTextHandler(e.stderr, nil)
	if *logFormat == "json" {
		handler = slog.NewJSONHandler(e.stderr, nil)
	}
	log := slog.New(handler)

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := serve.Start(ctx, cfg, log, e.stdout)
	if err != nil {
		fmt.Fprintf(e.stderr, "rein serve: %v\n", err)
		return exitUsage
	}
	if *pprofAddr != "" {
		if err := servePprof(ctx, *pprofAddr, log); err != nil {
			fmt.Fprintf(e.stderr, "rein serve: --pprof: %v\n", err)
			srv.Shutdown(context.Background())
			return exitUsage
		}
	}
	fmt.Fprintf(e.stdout, "rein is listening on http://%s\n", srv.Addr)
	<-ctx.Done()
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Error("shutdown", "err", err)
		return exitUsage
	}
	return exitOK
}

// servePprof serves the profiler on its own listener (never on the API's
// address: profiles and traces are not for agents), until ctx ends.
func servePprof(ctx context.Context, addr string, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	log.Info("profiler listening", "addr", ln.Addr().String())
	return nil
}
