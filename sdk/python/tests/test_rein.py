"""The Python client against a real rein (see reinserver: go test ./e2e
-run TestSDKPython starts it, or the tests start one themselves)."""

import asyncio
import os
import threading
import time
import unittest
import uuid

try:
    from . import reinserver
except ImportError:  # run as python3 -m unittest discover sdk/python/tests
    import reinserver

reinserver.ensure()

import rein  # noqa: E402  (the source next to the tests, see reinserver)

agent = rein.Client()
approver = rein.Client(key=os.environ["REIN_APPROVER_KEY"])


def new_session() -> str:
    return "py-" + uuid.uuid4().hex


def pending_approval(session: str, timeout: float = 10.0) -> dict:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = approver.approvals(status="pending", session=session)
        if len(found) == 1:
            return found[0]
        time.sleep(0.05)
    raise AssertionError(f"no pending approval in session {session} within {timeout} s")


def vote_when_asked(session: str, vote: str, message: str = "", args=None) -> threading.Thread:
    """A person votes in the console while the agent waits."""
    def run():
        a = pending_approval(session)
        approver.vote(a["id"], vote, message, args)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


class Tools:
    """Guarded tools that count their runs: a refused call must leave them alone."""

    def __init__(self, session: str):
        self.ran = []

        @rein.guard(tool="get_weather", client=agent, session=session)
        def get_weather(city: str) -> str:
            self.ran.append(("get_weather", {"city": city}))
            return f"sunny in {city}"

        @rein.guard(client=agent, session=session)
        def delete_file(path: str) -> str:
            self.ran.append(("delete_file", {"path": path}))
            return f"deleted {path}"

        @rein.guard(client=agent, session=session, timeout=20)
        def send_payment(to: str, amount: int) -> str:
            self.ran.append(("send_payment", {"to": to, "amount": amount}))
            return f"paid {amount} to {to}"

        @rein.guard(client=agent, session=session)
        def write_note(text: str, **extra) -> str:
            self.ran.append(("write_note", {"text": text, **extra}))
            return "noted"

        @rein.guard(tool="send_payment", client=agent, session=session, timeout=0.3)
        def send_payment_impatient(to: str, amount: int) -> str:
            self.ran.append(("send_payment", {"to": to, "amount": amount}))
            return "paid"

        @rein.guard(tool="get_weather", client=agent, session=session)
        async def get_weather_async(city: str) -> str:
            self.ran.append(("get_weather", {"city": city}))
            return f"sunny in {city}"

        self.get_weather, self.delete_file, self.send_payment = get_weather, delete_file, send_payment
        self.write_note, self.send_payment_impatient, self.get_weather_async = write_note, send_payment_impatient, get_weather_async


class GuardTest(unittest.TestCase):
    def setUp(self):
        self.session = new_session()
        self.tools = Tools(self.session)

    def test_allowed_call_runs(self):
        self.assertEqual(self.tools.get_weather("Paris"), "sunny in Paris")
        self.assertEqual(self.tools.ran, [("get_weather", {"city": "Paris"})])

    def test_denied_call_never_runs_and_says_why(self):
        with self.assertRaises(rein.Denied) as cm:
            self.tools.delete_file(path="/etc/passwd")
        self.assertEqual(cm.exception.decision, "deny")
        self.assertEqual(cm.exception.reason, "deleting files is not allowed")
        self.assertEqual(cm.exception.rule, "no-deletes")
        self.assertTrue(cm.exception.check_id.startswith("chk_"))
        self.assertFalse(cm.exception.pending)
        self.assertEqual(self.tools.ran, [])

    def test_modified_call_runs_with_reins_arguments(self):
        self.tools.write_note("hi", secret="hunter2")
        self.assertEqual(self.tools.ran, [("write_note", {"text": "hi"})])

    def test_asked_call_waits_and_runs_when_approved(self):
        t = vote_when_asked(self.session, "approve")
        self.assertEqual(self.tools.send_payment("acct-7", 500), "paid 500 to acct-7")
        t.join()
        self.assertEqual(self.tools.ran, [("send_payment", {"to": "acct-7", "amount": 500})])

    def test_approvers_edit_is_what_runs(self):
        t = vote_when_asked(self.session, "edit", "50 is enough", {"to": "acct-7", "amount": 50})
        self.assertEqual(self.tools.send_payment(to="acct-7", amount=500), "paid 50 to acct-7")
        t.join()
        self.assertEqual(self.tools.ran, [("send_payment", {"to": "acct-7", "amount": 50})])

    def test_rejection_raises_with_the_approvers_message(self):
        t = vote_when_asked(self.session, "reject", "wrong account")
        with self.assertRaises(rein.Denied) as cm:
            self.tools.send_payment("acct-9", 900)
        t.join()
        self.assertEqual(cm.exception.decision, "deny")
        self.assertEqual(cm.exception.reason, "rejected by alice: wrong account")
        self.assertEqual(cm.exception.approval["status"], "rejected")
        self.assertEqual(self.tools.ran, [])

    def test_wait_that_ends_first_raises_pending(self):
        with self.assertRaises(rein.Denied) as cm:
            self.tools.send_payment_impatient("acct-3", 5)
        self.assertTrue(cm.exception.pending)
        self.assertEqual(cm.exception.decision, "ask")
        self.assertEqual(self.tools.ran, [])
        self.assertEqual(agent.cancel(cm.exception.approval_id)["status"], "cancelled")

    def test_throttle_raises_with_the_retry_time(self):
        @rein.guard(tool="send_email", client=agent, session=self.session)
        def send_email(to):
            self.tools.ran.append(to)
        send_email("a@example.com")
        with self.assertRaises(rein.Denied) as cm:
            send_email("b@example.com")
        self.assertEqual(cm.exception.decision, "throttle")
        self.assertGreater(cm.exception.retry_after_ms, 0)
        self.assertEqual(self.tools.ran, ["a@example.com"])

    def test_methods_are_guarded_without_self(self):
        class Account:
            def __init__(self):
                self.sent = []

            @rein.guard(tool="send_payment", client=agent, session=self.session, timeout=20)
            def pay(self, to: str, amount: int) -> str:
                self.sent.append((to, amount))
                return "paid"

        acct = Account()
        t = vote_when_asked(self.session, "edit", args={"to": "acct-5", "amount": 5})
        self.assertEqual(acct.pay("acct-5", 50), "paid")
        t.join()
        self.assertEqual(acct.sent, [("acct-5", 5)])
        a = approver.approvals(session=self.session)[0]
        self.assertEqual(a["args"], {"to": "acct-5", "amount": 50}, "rein saw the call's arguments, not self")

    def test_async_functions_are_guarded(self):
        self.assertEqual(asyncio.run(self.tools.get_weather_async("Oslo")), "sunny in Oslo")
        self.assertEqual(self.tools.ran, [("get_weather", {"city": "Oslo"})])

    def test_unreachable_rein_never_runs_the_call(self):
        @rein.guard(tool="get_weather", client=rein.Client(server="http://127.0.0.1:9", key="x", timeout=5))
        def get_weather(city):
            self.tools.ran.append(city)
        with self.assertRaises(ConnectionError):
            get_weather("Paris")
        self.assertEqual(self.tools.ran, [])

    def test_wrong_key_is_a_rein_error(self):
        @rein.guard(tool="get_weather", client=rein.Client(key="rein_not_a_key"))
        def get_weather(city):
            self.tools.ran.append(city)
        with self.assertRaises(rein.ReinError) as cm:
            get_weather("Paris")
        self.assertEqual((cm.exception.status, cm.exception.code), (401, "unauthenticated"))
        self.assertEqual(self.tools.ran, [])


