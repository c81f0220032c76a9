// Command rein is the rein control plane for AI agents: the server, and the
// command line for agents, approvers, operators and auditors.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/client"
)

// Exit codes (cli.md).
const (
	exitOK       = 0
	exitNegative = 1 // deny, failed test, failed verification
	exitUsage    = 2 // usage or connection error
)

// command is one subcommand.
type command struct {
	name    string
	args    string // usage after the name
	summary string
	example string
	run     func(ctx context.Context, e *env, args []string) int
	sub     []*command
}

// env is what commands write to and read from.
type env struct {
	stdout, stderr io.Writer
	stdin          io.Reader
	getenv         func(string) string
}

var commands []*command

func register(c *command) { commands = append(commands, c) }

func main() {
	stampVersion()
	e := &env{stdout: os.Stdout, stderr: os.Stderr, stdin: os.Stdin, getenv: os.Getenv}
	os.Exit(run(context.Background(), e, os.Args[1:]))
}

func run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(e.stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	return dispatch(ctx, e, commands, args, "rein")
}

func dispatch(ctx context.Context, e *env, cmds []*command, args []string, prefix string) int {
	for _, c := range cmds {
		if c.name != args[0] {
			continue
		}
		if len(c.sub) > 0 {
			if len(args) < 2 || args[1] == "-h" || args[1] == "--help" {
				fmt.Fprintf(e.stdout, "%s %s: %s\n\nCommands:\n", prefix, c.name, c.summary)
				w := nameWidth(c.sub)
				for _, s := range c.sub {
					fmt.Fprintf(e.stdout, "  %-*s %s\n", w, s.name, s.summary)
				}
				fmt.Fprintf(e.stdout, "\nRun '%s %s COMMAND --help' for details.\n", prefix, c.name)
				if len(args) < 2 {
					return exitUsage
				}
				return exitOK
			}
			return dispatch(ctx, e, c.sub, args[1:], prefix+" "+c.name)
		}
		return c.run(ctx, e, args[1:])
	}
	fmt.Fprintf(e.stderr, "%s: unknown command %q; run '%s --help'\n", prefix, args[0], prefix)
	return exitUsage
}

// nameWidth is the width of the command-name column: the longest name.
func nameWidth(cmds []*command) int {
	w := 0
	for _, c := range cmds {
		w = max(w, len(c.name))
	}
	return w
}

func usage(w io.Writer) {
	fmt.Fprint(w, `rein: human-in-the-loop and governance control plane for AI agents

Usage: rein COMMAND [flags]

Commands:
`)
	sorted := append([]*command(nil), commands...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	width := nameWidth(sorted)
	for _, c := range sorted {
		fmt.Fprintf(w, "  %-*s %s\n", width, c.name, c.summary)
	}
	fmt.Fprint(w, `
Client commands read REIN_SERVER (default http://127.0.0.1:8750) and REIN_KEY,
or take --server and --key. Exit codes: 0 ok, 1 negative answer (deny, failed
test), 2 usage or connection error.

Run 'rein COMMAND --help' for the flags and an example of each command.
`)
}

// flags builds a flag set whose --help prints the usage and the example.
func flags(e *env, full string, c *command) *flag.FlagSet {
	fs := flag.NewFlagSet(full, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stdout, "Usage: %s %s\n\n%s\n", full, c.args, c.summary)
		if hasFlags(fs) {
			fmt.Fprintln(e.stdout, "\nFlags:")
			fs.SetOutput(e.stdout)
			fs.PrintDefaults()
			fs.SetOutput(e.stderr)
		}
		if c.example != "" {
			fmt.Fprintf(e.stdout, "\nExample:\n%s\n", c.example)
		}
	}
	return fs
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// parse parses flags given before, between and after positional arguments.
// It returns the positional arguments, or an exit code when parsing ended
// the command (--help: 0, bad flags: 2).
func parse(fs *flag.FlagSet, args []string) ([]string, int, bool) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, exitOK, false
			}
			return nil, exitUsage, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, 0, true
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), 0, true
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// listFlag collects a repeatable flag; each value may also list several,
// separated by commas.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

// clientFlags adds --server and --key and returns a constructor.
func clientFlags(e *env, fs *flag.FlagSet) func() *client.Client {
	server := fs.String("server", "", "rein server address (default $REIN_SERVER or http://127.0.0.1:8750)")
	key := fs.String("key", "", "API key (default $REIN_KEY)")
	return func() *client.Client {
		s := *server
		if s == "" {
			s = e.getenv("REIN_SERVER")
		}
		if s == "" {
			s = "http://127.0.0.1:8750"
		}
		k := *key
		if k == "" {
			k = e.getenv("REIN_KEY")
		}
		return client.New(s, k)
	}
}

// fail prints an error from the server or the connection and returns its exit code.
func fail(e *env, prefix string, err error) int {
	var ce *client.Error
	if errors.As(err, &ce) {
		fmt.Fprintf(e.stderr, "%s: %s: %s\n", prefix, ce.Code, ce.Message)
		for _, p := range ce.Problems {
			fmt.Fprintf(e.stderr, "  %s\n", problemString(p.Line, p.Rule, p.Message))
		}
		if ce.Code == rein.ECodeForbidden || ce.Code == rein.ECodeNotFound || ce.Code == rein.ECodeConflict {
			return exitNegative
		}
		return exitUsage
	}
	fmt.Fprintf(e.stderr, "%s: %v\n", prefix, err)
	return exitUsage
}

func problemString(line int, rule, msg string) string {
	var b strings.Builder
	if line > 0 {
		fmt.Fprintf(&b, "line %d: ", line)
	}
	if rule != "" {
		fmt.Fprintf(&b, "rule %s: ", rule)
	}
	b.WriteString(msg)
	return b.String()
}

func commandNamed(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return &command{name: name}
}
