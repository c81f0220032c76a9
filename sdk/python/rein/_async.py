"""The asyncio client: the same calls as Client, awaitable.

Each HTTP request runs in asyncio's default thread pool (asyncio.to_thread)
on a blocking urllib connection, so the event loop never blocks and the
package stays free of third-party dependencies. Waits for an approval or an
answer are long-polls of at most one minute each; cancelling the awaiting
task takes effect when the current long-poll returns, and the thread
finishes that one request in the background.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import Any, Callable, Mapping, Optional

from ._client import _WAIT_SLICE_S, Client, Unanswered, _outcome, _waits


class AsyncClient:
    """An asyncio client of one rein server with one key.

    ``server``, ``key`` and ``timeout`` are those of Client (REIN_SERVER and
    REIN_KEY by default)."""

    def __init__(self, server: Optional[str] = None, key: Optional[str] = None, timeout: float = 330.0):
        self.sync = Client(server, key, timeout)

    @property
    def server(self) -> str:
        return self.sync.server

    async def request(self, method: str, path: str, body: Any = None) -> Any:
        return await asyncio.to_thread(self.sync.request, method, path, body)

    # --- checks ------------------------------------------------------------

    async def check(self, tool: str, args: Optional[Mapping[str, Any]] = None, **fields: Any) -> dict:
        """POST /v1/check. ``fields``: session, agent, intent, labels, cost, request_id, wait_ms."""
        return await asyncio.to_thread(self.sync.check, tool, args, **fields)

    async def get_check(self, check_id: str) -> dict:
        return await asyncio.to_thread(self.sync.get_check, check_id)

    async def report(self, check_id: str, status: str, summary: str = "", cost: Optional[float] = None) -> None:
        await asyncio.to_thread(self.sync.report, check_id, status, summary, cost)

    async def decide(self, res: dict, timeout: Optional[float] = None) -> dict:
        """Turns a check answer into the args to run, waiting for the approval
        when it is ask (up to ``timeout`` seconds; None: until resolved).
        Raises Denied otherwise."""
        if _waits(res):
            return _outcome(res, await self.wait_decision(res["approval"]["id"], timeout=timeout))
        return _outcome(res)

    async def guarded(self, tool: str, args: Optional[Mapping[str, Any]], fn: Callable[[dict], Any],
                      timeout: Optional[float] = None, **fields: Any) -> Any:
        """Checks and calls ``fn(args_to_run)`` only if rein allows it; awaits
        the result when ``fn`` is a coroutine function."""
        run = await self.decide(await self.check(tool, args, **fields), timeout=timeout)
        result = fn(run)
        return await result if inspect.isawaitable(result) else result

    # --- approvals ---------------------------------------------------------

    async def approvals(self, **query: Any) -> list:
        return await asyncio.to_thread(self.sync.approvals, **query)

    async def approval(self, approval_id: str) -> dict:
        return await asyncio.to_thread(self.sync.approval, approval_id)

    async def vote(self, approval_id: str, vote: str, message: str = "",
                   args: Optional[Mapping[str, Any]] = None) -> dict:
        return await asyncio.to_thread(self.sync.vote, approval_id, vote, message, args)

    async def approve(self, approval_id: str, message: str = "") -> dict:
        return await self.vote(approval_id, "approve", message)

    async def reject(self, approval_id: str, message: str = "") -> dict:
        return await self.vote(approval_id, "reject", message)

    async def edit(self, approval_id: str, args: Mapping[str, Any], message: str = "") -> dict:
        return await self.vote(approval_id, "edit", message, args)

    async def cancel(self, approval_id: str) -> dict:
        return await asyncio.to_thread(self.sync.cancel, approval_id)

    async def wait(self, approval_id: str, timeout_ms: int = 30_000) -> dict:
        """One long-poll as the asking agent (see Client.wait)."""
        return await asyncio.to_thread(self.sync.wait, approval_id, timeout_ms)

    async def wait_decision(self, approval_id: str, timeout: Optional[float] = None) -> dict:
        """Waits until the approval is resolved (or ``timeout`` seconds pass)."""
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            left = _WAIT_SLICE_S if end is None else min(_WAIT_SLICE_S, end - time.monotonic())
            w = await self.wait(approval_id, int(max(0.0, left) * 1000))
            if w["decision"] != "ask" or (end is not None and time.monotonic() >= end):
                return w

    # --- questions ---------------------------------------------------------

    async def ask(self, text: str, **fields: Any) -> dict:
        return await asyncio.to_thread(self.sync.ask, text, **fields)

    async def questions(self, **query: Any) -> list:
        return await asyncio.to_thread(self.sync.questions, **query)

    async def question(self, question_id: str) -> dict:
        return await asyncio.to_thread(self.sync.question, question_id)

    async def answer(self, question_id: str, answer: Any) -> dict:
        return await asyncio.to_thread(self.sync.answer, question_id, answer)

    async def cancel_question(self, question_id: str) -> dict:
        return await asyncio.to_thread(self.sync.cancel_question, question_id)

    async def wait_question(self, question_id: str, timeout_ms: int = 30_000) -> dict:
        return await asyncio.to_thread(self.sync.wait_question, question_id, timeout_ms)

    async def wait_answer(self, question_id: str, timeout: Optional[float] = None) -> Any:
        """Waits for the answer and returns it; raises Unanswered if the
        question expires, is cancelled, or ``timeout`` seconds pass."""
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            left = _WAIT_SLICE_S if end is None else min(_WAIT_SLICE_S, end - time.monotonic())
            q = await self.wait_question(question_id, int(max(0.0, left) * 1000))
            if q["status"] == "answered":
                return q["answer"]
            if q["status"] != "pending" or (end is not None and time.monotonic() >= end):
                raise Unanswered(q)

    async def ask_and_wait(self, text: str, timeout: Optional[float] = None, **fields: Any) -> Any:
        return await self.wait_answer((await self.ask(text, **fields))["id"], timeout=timeout)
