"""The rein HTTP client, its errors and the guard decorator."""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Mapping, Optional

_MAX_WAIT_MS = 300_000
_RECEIVERS = ("self", "cls")
_WAIT_SLICE_S = 60.0


class ReinError(Exception):
    """A non-2xx answer from rein: ``status``, ``code`` (bad_request,
    unauthenticated, forbidden, not_found, conflict, gone, too_large,
    unavailable, ...) and ``message`` saying what is wrong and how to fix it.
    A policy deny is not a ReinError: see Denied."""

    def __init__(self, status: int, code: str, message: str, problems: Optional[list] = None):
        super().__init__(f"rein: {code} ({status}): {message}")
        self.status = status
        self.code = code
        self.message = message
        self.problems = problems or []


class Denied(Exception):
    """rein did not let the action run.

    ``decision`` is ``deny`` (policy, lock, or a rejected, expired or
    cancelled approval), ``throttle`` (see ``retry_after_ms``) or ``ask``
    (the approval was still pending when the wait ended; ``pending`` is
    True). ``reason`` says why, in words fit for a person or a model."""

    def __init__(self, decision: str, reason: str, rule: str = "", check_id: str = "",
                 approval_id: str = "", approval: Optional[dict] = None,
                 retry_after_ms: Optional[int] = None):
        super().__init__(f"rein: {decision}: {reason}")
        self.decision = decision
        self.reason = reason
        self.rule = rule
        self.check_id = check_id
        self.approval_id = approval_id
        self.approval = approval
        self.retry_after_ms = retry_after_ms

    @property
    def pending(self) -> bool:
        return self.decision == "ask"


class Unanswered(Exception):
    """A question that expired, was cancelled, or is still pending when the wait ended."""

    def __init__(self, question: dict):
        super().__init__(f"rein: question {question.get('id')} was not answered ({question.get('status')})")
        self.question = question


def _allows(decision: str) -> bool:
    return decision in ("allow", "modify")


