"""rein.AsyncClient against a real rein (see reinserver)."""

import asyncio
import os
import time
import unittest
import uuid

try:
    from . import reinserver
except ImportError:  # run as python3 -m unittest discover sdk/python/tests
    import reinserver

reinserver.ensure()

import rein  # noqa: E402


def new_session() -> str:
    return "py-async-" + uuid.uuid4().hex


class AsyncClientTest(unittest.IsolatedAsyncioTestCase):
    def setUp(self):
        self.agent = rein.AsyncClient()
        self.approver = rein.AsyncClient(key=os.environ["REIN_APPROVER_KEY"])
        self.session = new_session()

    async def pending_approval(self, timeout: float = 10.0) -> dict:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            found = await self.approver.approvals(status="pending", session=self.session)
            if len(found) == 1:
                return found[0]
            await asyncio.sleep(0.05)
        raise AssertionError(f"no pending approval in session {self.session} within {timeout} s")

    async def test_checks_run_concurrently(self):
        cities = [f"city-{i}" for i in range(8)]
        answers = await asyncio.gather(*(self.agent.check("get_weather", {"city": c}, session=self.session)
                                         for c in cities))
        self.assertEqual([a["decision"] for a in answers], ["allow"] * len(cities))
        self.assertEqual([a["args"]["city"] for a in answers], cities)
        self.assertEqual(len({a["id"] for a in answers}), len(cities), "each check is its own")

    async def test_guarded_runs_only_what_rein_allows(self):
        ran = []

        async def delete(args):
            ran.append(args)

        with self.assertRaises(rein.Denied) as cm:
            await self.agent.guarded("delete_file", {"path": "/etc/passwd"}, delete, session=self.session)
        self.assertEqual((cm.exception.decision, cm.exception.rule), ("deny", "no-deletes"))
        self.assertEqual(ran, [])
        got = await self.agent.guarded("write_note", {"text": "hi", "secret": "hunter2"}, lambda a: a,
                                       session=self.session)
        self.assertEqual(got, {"text": "hi"}, "a sync fn runs with rein's modified arguments")

    async def test_ask_waits_while_a_person_edits(self):
        async def person():
            a = await self.pending_approval()
            await self.approver.edit(a["id"], {"to": "acct-7", "amount": 50}, "50 is enough")

        ran = []

        async def pay(args):
            ran.append(args)
            return "paid"

        voted = asyncio.create_task(person())
        got = await self.agent.guarded("send_payment", {"to": "acct-7", "amount": 500}, pay,
                                       timeout=20, session=self.session)
        await voted
        self.assertEqual(got, "paid")
        self.assertEqual(ran, [{"to": "acct-7", "amount": 50}])

    async def test_rejection_raises(self):
        async def person():
            a = await self.pending_approval()
            await self.approver.reject(a["id"], "wrong account")

        voted = asyncio.create_task(person())
        res = await self.agent.check("send_payment", {"to": "acct-9", "amount": 900}, session=self.session)
        with self.assertRaises(rein.Denied) as cm:
            await self.agent.decide(res, timeout=20)
        await voted
        self.assertEqual(cm.exception.reason, "rejected by alice: wrong account")

    async def test_wait_that_ends_first_is_pending(self):
        res = await self.agent.check("send_payment", {"to": "acct-3", "amount": 3}, session=self.session)
        start = time.monotonic()
        with self.assertRaises(rein.Denied) as cm:
            await self.agent.decide(res, timeout=0.3)
        self.assertLess(time.monotonic() - start, 5)
        self.assertTrue(cm.exception.pending)
        self.assertEqual((await self.agent.cancel(res["approval"]["id"]))["status"], "cancelled")

    async def test_the_event_loop_keeps_running_during_a_wait(self):
        res = await self.agent.check("send_payment", {"to": "acct-4", "amount": 4}, session=self.session)
        ticks = 0

        async def tick():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        ticker = asyncio.create_task(tick())
        with self.assertRaises(rein.Denied):
            await self.agent.decide(res, timeout=0.5)
        ticker.cancel()
        self.assertGreater(ticks, 10, "a blocking wait would have stopped the loop")
        await self.agent.cancel(res["approval"]["id"])

    async def test_questions(self):
        async def person():
            end = time.monotonic() + 10
            while time.monotonic() < end:
                qs = await self.approver.questions(status="pending", session=self.session)
                if qs:
                    await self.approver.answer(qs[0]["id"], "eu-west")
                    return
                await asyncio.sleep(0.05)

        answered = asyncio.create_task(person())
        got = await self.agent.ask_and_wait("Which region?", session=self.session,
                                            choices=["eu-west", "us-east"], timeout=20)
        await answered
        self.assertEqual(got, "eu-west")
        q = await self.agent.ask("Proceed?", session=self.session)
        await self.agent.cancel_question(q["id"])
        with self.assertRaises(rein.Unanswered):
            await self.agent.wait_answer(q["id"], timeout=5)

    async def test_errors_are_those_of_the_sync_client(self):
        with self.assertRaises(rein.ReinError) as cm:
            await rein.AsyncClient(key="rein_not_a_key").check("get_weather", {"city": "x"})
        self.assertEqual((cm.exception.status, cm.exception.code), (401, "unauthenticated"))
        with self.assertRaises(ConnectionError):
            await rein.AsyncClient(server="http://127.0.0.1:9", key="x", timeout=5).check("get_weather")


if __name__ == "__main__":
    unittest.main()
