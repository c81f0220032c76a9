// Command payments makes guarded payments with rein's Go client, against
// `rein serve --policy examples/policy.yaml`:
//
//	REIN_KEY=<an agent key> go run ./examples/payments
//
// Transfers up to 100 run, above 50000 are refused, and 500 waits for a
// person of group finance: `rein approve <id>` in another terminal.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/client"
)

func main() {
	server := os.Getenv("REIN_SERVER")
	if server == "" {
		server = "http://127.0.0.1:8750"
	}
	c := client.New(server, os.Getenv("REIN_KEY"))
	session := fmt.Sprintf("payments-%d", time.Now().UnixNano())

	for _, amount := range []int{50, 60000, 500} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		err := transfer(ctx, c, session, "acct-7", amount)
		cancel()
		var denied *client.DeniedError
		switch {
		case errors.As(err, &denied):
			fmt.Printf("not sent (%s): %s\n", denied.Decision, denied.Reason)
		case err != nil:
			log.Fatal(err) // rein unreachable or a bad request: nothing was sent
		}
	}
}

func transfer(ctx context.Context, c *client.Client, session, to string, amount int) error {
	args, _ := json.Marshal(map[string]any{"to": to, "amount": amount})
	res, err := c.Check(ctx, rein.CheckRequest{Tool: "payments.transfer", Args: args, Session: session})
	if err != nil {
		return err
	}
	if res.Decision == rein.Ask && res.Approval != nil {
		fmt.Println("waiting for approval: rein approve", res.Approval.ID)
	}
	run, err := c.Decide(ctx, res) // the arguments to run, after waiting for a person if rein asks
	if err != nil {
		return err
	}
	var p struct {
		To     string
		Amount int
	}
	if err := json.Unmarshal(run, &p); err != nil {
		return err
	}
	fmt.Printf("sent %d to %s\n", p.Amount, p.To) // the real transfer goes here
	return nil
}
