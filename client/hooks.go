package client

import "context"

// ClaudeCodeHook hands a Claude Code hook input to rein's hook endpoint
// (POST /v1/hooks/claude-code, which answers 200 with the hook's output
// to everything) and returns that output as it is.
func (c *Client) ClaudeCodeHook(ctx context.Context, input []byte) ([]byte, error) {
	var out []byte
	err := c.do(ctx, "POST", "/v1/hooks/claude-code", "application/json", input, &out)
	return out, err
}
