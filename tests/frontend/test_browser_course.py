"""The course tab in JupyterLab, as a learner uses it (headless Chromium).

Opened from the Help menu; the module's contents beside the text; previous/next through
every heading of the course, across modules; links between sections stay in the course;
review answers collapsed until asked for; "Open the notebook for this module" and the
palette copy the module's notebook into the learner's folder and open it.
"""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from jupyterlab_tfcoach.course import get_course
from tests.frontend.notebook_page import new_page
from tests.frontend.study_pages import TAB, CoursePage
from tests.harness import LabServer

pytestmark = pytest.mark.browser

# Headings of the text that are not sections with ids (the course's closing parts).
CLOSING_HEADINGS = ["Your turn", "Key takeaways", "Review"]


@pytest.fixture(scope="module")
def course_page(browser: Any, lab_server: LabServer) -> Iterator[CoursePage]:
    context, page, log = new_page(browser)
    try:
        page.goto(lab_server.lab_url(), wait_until="domcontentloaded")
        page.wait_for_function(
            """() => window.jupyterapp
                 && window.jupyterapp.commands.hasCommand('tfcoach:open-course')""",
            timeout=60_000,
        )
        page.wait_for_selector("#jp-MainMenu", timeout=30_000)
        yield CoursePage(page, log, lab_server)
    finally:
        context.close()


def test_the_course_opens_from_the_help_menu(course_page: CoursePage) -> None:
    page = course_page.page
    page.locator("#jp-MainMenu .lm-MenuBar-itemLabel", has_text="Help").click()
    page.locator(".lm-Menu-itemLabel", has_text="TF Coach course").click()
    first = get_course().modules[0]
    tab = course_page.tab(first.id)
    tab.wait_for(state="visible", timeout=10_000)
    tab.locator(".jp-tfcoach-course-page h1").wait_for(state="visible", timeout=10_000)
    assert first.title in tab.locator(".jp-tfcoach-course-page h1").first.inner_text()
    label = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current").inner_text()
    assert first.title in label


def test_the_contents_list_every_heading_and_jump_there(course_page: CoursePage) -> None:
    module = get_course().modules[0]
    tab = course_page.open_module(module.id)
    contents = tab.locator(".jp-tfcoach-course-toc")
    entries = contents.locator(".jp-tfcoach-course-toc-sections button").all_inner_texts()
    assert entries == [s.title for s in module.sections] + CLOSING_HEADINGS
    modules = contents.locator(".jp-tfcoach-course-toc-modules button").all_inner_texts()
    assert modules == [m.title for m in get_course().modules]

    # A section far down the module, so the jump has to scroll.
    target = "Broadcasting, and the shape bug it hides"
    assert target in entries
    contents.locator("button", has_text=target).first.click()
    course_page.wait_for_heading_at_top(module.id, target)
    current = contents.locator("li[aria-current] button")
    assert current.inner_text() == target


def test_previous_and_next_walk_through_the_course(course_page: CoursePage) -> None:
    first, second = get_course().modules[:2]
    tab = course_page.open_module(first.id)
    # From the module's last heading, "Next" opens the next module at its top.
    tab.locator(".jp-tfcoach-course-toc-sections button", has_text="Review").click()
    course_page.wait_for_heading_at_top(first.id, "Review")
    course_page.toolbar_button(first.id, "Next").click()
    next_tab = course_page.tab(second.id)
    next_tab.wait_for(state="visible", timeout=10_000)
    course_page.wait_for_heading_at_top(second.id, second.title)
    # "Next" again: the module's first section; "Previous" twice: back to module 1's end.
    course_page.toolbar_button(second.id, "Next").click()
    course_page.wait_for_heading_at_top(second.id, second.sections[0].title)
    course_page.toolbar_button(second.id, "Previous").click()
    course_page.wait_for_heading_at_top(second.id, second.title)
    course_page.toolbar_button(second.id, "Previous").click()
    course_page.wait_for_heading_at_top(first.id, "Review")
    assert tab.is_visible()


def _section_links(markdown: str) -> list[str]:
    """The section ids a module's Markdown links to (``](module-02.md#id)``, ``](#id)``)."""
    return re.findall(r"\]\((?:module-[0-9]+\.md)?#([a-z0-9-]+)\)", markdown)


