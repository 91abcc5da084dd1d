"""The REST routes of docs/findings.md through a real jupyter_server (pytest-jupyter).

pytest-jupyter's default ``jp_base_url`` is ``/a%40b/``, so every request here
already goes through a non-root base URL.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable
from http.cookies import SimpleCookie
from typing import Any

import pytest
from jupyter_server.utils import url_path_join
from tornado.httpclient import HTTPClientError, HTTPResponse

from jupyterlab_tfcoach.course import get_course
from jupyterlab_tfcoach.server.handlers import MAX_ANALYZE_BYTES
from tests.harness import on_server_loop

Fetch = Callable[..., Awaitable[HTTPResponse]]


TFC001_SOURCE = "import tensorflow as tf\nw = tf.Variable(1.0)\nw = w - 0.1\n"


@pytest.fixture
def raw_fetch(http_server_client: Any, jp_base_url: str) -> Fetch:
    """A request under the base URL with no token, never raising on HTTP errors."""

    def fetch(*parts: str, **kwargs: Any) -> Awaitable[HTTPResponse]:
        kwargs.setdefault("raise_error", False)
        kwargs.setdefault("request_timeout", 20)
        return http_server_client.fetch(url_path_join(jp_base_url, *parts), **kwargs)

    return fetch


async def expect_error(fetch: Fetch, status: int, *parts: str, **kwargs: Any) -> dict[str, Any]:
    with pytest.raises(HTTPClientError) as caught:
        await fetch(*parts, request_timeout=20, **kwargs)
    response = caught.value.response
    assert caught.value.code == status, response.body if response else None
    assert response is not None
    assert response.headers["Content-Type"].startswith("application/json")
    body = json.loads(response.body)
    assert isinstance(body["message"], str) and body["message"]
    return body


def analyze_body(payload: Any) -> str:
    return json.dumps(payload)


ROUTES = [
    ("GET", ("tfcoach", "api", "course")),
    ("GET", ("tfcoach", "api", "course", "module-01")),
    ("GET", ("tfcoach", "api", "kernels", str(uuid.uuid4()), "reports")),
    ("POST", ("tfcoach", "api", "analyze")),
    ("POST", ("tfcoach", "api", "course", "module-01", "notebook")),
    ("POST", ("tfcoach", "api", "hover")),
]


@pytest.mark.parametrize(("method", "parts"), ROUTES)
@on_server_loop
async def test_every_route_is_403_without_a_valid_token(
    jp_fetch: Fetch, raw_fetch: Fetch, method: str, parts: tuple[str, ...]
) -> None:
    body = None
    if method == "POST":
        payload: dict[str, Any] = {"source": "x = 1\n"}
        if parts[-1] == "hover":
            payload = {"cells": ["x = 1\n"], "cell": 0, "line": 0, "character": 0}
        body = analyze_body(payload)
    for headers in ({}, {"Authorization": "token not-the-token"}):
        response = await raw_fetch(*parts, method=method, body=body, headers=headers)
        assert response.code == 403, (headers, response.code, response.body)
        assert b"<" not in response.body  # a JSON error, never an HTML page
    # The same request with the token is served (the unknown kernel is a 404, not a 403).
    expected = 404 if "kernels" in parts else 200
    response = await jp_fetch(*parts, method=method, body=body, raise_error=False)
    assert response.code == expected, response.body


@on_server_loop
async def test_post_with_login_cookie_needs_xsrf(jp_fetch: Fetch, raw_fetch: Fetch) -> None:
    # Authenticating with the token once hands out a login cookie, as in a browser.
    response = await jp_fetch("tfcoach", "api", "course")
    login = SimpleCookie()
    for header in response.headers.get_list("Set-Cookie"):
        login.load(header)
    assert login, "the server set no login cookie"
    cookie = "; ".join(f"{name}={morsel.value}" for name, morsel in login.items())
    body = analyze_body({"source": TFC001_SOURCE})

    # The cookie alone authenticates a GET ...
    response = await raw_fetch("tfcoach", "api", "course", headers={"Cookie": cookie})
    assert response.code == 200
    # ... but a POST without the XSRF token is refused,
    response = await raw_fetch(
        "tfcoach", "api", "analyze", method="POST", body=body, headers={"Cookie": cookie}
    )
    assert response.code == 403, response.body
    # a mismatching one too,
    response = await raw_fetch(
        "tfcoach",
        "api",
        "analyze",
        method="POST",
        body=body,
        headers={"Cookie": f"{cookie}; _xsrf=0123abcd", "X-XSRFToken": "4567ef01"},
    )
    assert response.code == 403, response.body
    # and the double-submitted token is accepted.
    response = await raw_fetch(
        "tfcoach",
        "api",
        "analyze",
        method="POST",
        body=body,
        headers={"Cookie": f"{cookie}; _xsrf=0123abcd", "X-XSRFToken": "0123abcd"},
    )
    assert response.code == 200, response.body
    assert [f["code"] for f in json.loads(response.body)["findings"]] == ["TFC001"]


@on_server_loop
async def test_course_lists_modules_and_sections(jp_fetch: Fetch) -> None:
    response = await jp_fetch("tfcoach", "api", "course")
    modules = json.loads(response.body)["modules"]
    course = get_course()
    assert [m["id"] for m in modules] == [m.id for m in course.modules]
    assert modules, "the packaged course has modules"
    for listed, module in zip(modules, course.modules, strict=True):
        assert listed["title"] == module.title
        assert [s["id"] for s in listed["sections"]] == [s.id for s in module.sections]
        for section in listed["sections"]:
            ref = course.ref(section["id"])
            assert section == {"id": ref["section"], "title": ref["title"], "url": ref["url"]}


@on_server_loop
async def test_course_lists_the_modules_in_reading_order(jp_fetch: Fetch) -> None:
    """The panel, the "Next module" button and the study tools list what this answers: the
    input pipeline comes right after module 4, before the modules that feed models with it
    (issue #28), the Keras module is two (models and layers, then training with fit), and
    each module's number is its place in the list."""
    response = await jp_fetch("tfcoach", "api", "course")
    modules = json.loads(response.body)["modules"]
    titles = [m["title"] for m in modules]
    assert titles[3:] == [
        "TensorFlow's architecture and execution model",
        "Feeding the model: tf.data input pipelines",
        "Keras models and layers",
        "Training with fit: callbacks, saving and train_step",
        "Numerics and reproducibility",
    ]
    for place, listed in enumerate(modules, start=1):
        assert listed["id"] == f"module-{place:02d}"
        assert listed["notebook"].startswith(f"module-{place:02d}-"), listed["notebook"]


@on_server_loop
async def test_course_module_has_markdown_and_sections(jp_fetch: Fetch) -> None:
    module = get_course().modules[0]
    response = await jp_fetch("tfcoach", "api", "course", module.id)
    body = json.loads(response.body)
    assert body["id"] == module.id
    assert body["title"] == module.title
    assert body["markdown"] == module.markdown
    assert [s["id"] for s in body["sections"]] == [s.id for s in module.sections]
    assert all(s["url"].endswith(f"#{s['id']}") for s in body["sections"])


COURSE_BASE = "https://course.example.org/tf"


@pytest.mark.parametrize("tfcoach_config", [{"course_base_url": COURSE_BASE}])
@on_server_loop
async def test_course_base_url_option_sets_every_link(jp_fetch: Fetch) -> None:
    course = get_course()
    listing = json.loads((await jp_fetch("tfcoach", "api", "course")).body)
    urls = [s["url"] for m in listing["modules"] for s in m["sections"]]
    assert urls and all(url.startswith(f"{COURSE_BASE}/") for url in urls)
    first = listing["modules"][0]["sections"][0]
    assert first["url"] == course.ref(first["id"], COURSE_BASE)["url"]
    response = await jp_fetch(
        "tfcoach", "api", "analyze", method="POST", body=analyze_body({"source": TFC001_SOURCE})
    )
    [finding] = json.loads(response.body)["findings"]
    assert finding["course"] == course.ref(finding["course"]["section"], COURSE_BASE)
    assert finding["course"]["url"].startswith(f"{COURSE_BASE}/")


@pytest.mark.parametrize("module_id", ["module-99", "..", "module-01.md", "%2e%2e%2fetc"])
@on_server_loop
async def test_unknown_course_module_is_404(jp_fetch: Fetch, module_id: str) -> None:
    body = await expect_error(jp_fetch, 404, "tfcoach", "api", "course", module_id)
    assert "course module" in body["message"]


@on_server_loop
async def test_unknown_kernel_reports_is_404(jp_fetch: Fetch) -> None:
    kernel_id = str(uuid.uuid4())
    body = await expect_error(jp_fetch, 404, "tfcoach", "api", "kernels", kernel_id, "reports")
    assert kernel_id in body["message"]


@on_server_loop
async def test_analyze_source_returns_cli_json(jp_fetch: Fetch) -> None:
    response = await jp_fetch(
        "tfcoach", "api", "analyze", method="POST", body=analyze_body({"source": TFC001_SOURCE})
    )
    findings = json.loads(response.body)["findings"]
    from jupyterlab_tfcoach.analysis import analyze_source

    course = get_course()
    expected = [f.to_json(course.ref(f.section_id)) for f in analyze_source(TFC001_SOURCE)]
    assert findings == expected
    assert [(f["code"], f["line"], f["cell"]) for f in findings] == [("TFC001", 3, None)]


@on_server_loop
async def test_analyze_cells_counts_lines_within_cells(jp_fetch: Fetch) -> None:
    cells = ["import tensorflow as tf\nw = tf.Variable(1.0)", "print('hi')\nw = w - 0.1"]
    response = await jp_fetch(
        "tfcoach", "api", "analyze", method="POST", body=analyze_body({"cells": cells})
    )
    findings = json.loads(response.body)["findings"]
    from jupyterlab_tfcoach.analysis import analyze_cells

    course = get_course()
    assert findings == [f.to_json(course.ref(f.section_id)) for f in analyze_cells(cells)]
    assert [(f["code"], f["cell"], f["line"]) for f in findings] == [("TFC001", 1, 2)]


@on_server_loop
async def test_analyze_clean_source_has_no_findings(jp_fetch: Fetch) -> None:
    response = await jp_fetch(
        "tfcoach", "api", "analyze", method="POST", body=analyze_body({"source": "x = 1\n"})
    )
    assert json.loads(response.body) == {"findings": [], "syntax_errors": []}


@on_server_loop
async def test_analyze_reports_syntax_errors_as_results(jp_fetch: Fetch) -> None:
    from jupyterlab_tfcoach.analysis import AnalysisSyntaxError, analyze_source, check_cells

    broken = "def f(:\n    pass\n"
    response = await jp_fetch(
        "tfcoach", "api", "analyze", method="POST", body=analyze_body({"source": broken})
    )
    with pytest.raises(AnalysisSyntaxError) as caught:
        analyze_source(broken)
    error = caught.value
    assert json.loads(response.body) == {
        "findings": [],
        "syntax_errors": [
            {"cell": None, "line": error.lineno, "column": error.offset, "message": error.msg}
        ],
    }

    # In a notebook the broken cell is left out and the others are still analysed.
    cells = [TFC001_SOURCE, broken]
    response = await jp_fetch(
        "tfcoach", "api", "analyze", method="POST", body=analyze_body({"cells": cells})
    )
    body = json.loads(response.body)
    assert [(f["code"], f["cell"]) for f in body["findings"]] == [("TFC001", 0)]
    expected = check_cells(cells).syntax_errors
    assert [(e["cell"], e["line"], e["column"]) for e in body["syntax_errors"]] == [
        (e.cell, e.line, e.column) for e in expected
    ]
    assert [e["cell"] for e in body["syntax_errors"]] == [1]


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ("{not json", "not valid JSON"),
        ("", "not valid JSON"),
        (b"\xff\xfe{}", "not UTF-8"),
        ("[1, 2]", "JSON object"),
        ("{}", "exactly one of"),
        ('{"source": "x", "cells": []}', "exactly one of"),
        ('{"source": 3}', '"source" must be a string'),
        ('{"cells": "x = 1"}', '"cells" must be a list'),
        ('{"cells": ["x = 1", null]}', '"cells"[1] must be a string'),
    ],
)
@on_server_loop
async def test_analyze_bad_payload_is_400(
    jp_fetch: Fetch, body: str | bytes, fragment: str
) -> None:
    error = await expect_error(jp_fetch, 400, "tfcoach", "api", "analyze", method="POST", body=body)
    assert fragment in error["message"]


