package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/client"
)

func init() {
	register(&command{name: "keys", summary: "create, list and revoke API keys (admin)", sub: []*command{
		{name: "create", summary: "create a key; its secret is printed once",
			args: "NAME --role ROLE [--role ROLE]... [--tenant T] [--group G]... [--output json]",
			example: `  rein keys create builder --role agent --tenant demo
  rein keys create alice --role approver --tenant demo --group oncall`,
			run: runKeysCreate},
		{name: "list", summary: "list keys of your tenant", args: "[--tenant T] [--output json]",
			example: "  rein keys list", run: runKeysList},
		{name: "revoke", summary: "revoke a key at once", args: "ID",
			example: "  rein keys revoke key_01JD3M5Q8W2X4Y6Z8A0B2C4D6E", run: runKeysRevoke},
	}})
}

func subNamed(parent, name string) *command {
	for _, c := range commandNamed(parent).sub {
		if c.name == name {
			return c
		}
	}
	return &command{name: name}
}

func runKeysCreate(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein keys create", subNamed("keys", "create"))
	newClient := clientFlags(e, fs)
	var roles, groups listFlag
	fs.Var(&roles, "role", "role: admin, approver, agent or auditor (repeatable)")
	fs.Var(&groups, "group", "approver group (repeatable)")
	tenant := fs.String("tenant", "", "tenant of the key (default: yours)")
	output := fs.String("output", "text", "text or json")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 || len(roles) == 0 {
		fmt.Fprintln(e.stderr, "rein keys create: give a NAME and at least one --role; see --help")
		return exitUsage
	}
	nk := client.NewKey{Name: pos[0], Tenant: *tenant, Groups: groups}
	for _, r := range roles {
		nk.Roles = append(nk.Roles, rein.Role(r))
	}
	k, err := newClient().CreateKey(ctx, nk)
	if err != nil {
		return fail(e, "rein keys create", err)
	}
	if *output == "json" {
		printJSON(e, k)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "Created key %s: %s in tenant %s, roles %s\nSecret (shown once):\n\n    %s\n\n", k.ID, k.Name, k.Tenant,
		joinRoles(k.Roles), k.Secret)
	return exitOK
}

func joinRoles(rs []rein.Role) string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return strings.Join(out, ",")
}

func runKeysList(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein keys list", subNamed("keys", "list"))
	newClient := clientFlags(e, fs)
	output := fs.String("output", "text", "text or json")
	if _, code, ok := parse(fs, args); !ok {
		return code
	}
	keys, err := newClient().Keys(ctx)
	if err != nil {
		return fail(e, "rein keys list", err)
	}
	if *output == "json" {
		printJSON(e, keys)
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tTENANT\tROLES\tGROUPS\tCREATED\tSTATE")
	for _, k := range keys {
		state := "active"
		if k.RevokedAt != nil {
			state = "revoked " + k.RevokedAt.Format("2006-01-02 15:04")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, k.Tenant, joinRoles(k.Roles), strings.Join(k.Groups, ","),
			k.CreatedAt.Format("2006-01-02 15:04"), state)
	}
	tw.Flush()
	return exitOK
}

func runKeysRevoke(ctx context.Context, e *env, args []string) int {
	fs := flags(e, "rein keys revoke", subNamed("keys", "revoke"))
	newClient := clientFlags(e, fs)
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "rein keys revoke: give the key ID (see rein keys list)")
		return exitUsage
	}
	if err := newClient().RevokeKey(ctx, pos[0]); err != nil {
		return fail(e, "rein keys revoke", err)
	}
	fmt.Fprintf(e.stdout, "Revoked %s\n", pos[0])
	return exitOK
}
