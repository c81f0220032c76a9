package gateway

import (
	"context"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/client"
)

// DefaultRequestTimeout bounds a request to rein. A check answers in
// milliseconds; a rein that takes this long is treated as down, and the
// call is refused before the MCP client's own timeout hides the cause.
const DefaultRequestTimeout = 10 * time.Second

func (g *Gateway) requestTimeout() time.Duration {
	if g.RequestTimeout > 0 {
		return g.RequestTimeout
	}
	return DefaultRequestTimeout
}

// bounded puts a deadline on every request to rein.
type bounded struct {
	Rein
	timeout time.Duration
}

func (b bounded) Check(ctx context.Context, req rein.CheckRequest) (*rein.CheckResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	return b.Rein.Check(ctx, req)
}

func (b bounded) Approval(ctx context.Context, id string) (*rein.Approval, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	return b.Rein.Approval(ctx, id)
}

func (b bounded) ClientVote(ctx context.Context, id, vote, message string) (*rein.Approval, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	return b.Rein.ClientVote(ctx, id, vote, message)
}

func (b bounded) Wait(ctx context.Context, id string, timeoutMS int64) (*client.WaitResult, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(timeoutMS)*time.Millisecond+b.timeout)
	defer cancel()
	return b.Rein.Wait(ctx, id, timeoutMS)
}

func (b bounded) Cancel(ctx context.Context, id string) (*rein.Approval, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	return b.Rein.Cancel(ctx, id)
}

func (b bounded) EndSession(ctx context.Context, id string) (*rein.Session, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	return b.Rein.EndSession(ctx, id)
}
