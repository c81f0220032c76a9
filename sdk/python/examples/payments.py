"""Guarded payments against `rein serve --policy examples/policy.yaml`:

    REIN_KEY=<an agent key> python3 sdk/python/examples/payments.py

Transfers up to 100 run, above 50000 are refused, and 500 waits for a
person of group finance: `rein approve <id>` in another terminal.
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # or copy rein/ into your project

import rein  # noqa: E402

session = f"payments-{time.time_ns()}"


def tell(res: dict) -> None:
    print(f"waiting for approval: rein approve {res['approval']['id']}", flush=True)


@rein.guard(tool="payments.transfer", session=session, timeout=600, on_ask=tell)
def transfer(to: str, amount: int) -> str:
    return f"sent {amount} to {to}"  # the real transfer goes here


for amount in (50, 60000, 500):
    try:
        print(transfer("acct-7", amount), flush=True)
    except rein.Denied as e:
        print(f"not sent ({e.decision}): {e.reason}", flush=True)
