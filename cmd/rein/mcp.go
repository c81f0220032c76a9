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
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/internal/httpbody"
)

func init() {
	register(&command{name: "mcp", summary: "MCP gateway: put every tools/call of an MCP server through rein",
		args: "--name NAME [--listen ADDR] [--upstream-url URL | --upstream COMMAND [--upstream-arg ARG]... | -- COMMAND ARGS...] [--wait 50s] [--progress-every 5s] [--rein-timeout 10s] [--body-timeout 10s] [--sep-2848] [--server URL] [--key KEY]",
		example: `  # stdio both ways (Claude Desktop, Claude Code, Cursor launch this as the server):
  rein mcp --name fs -- npx -y @modelcontextprotocol/server-filesystem /srv/data
  # the same without "--", for launchers that drop or reorder it (MCP Inspector configs):
  rein mcp --name fs --upstream npx --upstream-arg -y --upstream-arg @modelcontextprotocol/server-filesystem --upstream-arg /srv/data
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
	upstreamCmd := fs.String("upstream", "", "the upstream's command, run without a shell (instead of a command after --); its arguments go in --upstream-arg")
	var upstreamArgs repeated
	fs.Var(&upstreamArgs, "upstream-arg", "one argument of the --upstream command, taken as is (repeat for each, in order)")
	wait := fs.Duration("wait", gateway.DefaultWait, "how long an asked call waits for its approval before the client gets an error naming it (keep it under the client's request timeout: 60s in the official SDKs); 0s: do not wait, answer at once with the approval to decide")
	progressEvery := fs.Duration("progress-every", gateway.DefaultProgressEvery, "how often a call waiting for its approval reports progress to a client that asked for it (a progressToken)")
	reinTimeout := fs.Duration("rein-timeout", gateway.DefaultRequestTimeout, "how long the gateway waits for rein's answer to a check before it refuses the call, naming the cause")
	bodyTimeout := fs.Duration("body-timeout", httpbody.DefaultTimeout, "with --listen: how long a request body may take to arrive after its headers (held calls are not cut)")
	sep2848 := fs.Bool("sep-2848", false, "offer pending approvals to Tasks clients in the shape of the draft SEP-2848 (io.modelcontextprotocol/tool-approval): identical pending calls share a task, finished tasks say whether the tool ran")
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
		fmt.Fprintf(e.stderr, "rein mcp: unexpected %q; put the upstream's command after -- or give it with --upstream and --upstream-arg\n", rest[0])
		return exitUsage
	}
	if len(upstreamArgs) > 0 && *upstreamCmd == "" {
		fmt.Fprintln(e.stderr, "rein mcp: --upstream-arg needs --upstream COMMAND")
		return exitUsage
	}
	given := 0
	for _, g := range []bool{*upstreamURL != "", *upstreamCmd != "", len(command) > 0} {
		if g {
			given++
		}
	}
	switch {
	case *name == "":
		fmt.Fprintln(e.stderr, "rein mcp: --name is required (rein sees the upstream's tools as NAME.TOOL)")
		return exitUsage
	case given != 1:
		fmt.Fprintln(e.stderr, "rein mcp: give the upstream one way: a command after --, --upstream COMMAND (with --upstream-arg), or --upstream-url URL")
		return exitUsage
	case *wait < 0:
		fmt.Fprintln(e.stderr, "rein mcp: --wait must be 0s (do not wait) or a positive duration")
		return exitUsage
	case *progressEvery <= 0 || *reinTimeout <= 0 || *bodyTimeout <= 0:
		fmt.Fprintln(e.stderr, "rein mcp: --progress-every, --rein-timeout and --body-timeout must be positive durations")
		return exitUsage
	}
	if *upstreamCmd != "" {
		command = append([]string{*upstreamCmd}, upstreamArgs...)
	}
	c := newClient()
	if c.Key == "" {
		fmt.Fprintln(e.stderr, "rein mcp: no API key: set REIN_KEY to an agent key or pass --key")
		return exitUsage
	}
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	g := &gateway.Gateway{Rein: c, Name: *name, Wait: *wait, ProgressEvery: *progressEvery, RequestTimeout: *reinTimeout, SEP2848: *sep2848, Log: log}
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
	h := &gateway.Handler{Gateway: g, Upstream: upstream, Ctx: ctx, LoopbackOnly: gateway.IsLoopback(l.Addr().String()), BodyTimeout: *bodyTimeout}
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

// repeated is a flag that may be given many times; each value is kept as is.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, " ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }
