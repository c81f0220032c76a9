package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/gateway"
)

func init() {
	register(&command{name: "mcp", summary: "MCP gateway: put every tools/call of an MCP server through rein",
		args: "--name NAME [--listen ADDR] [--upstream-url URL | -- COMMAND ARGS...] [--wait 2m] [--server URL] [--key KEY]",
		example: `  # stdio both ways (Claude Desktop, Claude Code, Cursor launch this as the server):
  rein mcp --name fs -- npx -y @modelcontextprotocol/server-filesystem /srv/data
  # serve clients over streamable HTTP at http://127.0.0.1:9000/mcp, upstream over HTTP:
  rein mcp --name search --upstream-url https://host/mcp --listen 127.0.0.1:9000`,
		run: runMCP})
}

func runMCP(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein mcp", commandNamed("mcp"))
	newClient := clientFlags(e, fs)
	name := fs.String("name", "", "the upstream's name: rein sees its tools as NAME.TOOL (required)")
	listen := fs.String("listen", "", "serve MCP clients over streamable HTTP on this address (default: stdio)")
	upstreamURL := fs.String("upstream-url", "", "the upstream MCP server's streamable HTTP endpoint (instead of a command after --)")
	wait := fs.Duration("wait", 2*time.Minute, "how long an asked call waits for its approval before the client gets an error naming it")
	// Everything after "--" is the upstream's command line, flags included.
	var command []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, command = args[:i], args[i+1:]
	}
	rest, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		fmt.Fprintf(e.stderr, "rein mcp: unexpected %q; put the upstream's command after --\n", rest[0])
		return exitUsage
	}
	switch {
	case *name == "":
		fmt.Fprintln(e.stderr, "rein mcp: --name is required (rein sees the upstream's tools as NAME.TOOL)")
		return exitUsage
	case (*upstreamURL == "") == (len(command) == 0):
		fmt.Fprintln(e.stderr, "rein mcp: give the upstream either as a command after -- or with --upstream-url, not both")
		return exitUsage
	}
	c := newClient()
	if c.Key == "" {
		fmt.Fprintln(e.stderr, "rein mcp: no API key: set REIN_KEY to an agent key or pass --key")
		return exitUsage
	}
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	g := &gateway.Gateway{Rein: c, Name: *name, Wait: *wait, Log: log}
	upstream := func(ctx context.Context) (mcp.Connection, error) {
		if *upstreamURL != "" {
			return (&mcp.StreamableClientTransport{Endpoint: *upstreamURL}).Connect(ctx)
		}
		cmd := exec.Command(command[0], command[1:]...)
		cmd.Stderr = e.stderr
		return (&mcp.CommandTransport{Command: cmd}).Connect(ctx)
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *listen == "" {
		up, err := upstream(ctx)
		if err != nil {
			fmt.Fprintf(e.stderr, "rein mcp: cannot start the upstream: %v\n", err)
			return exitUsage
		}
		down, err := (&mcp.StdioTransport{}).Connect(ctx)
		if err != nil {
			fmt.Fprintf(e.stderr, "rein mcp: %v\n", err)
			return exitUsage
		}
		if err := g.Serve(ctx, down, up, gateway.NewSessionID()); err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(e.stderr, "rein mcp: %v\n", err)
			return exitUsage
		}
		return exitOK
	}

	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(e.stderr, "rein mcp: %v\n", err)
		return exitUsage
	}
	// MCP clients are not authenticated by the gateway: whoever reaches the
	// address uses its agent key. On loopback, browsers are kept out too.
	h := &gateway.Handler{Gateway: g, Upstream: upstream, Ctx: ctx, LoopbackOnly: gateway.IsLoopback(l.Addr().String())}
	if !h.LoopbackOnly {
		fmt.Fprintln(e.stderr, "rein mcp: warning: listening beyond loopback; every client that reaches this address acts with the gateway's key")
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.stderr, "rein mcp is listening on http://%s/mcp\n", l.Addr())
	go func() {
		<-ctx.Done()
		h.CloseAll()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(e.stderr, "rein mcp: %v\n", err)
		return exitUsage
	}
	return exitOK
}
