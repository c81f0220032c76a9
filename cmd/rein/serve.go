package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/reinhq/rein/internal/httpbody"
	"github.com/reinhq/rein/serve"
)

func init() {
	register(&command{name: "serve", summary: "run the rein server",
		args: "[--data DIR] [--listen ADDR] [--policy FILE | --policy-dir DIR] [--db URL] [--tls-cert FILE --tls-key FILE] [--config FILE] [...]",
		example: `  # The quick start: embedded SQLite in ./rein-data, the sample policy, an admin key printed once.
  rein serve --policy examples/policy.yaml

  # One policy per tenant: DIR/global.yaml and DIR/tenants/<tenant>.yaml.
  rein serve --data /var/lib/rein --listen 0.0.0.0:8750 --policy-dir /etc/rein/policy

  # HTTPS, settings from the environment (every flag has a REIN_* variable):
  REIN_TLS_CERT=/etc/rein/tls.crt REIN_TLS_KEY=/etc/rein/tls.key REIN_LISTEN=0.0.0.0:8443 rein serve`,
		run: runServe})
}

func runServe(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein serve", commandNamed("serve"))
	config := fs.String("config", "", "YAML config file with the same settings (env REIN_CONFIG); environment variables win over it, flags over both")
	for _, st := range serve.Settings {
		fs.String(st.Flag, "", fmt.Sprintf("%s (env %s, config %s)", st.Usage, st.Env, st.Key))
	}
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(e.stderr, "rein serve: unexpected argument %q\n", pos[0])
		return exitUsage
	}
	cfg, err := serveConfig(fs, *config)
	if err != nil {
		fmt.Fprintf(e.stderr, "rein serve: %v\n", err)
		return exitUsage
	}
	var handler slog.Handler = slog.NewTextHandler(e.stderr, nil)
	if cfg.LogFormat == "json" {
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
	if cfg.Pprof != "" {
		if err := servePprof(ctx, cfg.Pprof, log); err != nil {
			fmt.Fprintf(e.stderr, "rein serve: --pprof: %v\n", err)
			srv.Shutdown(context.Background())
			return exitUsage
		}
	}
	if cfg.LogFormat == "json" {
		log.Info("rein is listening", "url", srv.URL, "base_url", srv.BaseURL)
	} else {
		fmt.Fprintf(e.stdout, "rein is listening on %s\n", srv.URL)
		if srv.BaseURL != srv.URL {
			fmt.Fprintf(e.stdout, "the console, and the links in approvals, are at %s/\n", srv.BaseURL)
		}
	}
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

// serveConfig reads the settings: the config file (--config or REIN_CONFIG),
// then REIN_* environment variables, then the flags given.
func serveConfig(fs *flag.FlagSet, file string) (serve.Config, error) {
	var cfg serve.Config
	if file == "" {
		file = os.Getenv("REIN_CONFIG")
	}
	if file != "" {
		var err error
		if cfg, err = serve.LoadConfig(file); err != nil {
			return cfg, err
		}
	}
	byFlag := map[string]serve.Setting{}
	for _, st := range serve.Settings {
		byFlag[st.Flag] = st
		if v, ok := os.LookupEnv(st.Env); ok && v != "" {
			if err := cfg.Set(st.Key, v); err != nil {
				return cfg, fmt.Errorf("%s: %v", st.Env, err)
			}
		}
	}
	var err error
	fs.Visit(func(f *flag.Flag) {
		if st, ok := byFlag[f.Name]; ok && err == nil {
			if e := cfg.Set(st.Key, f.Value.String()); e != nil {
				err = fmt.Errorf("--%s: %v", f.Name, e)
			}
		}
	})
	return cfg, err
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
	srv := &http.Server{Handler: httpbody.Handler(mux, 0), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	log.Info("profiler listening", "addr", ln.Addr().String())
	return nil
}