class Client:
    """A client of one rein server with one key."""

    def __init__(self, server: Optional[str] = None, key: Optional[str] = None, timeout: float = 330.0):
        self.server = (server or os.environ.get("REIN_SERVER") or "http://127.0.0.1:8750").rstrip("/")
        self.key = key if key is not None else os.environ.get("REIN_KEY", "")
        self.timeout = timeout  # per HTTP request; long enough for a 5-minute long-poll

    # --- transport ---------------------------------------------------------

    def request(self, method: str, path: str, body: Any = None) -> Any:
        data = None
        headers = {"Accept": "application/json"}
        if self.key:
            headers["Authorization"] = "Bearer " + self.key
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.server + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                err = json.loads(raw)["error"]
                raise ReinError(e.code, err["code"], err.get("message", ""), err.get("problems")) from None
            except (ValueError, KeyError, TypeError):
                raise ReinError(e.code, f"http_{e.code}", raw.decode(errors="replace").strip()) from None
        except (urllib.error.URLError, OSError) as e:
            raise ConnectionError(f"rein at {self.server}: {getattr(e, 'reason', e)}") from e
        if not raw:
            return None
        return json.loads(raw)

    # --- checks ------------------------------------------------------------

    def check(self, tool: str, args: Optional[Mapping[str, Any]] = None, **fields: Any) -> dict:
        """POST /v1/check. ``fields``: session, agent, intent, labels, cost, request_id, wait_ms."""
        return self.request("POST", "/v1/check", {"tool": tool, "args": dict(args or {}), **fields})

    def get_check(self, check_id: str) -> dict:
        return self.request("GET", "/v1/checks/" + _q(check_id))

    def report(self, check_id: str, status: str, summary: str = "", cost: Optional[float] = None) -> None:
        """Reports what happened after an allowed action: status ``succeeded`` or ``failed``."""
        body: dict = {"status": status}
        if summary:
            body["summary"] = summary
        if cost is not None:
            body["cost"] = cost
        self.request("POST", f"/v1/checks/{_q(check_id)}/result", body)

    def decide(self, res: dict, timeout: Optional[float] = None) -> dict:
        """Turns a check answer into the args to run, waiting for the approval
        when it is ask (up to ``timeout`` seconds; None: until resolved).
        Raises Denied otherwise."""
        if _waits(res):
            return _outcome(res, self.wait_decision(res["approval"]["id"], timeout=timeout))
        return _outcome(res)

    def guarded(self, tool: str, args: Optional[Mapping[str, Any]], fn: Callable[[dict], Any],
                timeout: Optional[float] = None, **fields: Any) -> Any:
        """Checks and calls ``fn(args_to_run)`` only if rein allows it."""
        return fn(self.decide(self.check(tool, args, **fields), timeout=timeout))

    # --- approvals ---------------------------------------------------------

    def approvals(self, **query: Any) -> list:
        """Lists approvals, newest first: status, session, agent, limit, cursor."""
        return self.request("GET", "/v1/approvals" + _query(query))

    def approval(self, approval_id: str) -> dict:
        return self.request("GET", "/v1/approvals/" + _q(approval_id))

    def vote(self, approval_id: str, vote: str, message: str = "", args: Optional[Mapping[str, Any]] = None) -> dict:
        body: dict = {"vote": vote, "message": message}
        if args is not None:
            body["args"] = dict(args)
        return self.request("POST", f"/v1/approvals/{_q(approval_id)}/votes", body)

    def approve(self, approval_id: str, message: str = "") -> dict:
        return self.vote(approval_id, "approve", message)

    def reject(self, approval_id: str, message: str = "") -> dict:
        return self.vote(approval_id, "reject", message)

    def edit(self, approval_id: str, args: Mapping[str, Any], message: str = "") -> dict:
        return self.vote(approval_id, "edit", message, args)

    def cancel(self, approval_id: str) -> dict:
        return self.request("POST", f"/v1/approvals/{_q(approval_id)}/cancel")

    def wait(self, approval_id: str, timeout_ms: int = 30_000) -> dict:
        """One long-poll as the asking agent: decision allow (with args; the
        grant is used), deny with the reason, or ask while still pending."""
        t = max(0, min(_MAX_WAIT_MS, int(timeout_ms)))
        return self.request("GET", f"/v1/approvals/{_q(approval_id)}/wait?timeout_ms={t}")

    def wait_decision(self, approval_id: str, timeout: Optional[float] = None) -> dict:
        """Waits until the approval is resolved (or ``timeout`` seconds pass)."""
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            left = _WAIT_SLICE_S if end is None else min(_WAIT_SLICE_S, end - time.monotonic())
            w = self.wait(approval_id, int(max(0.0, left) * 1000))
            if w["decision"] != "ask" or (end is not None and time.monotonic() >= end):
                return w

    # --- questions ---------------------------------------------------------

    def ask(self, text: str, **fields: Any) -> dict:
        """Puts a question to people: session, choices, schema, ask, ttl_ms."""
        return self.request("POST", "/v1/questions", {"text": text, **fields})

    def questions(self, **query: Any) -> list:
        return self.request("GET", "/v1/questions" + _query(query))

    def question(self, question_id: str) -> dict:
        return self.request("GET", "/v1/questions/" + _q(question_id))

    def answer(self, question_id: str, answer: Any) -> dict:
        return self.request("POST", f"/v1/questions/{_q(question_id)}/answer", {"answer": answer})

    def cancel_question(self, question_id: str) -> dict:
        return self.request("POST", f"/v1/questions/{_q(question_id)}/cancel")

    def wait_question(self, question_id: str, timeout_ms: int = 30_000) -> dict:
        t = max(0, min(_MAX_WAIT_MS, int(timeout_ms)))
        return self.request("GET", f"/v1/questions/{_q(question_id)}/wait?timeout_ms={t}")

    def wait_answer(self, question_id: str, timeout: Optional[float] = None) -> Any:
        """Waits for the answer and returns it; raises Unanswered if the
        question expires, is cancelled, or ``timeout`` seconds pass."""
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            left = _WAIT_SLICE_S if end is None else min(_WAIT_SLICE_S, end - time.monotonic())
            q = self.wait_question(question_id, int(max(0.0, left) * 1000))
            if q["status"] == "answered":
                return q["answer"]
            if q["status"] != "pending" or (end is not None and time.monotonic() >= end):
                raise Unanswered(q)

    def ask_and_wait(self, text: str, timeout: Optional[float] = None, **fields: Any) -> Any:
        return self.wait_answer(self.ask(text, **fields)["id"], timeout=timeout)


_default: Optional[Client] = None


def default_client() -> Client:
    """The client of REIN_SERVER and REIN_KEY, made on first use."""
    global _default
    if _default is None:
        _default = Client()
    return _default


def guard(tool: Optional[str] = None, *, client: Optional[Client] = None, session: Optional[str] = None,
          agent: Optional[str] = None, intent: Optional[str] = None, timeout: Optional[float] = None,
          labels: Optional[Mapping[str, str]] = None,
          on_ask: Optional[Callable[[dict], Any]] = None) -> Callable:
    """Decorator: every call of the function is checked first as ``tool``
    (default: the function's name) with its arguments by name, and runs
    only when rein allows it, with the arguments rein says to run (the
    policy's modification, or an approver's edit). When rein asks, the call
    waits for the approval (up to ``timeout`` seconds; None: until it is
    resolved or expires), calling ``on_ask(check_response)`` first (e.g. to
    say where to approve). Otherwise it raises Denied. Works on ``async def``
    functions too (the HTTP calls then run in a thread), and methods (``self``
    or ``cls`` is passed through, not sent to rein)."""

    def decorate(fn: Callable) -> Callable:
        name = tool or fn.__name__
        sig = inspect.signature(fn)

        def fields() -> dict:
            f: dict = {}
            for k, v in (("session", session), ("agent", agent), ("intent", intent), ("labels", labels)):
                if v:
                    f[k] = dict(v) if k == "labels" else v
            return f

        def decide(args: tuple, kwargs: dict) -> tuple:
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            call = dict(bound.arguments)
            # A method's self (or cls) is not part of the action: it is passed through.
            receiver = tuple(call.pop(n) for n in _RECEIVERS if n in call and n == next(iter(sig.parameters)))
            for p in sig.parameters.values():  # **kwargs parameters flatten into the call
                if p.kind is inspect.Parameter.VAR_KEYWORD and p.name in call:
                    call.update(call.pop(p.name))
                if p.kind is inspect.Parameter.VAR_POSITIONAL:
                    raise TypeError(f"rein.guard: {fn.__name__} takes *{p.name}; guarded functions take named arguments")
            c = client or default_client()
            res = c.check(name, call, **fields())
            if on_ask and res["decision"] == "ask" and res.get("approval"):
                on_ask(res)
            return receiver, c.decide(res, timeout=timeout)

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                receiver, run = await asyncio.to_thread(decide, args, kwargs)
                return await fn(*receiver, **run)
            run_async.rein_tool = name  # type: ignore[attr-defined]
            return run_async

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            receiver, run_args = decide(args, kwargs)
            return fn(*receiver, **run_args)
        run.rein_tool = name  # type: ignore[attr-defined]
        return run

    return decorate


def _waits(res: dict) -> bool:
    """Whether a check answer asks for an approval to wait for."""
    return res["decision"] == "ask" and bool(res.get("approval"))


def _outcome(res: dict, waited: Optional[dict] = None) -> dict:
    """The args to run for check answer ``res`` (and, when it asked, the
    approval's last wait answer ``waited``), or Denied."""
    approval = res.get("approval")
    if _allows(res["decision"]):
        return _run_args(res, res)
    if waited is not None and approval:
        if waited["decision"] == "allow":
            return _run_args(waited, res)
        raise Denied(waited["decision"], waited.get("reason", ""), res.get("rule", ""), res.get("id", ""),
                     approval["id"], waited)
    decision = "deny" if res["decision"] == "ask" else res["decision"]
    raise Denied(decision, res.get("reason", ""), res.get("rule", ""), res.get("id", ""),
                 (approval or {}).get("id", ""), None, res.get("retry_after_ms"))


def _q(s: str) -> str:
    return urllib.parse.quote(s, safe="")


def _query(q: Mapping[str, Any]) -> str:
    q = {k: v for k, v in q.items() if v not in (None, "")}
    return "?" + urllib.parse.urlencode(q) if q else ""


def _run_args(answer: dict, check: dict) -> dict:
    """The arguments an allow says to run. rein always sends them; an allow
    without an arguments object is refused, never run with the caller's own."""
    args = answer.get("args")
    if not isinstance(args, dict):
        raise Denied("deny", "rein allowed the action but sent no arguments to run, so it does not run",
                     check.get("rule", ""), check.get("id", ""), (check.get("approval") or {}).get("id", ""), None)
    return args
