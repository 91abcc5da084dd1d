"""A server under ``base_url=/user/alice/`` (as JupyterHub runs it) serves every route there."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from tornado.httpclient import HTTPResponse

from tests.harness import on_server_loop
from tests.server.test_server_kernels import RunningKernel

Fetch = Callable[..., Awaitable[HTTPResponse]]


@pytest.fixture
def jp_base_url() -> str:
    return "/user/alice/"


@pytest.fixture
def jp_server_config() -> dict[str, Any]:
    return {"ServerApp": {"jpserver_extensions": {"jupyterlab_tfcoach": True}}}


@on_server_loop
async def test_routes_live_under_the_base_url(
    jp_fetch: Fetch, http_server_client: Any, jp_auth_header: dict[str, str], jp_serverapp: Any
) -> None:
    assert jp_serverapp.base_url == "/user/alice/"

    async def get(url: str, **kwargs: Any) -> HTTPResponse:
        return await http_server_client.fetch(
            url, headers=jp_auth_header, raise_error=False, request_timeout=20, **kwargs
        )

    response = await get("/user/alice/tfcoach/api/course")
    assert response.code == 200
    module_id = json.loads(response.body)["modules"][0]["id"]
    assert (await get(f"/user/alice/tfcoach/api/course/{module_id}")).code == 200
    response = await get(
        "/user/alice/tfcoach/api/analyze", method="POST", body=json.dumps({"cells": ["x = 1"]})
    )
    assert response.code == 200 and json.loads(response.body)["findings"] == []
    # Nothing is served outside the prefix.
    for outside in (
        "/tfcoach/api/course",
        f"/tfcoach/api/course/{module_id}",
        "/user/tfcoach/api/course",
    ):
        assert (await get(outside)).code == 404, outside
    assert (await get("/tfcoach/api/analyze", method="POST", body="{}")).code == 404

    # A kernel started under the prefix has its reports there too.
    response = await jp_fetch("api", "kernels", method="POST", body=json.dumps({"name": "python3"}))
    kernel = RunningKernel(jp_serverapp, jp_fetch, json.loads(response.body)["id"])
    await kernel.connect()
    try:
        done = await kernel.ok("x = 1")
        reports = await kernel.wait_reports(1)
        assert [r["execution_count"] for r in reports] == [done.reply["execution_count"]]
        response = await get(f"/user/alice/tfcoach/api/kernels/{kernel.kernel_id}/reports")
        assert json.loads(response.body)["reports"] == reports
        assert (await get(f"/tfcoach/api/kernels/{kernel.kernel_id}/reports")).code == 404
    finally:
        kernel.close()