class ClientTest(unittest.TestCase):
    def test_check_and_wait_by_hand(self):
        session = new_session()
        res = agent.check("send_payment", {"to": "acct-1", "amount": 1}, session=session, intent="pay the invoice")
        self.assertEqual(res["decision"], "ask")
        self.assertEqual(res["reason"], "payments need an approval")
        a = pending_approval(session)
        self.assertEqual(a["id"], res["approval"]["id"])
        self.assertEqual(a["intent"], "pay the invoice")
        self.assertEqual(agent.wait(a["id"], timeout_ms=0)["decision"], "ask")
        approver.approve(a["id"], "ok")
        w = agent.wait_decision(a["id"], timeout=10)
        self.assertEqual((w["decision"], w["args"]), ("allow", {"to": "acct-1", "amount": 1}))
        again = agent.wait(a["id"], timeout_ms=0)
        self.assertEqual(again["decision"], "deny", "a grant is used once")

    def test_bad_request_says_how_to_fix_it(self):
        with self.assertRaises(rein.ReinError) as cm:
            agent.check("get_weather", {"city": "x"}, wait_ms=-1)
        self.assertEqual((cm.exception.status, cm.exception.code), (400, "bad_request"))
        self.assertIn("wait_ms", cm.exception.message)

    def test_agent_cannot_vote(self):
        session = new_session()
        res = agent.check("send_payment", {"to": "acct-2", "amount": 2}, session=session)
        with self.assertRaises(rein.ReinError) as cm:
            agent.approve(res["approval"]["id"])
        self.assertEqual(cm.exception.status, 403)
        agent.cancel(res["approval"]["id"])

    def test_report_result(self):
        res = agent.check("get_weather", {"city": "Rome"})
        agent.report(res["id"], "succeeded", "it was sunny")
        denied = agent.check("delete_file", {"path": "x"})
        with self.assertRaises(rein.ReinError) as cm:
            agent.report(denied["id"], "succeeded")
        self.assertEqual(cm.exception.code, "conflict")


class QuestionTest(unittest.TestCase):
    def test_ask_and_wait_for_the_answer(self):
        session = new_session()

        def answer():
            end = time.monotonic() + 10
            while time.monotonic() < end:
                qs = approver.questions(status="pending", session=session)
                if qs:
                    approver.answer(qs[0]["id"], "eu-west")
                    return
                time.sleep(0.05)
        t = threading.Thread(target=answer, daemon=True)
        t.start()
        got = agent.ask_and_wait("Which region?", session=session, choices=["eu-west", "us-east"], timeout=20)
        t.join()
        self.assertEqual(got, "eu-west")

    def test_answer_outside_the_choices_is_refused(self):
        q = agent.ask("Which region?", session=new_session(), choices=["eu-west", "us-east"])
        with self.assertRaises(rein.ReinError) as cm:
            approver.answer(q["id"], "mars")
        self.assertEqual(cm.exception.code, "bad_request")
        agent.cancel_question(q["id"])

    def test_cancelled_question_is_unanswered(self):
        q = agent.ask("Proceed?", session=new_session())
        agent.cancel_question(q["id"])
        with self.assertRaises(rein.Unanswered) as cm:
            agent.wait_answer(q["id"], timeout=5)
        self.assertEqual(cm.exception.question["status"], "cancelled")

    def test_wait_that_ends_first_is_unanswered(self):
        q = agent.ask("Proceed?", session=new_session())
        with self.assertRaises(rein.Unanswered) as cm:
            agent.wait_answer(q["id"], timeout=0.3)
        self.assertEqual(cm.exception.question["status"], "pending")
        agent.cancel_question(q["id"])


if __name__ == "__main__":
    unittest.main()
