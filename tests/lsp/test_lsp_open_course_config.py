"""tfcoach.openCourse with a bare section id honours the workspace's [tool.tfcoach]."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from jupyterlab_tfcoach.course import course_ref
from tests.lsp.helpers import DATA, config, initialize

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(60)]

WORKSPACE = DATA / "course_base"  # its pyproject.toml sets course-base-url


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, root=WORKSPACE)
    yield
    await lsp_client.shutdown_session()


async def test_section_id_uses_the_pyproject_base_url(client: LanguageClient) -> None:
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="tfcoach.openCourse", arguments=["retracing"])
    )
    expected = course_ref("retracing", "https://course.example/tf")["url"]
    assert expected == "https://course.example/tf/module-02#retracing"
    assert client.shown_documents[-1].uri == expected
