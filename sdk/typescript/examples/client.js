// Guarded payments with the plain client, against `rein serve --policy examples/policy.yaml`:
//   REIN_KEY=<an agent key> node examples/client.js
// Transfers up to 100 run, above 50000 are refused, and 500 waits for a
// person of group finance: `rein approve <id>` in another terminal.
import { DeniedError, ReinClient } from "@reinhq/rein";

const rein = new ReinClient(); // REIN_SERVER (default http://127.0.0.1:8750) and REIN_KEY
const session = `payments-${Date.now()}`;

async function transfer(to, amount) {
  try {
    const receipt = await rein.guard(
      "payments.transfer",
      { to, amount },
      async (args) => `sent ${args.amount} to ${args.to}`, // the real transfer goes here
      { session, timeoutMs: 10 * 60_000, onAsk: (res) => console.log(`waiting for approval: rein approve ${res.approval.id}`) },
    );
    console.log(receipt);
  } catch (err) {
    if (!(err instanceof DeniedError)) throw err;
    console.log(`not sent (${err.decision}): ${err.reason}`);
  }
}

await transfer("acct-7", 50);
await transfer("acct-7", 60000);
await transfer("acct-7", 500);
