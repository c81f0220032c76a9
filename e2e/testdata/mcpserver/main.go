// Command mcpserver is an MCP server on the official Go SDK, serving
// protocol 2026-07-28 (and older ones) over stdio, used as the upstream in
// rein's gateway tests. Its tools record what ran in the file named by
// its first argument, so a test can tell whether a call reached it.
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type noteArgs struct {
	Text string `json:"text"`
}

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: mcpserver RECORD-FILE")
	}
	record := os.Args[1]
	s := mcp.NewServer(&mcp.Implementation{Name: "notes-go", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "write_note", Description: "Record a note"},
		func(ctx context.Context, req *mcp.CallToolRequest, a noteArgs) (*mcp.CallToolResult, any, error) {
			f, err := os.OpenFile(record, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return nil, nil, err
			}
			defer f.Close()
			fmt.Fprintln(f, a.Text)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "noted: " + a.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo text"},
		func(ctx context.Context, req *mcp.CallToolRequest, a noteArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + a.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "stamp", Description: "Record a stamp (no arguments)"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			f, err := os.OpenFile(record, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return nil, nil, err
			}
			defer f.Close()
			fmt.Fprintln(f, "stamp")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "stamped"}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
