"""A class on JupyterHub: a real hub, its proxy and two students' JupyterLab servers.

``ClassroomHub`` runs ``jupyterhub`` with ``configurable-http-proxy`` (from ``node_modules``),
the dummy authenticator and one local single-user server per student, configured with nothing
about tfcoach: the package installed in the environment is all the single-user servers get. Each
student logs in on the hub's form, lands in their JupyterLab under ``/user/<name>/lab``, opens
their notebook from the file browser, runs it and reads the retrace in the TF Coach panel. Then
the reports stay with their owner: a student's API token (or logged-in browser) reads their own
kernel's reports and gets a 403 from the other student's server; the same holds for their study
progress (each server's own store, in the student's data folder), and the retrace each one ran
into is due in their own Memory Deck only.

One hub and one browser for the module; both students work at the same time (each kernel imports
TensorFlow). The tests run in file order; the second one runs the notebooks if the first did not.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from jupyterlab_tfcoach.course.terms import terms_for_section
from tests.conftest import ConsoleLog
from tests.frontend.notebook_page import new_page, wait_until_notebook_ready
from tests.harness import CONFIGURABLE_HTTP_PROXY, ClassroomHub

pytestmark = [pytest.mark.browser, pytest.mark.hub]

STUDENTS = ("alice", "bob")
NOTEBOOK_FILE = "retrace.ipynb"
LAB_TIMEOUT_MS = 120_000  # log-in, spawn and JupyterLab's first load, both students at once
REPORT_TIMEOUT_MS = 120_000  # two kernels importing TensorFlow on a small machine

LAB_READY_JS = "() => window.jupyterapp?.commands.hasCommand('tfcoach:open-panel')"
RUN_ALL_JS = """(path) => {
  const app = window.jupyterapp;
  const nbPanel = [...app.shell.widgets('main')].find(w => w.context && w.context.path === path);
  app.shell.activateById(nbPanel.id);
  // Not awaited: both students' notebooks run at the same time.
  window.__tfcoachRunAll = app.commands.execute('notebook:run-all-cells');
}"""


def retrace_notebook(student: str) -> nbformat.NotebookNode:
    """The student's notebook: a tf.function called with two Python ints retraces once."""
    return new_notebook(
        cells=[
            new_code_cell("import tensorflow as tf"),
            new_code_cell(
                "@tf.function\n"
                f"def {student}_step(x, factor):\n"
                "    return x * factor\n"
                "\n"
                "for factor in (2, 3):\n"
                f"    {student}_step(tf.constant([1.0, 2.0]), factor)\n"
            ),
        ],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )


@dataclass
class Student:
    """One student's browser context and page, logged in on the hub."""

    name: str
    hub: ClassroomHub
    context: Any
    page: Any
    log: ConsoleLog
    ran: bool = False
    tried: bool = False
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def function(self) -> str:
        return f"{self.name}_step"

    def server_url(self, path: str = "") -> str:
        return f"{self.hub.url}/user/{self.name}/{path}"

    def submit_login(self) -> None:
        """Fill the hub's login form (any password: the dummy authenticator) and send it."""
        page = self.page
        page.goto(f"{self.hub.url}/hub/login", wait_until="domcontentloaded")
        page.locator("input[name=username]").fill(self.name)
        page.locator("input[name=password]").fill("any password will do")
        page.locator("form [type=submit]").click()

    def wait_for_lab(self) -> None:
        """The hub spawns the server and forwards to its JupyterLab under /user/<name>/."""
        self.page.wait_for_url(f"{self.server_url('lab')}**", timeout=LAB_TIMEOUT_MS)
        self.page.wait_for_function(LAB_READY_JS, timeout=LAB_TIMEOUT_MS)

    def open_notebook_from_file_browser(self) -> None:
        item = self.page.locator(
            f'.jp-DirListing-item[data-file-type="notebook"]:has-text("{NOTEBOOK_FILE}")'
        )
        item.first.dblclick(timeout=LAB_TIMEOUT_MS)
        wait_until_notebook_ready(self.page, NOTEBOOK_FILE, timeout=LAB_TIMEOUT_MS)
        self.page.evaluate("() => window.jupyterapp.commands.execute('tfcoach:open-panel')")
        self.page.locator("#tfcoach-panel").wait_for(state="visible", timeout=10_000)

    def start_run_all(self) -> None:
        self.page.evaluate(RUN_ALL_JS, NOTEBOOK_FILE)

    def entry(self) -> Any:
        """The panel entry naming this student's function."""
        return self.page.locator("#tfcoach-panel .jp-tfcoach-entry").filter(has_text=self.function)


