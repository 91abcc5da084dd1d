"""Settings: initializationOptions, didChangeConfiguration, workspace/configuration,
[tool.tfcoach] in pyproject.toml, and bad values falling back with a warning."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from jupyterlab_tfcoach.course import course_ref
from tests.lsp.helpers import (
    DATA,
    close_text,
    codes,
    config,
    initialize,
    open_text,
    wait_published,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(60)]

TRAIN = DATA / "train.py"
TEXT = TRAIN.read_text(encoding="utf-8")
ALL = ["TFC001", "TFC002"]


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, root=DATA, options={"ignore": ["TFC001"], "debounceMs": 0})
    yield
    await lsp_client.shutdown_session()


def change_settings(client: LanguageClient, settings: Any) -> None:
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=settings))


async def test_initialization_options_apply(client: LanguageClient) -> None:
    open_text(client, TRAIN.as_uri(), TEXT)
    assert codes((await wait_published(client, TRAIN.as_uri())).diagnostics) == ["TFC002"]


async def test_did_change_configuration_reanalyses(client: LanguageClient) -> None:
    base = "https://example.org/course/"
    change_settings(
        client, {"tfcoach": {"select": ["TFC001"], "courseBaseUrl": base, "debounceMs": 0}}
    )
    (diagnostic,) = (await wait_published(client, TRAIN.as_uri())).diagnostics
    assert diagnostic.code == "TFC001"
    assert diagnostic.code_description.href == course_ref("rebinding-variables", base)["url"]
    assert diagnostic.code_description.href.startswith(base)


async def test_bad_settings_fall_back_with_a_warning(client: LanguageClient) -> None:
    client.messages.clear()
    change_settings(
        client,
        {"tfcoach": {"select": 5, "courseBaseUrl": "javascript:alert(1)", "debounceMs": "x"}},
    )
    published = await wait_published(client, TRAIN.as_uri())
    assert codes(published.diagnostics) == ALL
    assert all(d.code_description.href.startswith("file://") for d in published.diagnostics)
    warnings = [m.message for m in client.messages if m.type == types.MessageType.Warning]
    assert any("tfcoach.select" in m for m in warnings)
    assert any("tfcoach.courseBaseUrl" in m for m in warnings)
    assert any("tfcoach.debounceMs" in m for m in warnings)


async def test_unknown_codes_are_dropped_with_a_warning(client: LanguageClient) -> None:
    client.messages.clear()
    change_settings(client, {"tfcoach": {"ignore": ["TFC002", "XYZ999"], "debounceMs": 0}})
    assert codes((await wait_published(client, TRAIN.as_uri())).diagnostics) == ["TFC001"]
    assert any("XYZ999" in m.message for m in client.messages)


async def test_pyproject_applies_and_editor_settings_override_it(client: LanguageClient) -> None:
    change_settings(client, {"tfcoach": {"debounceMs": 0}})
    await wait_published(client, TRAIN.as_uri())
    path = DATA / "configured" / "train.py"
    open_text(client, path.as_uri(), TEXT)
    assert codes((await wait_published(client, path.as_uri())).diagnostics) == ["TFC001"]
    change_settings(client, {"tfcoach": {"ignore": [], "debounceMs": 0}})
    assert codes((await wait_published(client, path.as_uri())).diagnostics) == ALL
    close_text(client, path.as_uri())


async def test_invalid_pyproject_warns_and_uses_defaults(client: LanguageClient) -> None:
    client.messages.clear()
    change_settings(client, {"tfcoach": {"debounceMs": 0}})
    path = DATA / "badly_configured" / "train.py"
    open_text(client, path.as_uri(), TEXT)
    assert codes((await wait_published(client, path.as_uri())).diagnostics) == ALL
    assert any("badly_configured" in m.message and "NOPE42" in m.message for m in client.messages)


@pytest_lsp.fixture(scope="module", config=config())
async def pulling_client(lsp_client: LanguageClient) -> Any:
    lsp_client.set_configuration({"tfcoach": {"ignore": ["TFC002"], "debounceMs": 0}})
    await initialize(lsp_client, root=DATA, options={"debounceMs": 0}, configuration=True)
    yield
    await lsp_client.shutdown_session()


async def settled(client: LanguageClient, uri: str, want: list[str]) -> list[str]:
    """Diagnostics of ``uri`` once they match ``want`` (or the last ones seen)."""
    got: list[str] = []
    for _ in range(20):
        try:
            got = codes((await wait_published(client, uri, timeout=1)).diagnostics)
        except TimeoutError:
            continue
        if got == want:
            break
    return got


async def test_workspace_configuration_is_pulled(pulling_client: LanguageClient) -> None:
    open_text(pulling_client, TRAIN.as_uri(), TEXT)
    assert await settled(pulling_client, TRAIN.as_uri(), ["TFC001"]) == ["TFC001"]
    pulling_client.set_configuration({"tfcoach": {"ignore": ["TFC001"], "debounceMs": 0}})
    change_settings(pulling_client, None)  # "settings changed, ask me"
    await asyncio.sleep(0)
    assert await settled(pulling_client, TRAIN.as_uri(), ["TFC002"]) == ["TFC002"]
