"""``POST tfcoach/api/course/{module}/notebook``: a module's notebook copied into the user's folder.

Through a real jupyter_server (pytest-jupyter) and its contents manager, as the course tab's
"Open the notebook for this module" button calls it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest
from tornado.httpclient import HTTPResponse

from jupyterlab_tfcoach.course import get_course
from tests.harness import on_server_loop

Fetch = Callable[..., Awaitable[HTTPResponse]]


def open_notebook(fetch: Fetch, module_id: str, payload: Any) -> Awaitable[HTTPResponse]:
    return fetch(
        "tfcoach",
        "api",
        "course",
        module_id,
        "notebook",
        method="POST",
        body=json.dumps(payload),
        raise_error=False,
    )


def code_sources(notebook: Any) -> list[str]:
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


@on_server_loop
async def test_every_module_notebook_is_copied_into_the_root(
    jp_fetch: Fetch, jp_root_dir: Path
) -> None:
    for module in get_course().modules:
        assert module.notebook is not None, f"{module.id} ships a notebook"
        response = await open_notebook(jp_fetch, module.id, {"directory": ""})
        assert response.code == 200, response.body
        body = json.loads(response.body)
        assert body == {"path": module.notebook.name, "created": True}
        copied = nbformat.read(jp_root_dir / body["path"], as_version=4)
        packaged = nbformat.read(module.notebook, as_version=4)
        assert code_sources(copied) == code_sources(packaged)
        assert code_sources(copied), "the copy has the module's code cells"


@on_server_loop
async def test_a_copy_the_learner_has_is_opened_as_it_is(
    jp_fetch: Fetch, jp_root_dir: Path
) -> None:
    module = get_course().modules[0]
    assert module.notebook is not None
    (jp_root_dir / "week1").mkdir()
    first = json.loads((await open_notebook(jp_fetch, module.id, {"directory": "week1/"})).body)
    assert first == {"path": f"week1/{module.notebook.name}", "created": True}
    mine = jp_root_dir / first["path"]
    edited = nbformat.read(mine, as_version=4)
    edited.cells[0].source = "my own notes"
    nbformat.write(edited, mine)
    again = json.loads((await open_notebook(jp_fetch, module.id, {"directory": "week1"})).body)
    assert again == {"path": first["path"], "created": False}
    assert nbformat.read(mine, as_version=4).cells[0].source == "my own notes"


@pytest.mark.parametrize(
    ("module_id", "payload", "status", "says"),
    [
        ("module-99", {"directory": ""}, 404, "No course module"),
        ("module-01", {"directory": "no-such-folder"}, 404, "No folder"),
        ("module-01", {"directory": 3}, 400, '"directory" must be a string'),
        ("module-01", ["not", "an", "object"], 400, '"directory" must be a string'),
        ("module-01", {"directory": "../outside"}, 404, "outside root"),
    ],
)
@on_server_loop
async def test_bad_requests_say_why_and_write_nothing(
    jp_fetch: Fetch,
    jp_root_dir: Path,
    module_id: str,
    payload: Any,
    status: int,
    says: str,
) -> None:
    (jp_root_dir.parent / "outside").mkdir(exist_ok=True)
    before = sorted(p.name for p in jp_root_dir.parent.rglob("*.ipynb"))
    response = await open_notebook(jp_fetch, module_id, payload)
    assert response.code == status, response.body
    assert says in json.loads(response.body)["message"]
    assert sorted(p.name for p in jp_root_dir.parent.rglob("*.ipynb")) == before


@on_server_loop
async def test_course_listings_name_each_module_notebook(jp_fetch: Fetch) -> None:
    course = get_course()
    listing = json.loads((await jp_fetch("tfcoach", "api", "course")).body)["modules"]
    for listed, module in zip(listing, course.modules, strict=True):
        assert module.notebook is not None
        assert listed["notebook"] == module.notebook.name
        detail = json.loads((await jp_fetch("tfcoach", "api", "course", module.id)).body)
        assert detail["notebook"] == module.notebook.name