@dataclass
class Classroom:
    hub: ClassroomHub
    students: list[Student]

    def run_notebooks(self) -> None:
        """Both students run their notebook at once; wait until each panel has the entry."""
        waiting = [s for s in self.students if not s.ran]
        if any(s.tried for s in waiting):
            pytest.fail("a student's panel got no entry for their notebook (see the first test)")
        start = time.monotonic()
        for student in waiting:
            student.tried = True
            student.start_run_all()
        for student in waiting:
            student.entry().wait_for(state="visible", timeout=REPORT_TIMEOUT_MS)
            student.seconds["run to panel entry"] = time.monotonic() - start
            student.ran = True


@pytest.fixture(scope="module")
def classroom(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Classroom]:
    if not CONFIGURABLE_HTTP_PROXY.exists():
        pytest.fail(f"{CONFIGURABLE_HTTP_PROXY} is missing: `jlpm install` installs it")
    hub = ClassroomHub(tmp_path_factory.mktemp("hub"), users=STUDENTS)
    students: list[Student] = []
    try:
        for name in STUDENTS:
            nbformat.write(retrace_notebook(name), hub.home(name) / NOTEBOOK_FILE)
        start = time.monotonic()
        hub.wait_until_up()
        print(f"hub up in {time.monotonic() - start:.1f} s")
        for name in STUDENTS:
            context, page, log = new_page(browser)
            students.append(Student(name, hub, context, page, log))
        start = time.monotonic()
        for student in students:
            student.submit_login()
        for student in students:
            student.wait_for_lab()
            student.seconds["log-in to JupyterLab"] = time.monotonic() - start
        for student in students:
            student.open_notebook_from_file_browser()
        yield Classroom(hub, students)
    finally:
        for student in students:
            student.context.close()
        killed = hub.stop()
        print(f"hub, proxy, servers and kernels stopped in {hub.stop_seconds:.1f} s")
        # The hub stops the proxy and the servers it spawned; anything it left was killed.
        if killed:
            log = hub.log_path.read_text().splitlines()[-40:]
            pytest.fail("the hub left processes running: " + "\n".join([*killed, "hub log:", *log]))


def test_each_student_sees_their_retrace_in_the_panel(classroom: Classroom) -> None:
    classroom.run_notebooks()
    for student in classroom.students:
        page = student.page
        assert page.url.startswith(student.server_url("lab"))
        entry = student.entry()
        badges = entry.locator(".jp-tfcoach-badges").inner_text()
        assert "2 traces" in badges and "1 retrace" in badges, badges
        reason = entry.locator(".jp-tfcoach-reason-python_value")
        assert reason.locator("code").first.inner_text() == "factor"
        assert "2 \u2192 3" in reason.inner_text()
        # Only their own work is in their panel.
        panel = page.locator("#tfcoach-panel").inner_text()
        for other in classroom.students:
            if other is not student:
                assert other.function not in panel
        assert not student.log.errors("tfcoach"), student.log.errors("tfcoach")
        print(f"{student.name}: " + ", ".join(f"{k} {v:.1f} s" for k, v in student.seconds.items()))


def _kernel_id(hub: ClassroomHub, student: str, token: str) -> str:
    status, body = hub.request(f"user/{student}/api/kernels", token)
    assert status == 200, (status, body)
    kernels = json.loads(body)
    assert len(kernels) == 1, kernels
    return str(kernels[0]["id"])


def _functions(body: str) -> list[str]:
    reports = json.loads(body)["reports"]
    return [trace["function"] for report in reports for trace in report["traces"]]


