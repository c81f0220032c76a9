package client

import (
	"context"
	"net/url"

	"github.com/reinhq/rein"
)

// ClientVote relays the vote ("approve" or "reject") of an MCP client's
// user on an approval this key asked for; the approval's rule must name
// "client" among its approvers. rein's MCP gateway uses it.
func (c *Client) ClientVote(ctx context.Context, id, vote, message string) (*rein.Approval, error) {
	var out rein.Approval
	body := map[string]string{"vote": vote, "message": message}
	if err := c.doJSON(ctx, "POST", "/v1/approvals/"+url.PathEscape(id)+"/client-vote", body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