def padded_source_payload(total_bytes: int) -> bytes:
    """A valid analyze payload of exactly ``total_bytes`` (one long comment line)."""
    empty = len(json.dumps({"source": "#"}).encode())
    payload = json.dumps({"source": "#" + "a" * (total_bytes - empty)}).encode()
    assert len(payload) == total_bytes
    return payload


@on_server_loop
async def test_analyze_limit_is_one_mebibyte(jp_fetch: Fetch) -> None:
    at_limit = padded_source_payload(MAX_ANALYZE_BYTES)
    response = await jp_fetch("tfcoach", "api", "analyze", method="POST", body=at_limit)
    assert json.loads(response.body) == {"findings": [], "syntax_errors": []}

    over = padded_source_payload(MAX_ANALYZE_BYTES + 1)
    error = await expect_error(jp_fetch, 413, "tfcoach", "api", "analyze", method="POST", body=over)
    assert str(MAX_ANALYZE_BYTES + 1) in error["message"]

    # The size is checked before parsing: an over-limit body that is not JSON is a 413, not a 400.
    garbage = b"{" * (MAX_ANALYZE_BYTES + 1)
    await expect_error(jp_fetch, 413, "tfcoach", "api", "analyze", method="POST", body=garbage)


@on_server_loop
async def test_analyze_limit_holds_for_chunked_bodies(jp_fetch: Fetch) -> None:
    # No Content-Length header: the body's own length is checked.
    chunks = [b"{" * (256 * 1024)] * 4 + [b"{"]

    async def producer(write: Callable[[bytes], Awaitable[None]]) -> None:
        for chunk in chunks:
            await write(chunk)

    error = await expect_error(
        jp_fetch, 413, "tfcoach", "api", "analyze", method="POST", body_producer=producer
    )
    assert str(MAX_ANALYZE_BYTES + 1) in error["message"]