def test_links_between_sections_stay_in_the_course(course_page: CoursePage) -> None:
    course = get_course()
    page = course_page.page
    by_id = {s.id: s for m in course.modules for s in m.sections}
    # The first module whose text links both to another module and within itself (read from
    # the Markdown; the hrefs checked below are the ones the browser rendered).
    module = next(
        m
        for m in course.modules
        if len({by_id[i].module_id == m.id for i in _section_links(m.markdown) if i in by_id}) == 2
    )
    links: list[str] = course_page.open_module(module.id).evaluate(
        """(tab) => [...tab.querySelectorAll('.jp-tfcoach-course-page a[href]')]
             .map(a => a.getAttribute('href'))"""
    )
    section_links = [h for h in links if h.split("#")[-1] in by_id and "://" not in h]
    other = next(h for h in section_links if by_id[h.split("#")[-1]].module_id != module.id)
    target = by_id[other.split("#")[-1]]
    course_page.tab(module.id).locator(f'a[href="{other}"]').first.click()
    course_page.wait_for_heading_at_top(target.module_id, target.title)

    same = next(h for h in section_links if by_id[h.split("#")[-1]].module_id == module.id)
    target = by_id[same.split("#")[-1]]
    course_page.open_module(module.id).locator(".jp-tfcoach-course-toc-module").click()
    page.locator(f"{TAB.format(module=module.id)} a[href='{same}']").first.click()
    course_page.wait_for_heading_at_top(module.id, target.title)
    # The page itself did not navigate away from JupyterLab.
    assert "/lab" in page.url


@pytest.mark.parametrize("module_index", [0, 1])
def test_review_answers_are_collapsed_until_asked_for(
    course_page: CoursePage, module_index: int
) -> None:
    module = get_course().modules[module_index]
    tab = course_page.open_module(module.id)
    tab.locator("details").first.wait_for(state="attached", timeout=10_000)
    details = tab.locator(".jp-tfcoach-course-page details")
    assert details.count() >= 4
    assert tab.locator(".jp-tfcoach-course-page details[open]").count() == 0
    question = details.first
    question.scroll_into_view_if_needed()
    answer = question.locator(":scope > :not(summary)").first
    assert not answer.is_visible()
    question.locator("summary").click()
    answer.wait_for(state="visible", timeout=5_000)
    assert answer.inner_text().strip()


def test_open_the_notebook_for_this_module(course_page: CoursePage) -> None:
    course = get_course()
    second = course.modules[1]
    assert second.notebook is not None
    page = course_page.page
    root = course_page.server.notebook_dir
    # A learner who does not have this notebook yet.
    (root / second.notebook.name).unlink(missing_ok=True)
    course_page.open_module(second.id)
    course_page.toolbar_button(second.id, "Open the notebook for this module").click()
    page.wait_for_function(
        """(path) => [...window.jupyterapp.shell.widgets('main')].some(
             w => w.context && w.context.path === path && w.isVisible)""",
        arg=second.notebook.name,
        timeout=20_000,
    )
    copied = json.loads((root / second.notebook.name).read_text())
    packaged = json.loads(second.notebook.read_text())
    assert [c["source"] for c in copied["cells"]] == [c["source"] for c in packaged["cells"]]


def test_the_palette_opens_a_module_notebook_the_learner_already_has(
    course_page: CoursePage,
) -> None:
    first = get_course().modules[0]
    assert first.notebook is not None
    mine = course_page.server.notebook_dir / first.notebook.name
    edited = json.loads(mine.read_text())
    edited["cells"][0]["source"] = "My notes on module 1"
    url = course_page.server.api_url(f"api/contents/{first.notebook.name}")
    request = urllib.request.Request(
        url,
        method="PUT",
        data=json.dumps({"type": "notebook", "format": "json", "content": edited}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200
    course_page.run_from_palette(f"Open the TF Coach notebook: {first.title}")
    course_page.page.wait_for_function(
        """(path) => [...window.jupyterapp.shell.widgets('main')].some(
             w => w.context && w.context.path === path && w.isVisible && w.context.isReady
               && w.content.model && w.content.model.cells.length > 0)""",
        arg=first.notebook.name,
        timeout=20_000,
    )
    # The learner's copy is opened as it is, never overwritten by the packaged one.
    source = json.loads(mine.read_text())["cells"][0]["source"]
    assert "".join(source) == "My notes on module 1"
    text = course_page.page.evaluate(
        """(path) => [...window.jupyterapp.shell.widgets('main')]
             .find(w => w.context && w.context.path === path)
             .content.model.cells.get(0).sharedModel.getSource()""",
        first.notebook.name,
    )
    assert "My notes on module 1" in text


def test_no_console_errors(course_page: CoursePage) -> None:
    assert course_page.log.errors("tfcoach") == []
