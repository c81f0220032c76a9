package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/reinhq/rein/serve"
)

func init() {
	register(&command{name: "serve", summary: "run the rein server",
		args: "[--data DIR] [--listen ADDR] [--policy FILE | --policy-dir DIR] [--db URL] [--config FILE]",
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
