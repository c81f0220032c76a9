// Package client is the Go SDK for rein: it asks rein before an agent acts
// and waits for people when rein says ask. It uses only the standard library
// and the rein domain types, so agents import it without the server.
//
// The usual entry point is Guard, which checks an action and runs it only
// when rein allows it (with the arguments rein says to run: the policy's
// modification or an approver's edit), waiting for the approval when rein
// asks:
//
//	c := client.New("http://127.0.0.1:8750", os.Getenv("REIN_KEY"))
//	err := c.Guard(ctx, "shell.exec", map[string]any{"command": "rm -rf ./build"},
//		func(ctx context.Context, args json.RawMessage) error {
//			var a struct{ Command string }
//			json.Unmarshal(args, &a)
//			return run(ctx, a.Command)
//		})
//	var denied *client.DeniedError
//	if errors.As(err, &denied) {
//		// tell the model why: denied.Reason
//	}
//
// Check, Wait and WaitDecision are the steps Guard is made of, for agents
// that drive the loop themselves. Approvals, Vote and Cancel serve approvers
// and the asking agent; Ask, WaitAnswer and Answer put questions to people.
// Every non-2xx answer is an *Error carrying rein's error code and message;
// a decision that stops an action is a *DeniedError.
package client
