"""The rein server the tests talk to.

``go test ./e2e -run TestSDKPython`` starts one and passes REIN_SERVER,
REIN_KEY (an agent of tenant acme) and REIN_APPROVER_KEY (a person). Run on
their own (``python3 -m unittest discover sdk/python/tests``), the tests
start rein themselves: the binary REIN_BIN, else ``rein`` built from this
checkout with ``go build``, serving sdk/testdata/policy.yaml from a
temporary directory, and stop it when they end.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
_SDK = os.path.dirname(_HERE)  # sdk/python
_ROOT = os.path.dirname(os.path.dirname(_SDK))  # the repository

# The package under test is the source next to these tests.
if _SDK not in sys.path:
    sys.path.insert(0, _SDK)

_VARS = ("REIN_SERVER", "REIN_KEY", "REIN_APPROVER_KEY")


def ensure() -> None:
    """Sets REIN_SERVER, REIN_KEY and REIN_APPROVER_KEY, starting rein if none is given."""
    given = [v for v in _VARS if os.environ.get(v)]
    if len(given) == len(_VARS):
        return
    if given:
        raise RuntimeError(f"set all of {', '.join(_VARS)} or none (then the tests start rein themselves)")
    _start()


def _binary(tmp: str) -> str:
    if os.environ.get("REIN_BIN"):
        return os.environ["REIN_BIN"]
    if not shutil.which("go"):
        raise RuntimeError("the tests start rein: set REIN_BIN to a rein binary, or install Go to build one")
    out = os.path.join(tmp, "rein")
    subprocess.run(["go", "build", "-o", out, "./cmd/rein"], cwd=_ROOT, check=True)
    return out


def _start() -> None:
    tmp = tempfile.mkdtemp(prefix="rein-py-")
    atexit.register(shutil.rmtree, tmp, True)
    binary = _binary(tmp)
    data = os.path.join(tmp, "data")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REIN_")}
    proc = subprocess.Popen(
        [binary, "serve", "--data", data, "--listen", "127.0.0.1:0",
         "--policy", os.path.join(_ROOT, "sdk", "testdata", "policy.yaml")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def stop() -> None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
    atexit.register(stop)

    found: list = []

    def read() -> None:  # keeps draining stdout so rein never blocks on it
        for line in proc.stdout:
            if line.startswith("rein is listening on ") and not found:
                found.append(line.split()[-1])
    threading.Thread(target=read, daemon=True).start()
    end = time.monotonic() + 30
    while not found:
        if proc.poll() is not None or time.monotonic() > end:
            raise RuntimeError(f"rein serve did not start (exit {proc.poll()})")
        time.sleep(0.05)
    server = found[0]
    admin = open(os.path.join(data, "admin.key")).read().strip()

    def key(name: str, role: str) -> str:
        out = subprocess.run(
            [binary, "keys", "create", name, "--role", role, "--tenant", "acme", "--output", "json"],
            env={**env, "REIN_SERVER": server, "REIN_KEY": admin}, check=True, capture_output=True, text=True)
        return json.loads(out.stdout)["key"]

    os.environ.update(REIN_SERVER=server, REIN_KEY=key("builder", "agent"),
                      REIN_APPROVER_KEY=key("alice", "approver"))