def test_a_students_token_reads_only_their_own_reports(classroom: Classroom) -> None:
    classroom.run_notebooks()
    hub = classroom.hub
    alice, bob = classroom.students
    tokens = {student.name: hub.user_token(student.name) for student in classroom.students}
    kernels = {name: _kernel_id(hub, name, token) for name, token in tokens.items()}

    def reports_path(student: str) -> str:
        return f"user/{student}/tfcoach/api/kernels/{kernels[student]}/reports"

    # Each student's token reads their own kernel's reports.
    for student in classroom.students:
        status, body = hub.request(reports_path(student.name), tokens[student.name])
        assert status == 200, (status, body)
        assert student.function in _functions(body)

    # Alice's token gets nothing from Bob's server: not his reports, not his kernels.
    for path in (reports_path("bob"), "user/bob/api/kernels"):
        status, body = hub.request(path, tokens["alice"])
        assert status == 403, (path, status, body)
        assert bob.function not in body and kernels["bob"] not in body
        assert "reports" not in body

    # Nor does Alice's browser, logged in on the hub: Bob's reports and Bob's JupyterLab are
    # refused, her own reports are there.
    own = alice.context.request.get(f"{hub.url}/{reports_path('alice')}")
    assert own.status == 200 and alice.function in _functions(own.text())
    other = alice.context.request.get(f"{hub.url}/{reports_path('bob')}")
    assert other.status == 403, (other.status, other.url)
    assert bob.function not in other.text() and "reports" not in other.text()
    page = alice.context.new_page()
    try:
        response = page.goto(bob.server_url("lab"), wait_until="domcontentloaded")
        assert response is not None and response.status == 403, response and response.url
        assert page.locator(".jp-LabShell").count() == 0
        assert "403" in page.locator("body").inner_text()
    finally:
        page.close()


def _study(student: str, route: str) -> str:
    return f"user/{student}/tfcoach/api/study/{route}"


def _cards(hub: ClassroomHub, student: str, token: str, terms: list[str]) -> dict[str, Any]:
    status, body = hub.request(_study(student, "deck?terms=" + ",".join(terms)), token)
    assert status == 200, (status, body)
    return {card["term"]: card for card in json.loads(body)["cards"]}


def test_a_students_study_progress_is_their_own(classroom: Classroom) -> None:
    """Each server keeps its student's study store in their own Jupyter data folder: Alice's
    rating is not in Bob's deck, her token reaches neither his deck nor his ratings, and the
    retrace each one met in their own notebook is in their own deck only (the study feed)."""
    classroom.run_notebooks()
    hub = classroom.hub
    alice, bob = classroom.students
    tokens = {student.name: hub.user_token(student.name) for student in classroom.students}

    # The retrace each student met in their notebook (code cell 1) is due in their deck.
    status, body = hub.request(
        f"user/alice/tfcoach/api/kernels/{_kernel_id(hub, 'alice', tokens['alice'])}/reports",
        tokens["alice"],
    )
    assert status == 200, (status, body)
    traces = [t for r in json.loads(body)["reports"] for t in r["traces"]]
    section = next(t["course"]["section"] for t in traces if t["function"] == alice.function)
    met_terms = [term.id for term in terms_for_section(section)]
    assert met_terms, section
    for student in classroom.students:
        deadline = time.monotonic() + 30
        while True:
            cards = _cards(hub, student.name, tokens[student.name], met_terms)
            if all(card["met"]["count"] for card in cards.values()) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        for card in cards.values():
            assert card["due_now"] and card["met"]["count"] == 1, (student.name, card)
            last = card["met"]["last"]
            assert (last["source"], last["cell"]) == (NOTEBOOK_FILE, 1), (student.name, card)

    # Alice rates a card neither of them met; Bob's deck still has it new.
    term = "assign-methods"
    assert term not in met_terms
    status, body = hub.request(
        _study("alice", "review"), tokens["alice"], method="POST", body={"term": term, "rating": 3}
    )
    assert status == 200, (status, body)
    assert json.loads(body)["card"]["reviews"] == 1
    assert _cards(hub, "alice", tokens["alice"], [term])[term]["reviews"] == 1
    bobs = _cards(hub, "bob", tokens["bob"], [term])[term]
    assert (bobs["state"], bobs["reviews"]) == ("new", 0), bobs
    status, body = hub.request(_study("bob", "export"), tokens["bob"])
    assert status == 200 and json.loads(body)["reviews"] == [], body

    # Alice's token can neither read Bob's deck nor rate his cards.
    status, body = hub.request(_study("bob", f"deck?terms={term}"), tokens["alice"])
    assert status == 403 and "cards" not in body, (status, body)
    status, body = hub.request(
        _study("bob", "review"), tokens["alice"], method="POST", body={"term": term, "rating": 1}
    )
    assert status == 403, (status, body)
    assert _cards(hub, "bob", tokens["bob"], [term])[term]["reviews"] == 0

    # One store file per student, in their own Jupyter data folder.
    for student in (alice, bob):
        store = hub.home(student.name) / ".local" / "share" / "jupyter" / "tfcoach"
        assert (store / "study.sqlite3").is_file(), sorted(hub.home(student.name).rglob("*"))
