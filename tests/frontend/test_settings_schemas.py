"""The editors' settings schemas accept exactly the rule codes the core accepts.

JupyterLab's settings editor (``labextension/schema/plugin.json``, ``ignoreRules``) and
jupyterlab-lsp's (``jupyter_lsp_spec.CONFIG_SCHEMA``, ``tfcoach.select``/``ignore``)
check entries before the server sees them; a pattern narrower than the core's would
refuse a prefix the CLI and ``pyproject.toml`` take, a wider one would let through
codes the server then drops.

The VS Code extension (``editors/vscode/package.json``) declares one ``tfcoach.<key>``
setting per key the server reads (``lsp_server.settings.KNOWN_KEYS``), with the server's
default, and a schema that accepts exactly the values the server takes without a warning:
a key missing there cannot be set from VS Code's settings UI, and a wrong default or bound
would be sent to the server or refused by VS Code.
"""

from __future__ import annotations

import json
import re
from dataclasses import fields
from typing import Any

import pytest
from jsonschema import Draft7Validator

from jupyterlab_tfcoach.analysis.config import parse_codes
from lsp_server.jupyter_lsp_spec import CONFIG_SCHEMA
from lsp_server.settings import CLIENT_KEYS, KNOWN_KEYS, SECTION, Settings, parse_settings
from tests.harness import REPO_ROOT

PLUGIN = json.loads((REPO_ROOT / "labextension/schema/plugin.json").read_text(encoding="utf-8"))
ITEM_SCHEMAS = {
    "Lab ignoreRules": PLUGIN["properties"]["ignoreRules"]["items"],
    "LSP select": CONFIG_SCHEMA["properties"]["tfcoach.select"]["items"],
    "LSP ignore": CONFIG_SCHEMA["properties"]["tfcoach.ignore"]["items"],
}
SAMPLES = ["TFC001", "tfc004", "TFC00", "TFC0", "TFC", "TFC014", "TFC0001", "E501", "TFC00 ", ""]


@pytest.mark.parametrize("where", sorted(ITEM_SCHEMAS))
@pytest.mark.parametrize("code", SAMPLES)
def test_schema_and_core_agree(where: str, code: str) -> None:
    schema: dict[str, Any] = ITEM_SCHEMAS[where]
    schema_accepts = Draft7Validator(schema).is_valid(code)
    parsed = parse_codes([code], where)
    core_accepts = bool(parsed.codes) and not parsed.problems
    assert schema_accepts == core_accepts, (where, code, parsed)


VSCODE_PACKAGE = json.loads((REPO_ROOT / "editors/vscode/package.json").read_text(encoding="utf-8"))
VSCODE_SETTINGS: dict[str, dict[str, Any]] = VSCODE_PACKAGE["contributes"]["configuration"][
    "properties"
]
# The server's integer settings and values around their bounds, sent as VS Code would send them.
INTEGER_KEYS = ["debounceMs", "maxDocumentCharacters"]
INTEGER_SAMPLES: list[Any] = [-1, 0, 1, 200, 5000, 5001, 1_048_576, 1.5, "200", True]


def server_default(key: str) -> Any:
    """The value ``Settings`` holds when the editor does not set ``key`` (camelCase key,
    snake_case field: ``courseBaseUrl`` -> ``course_base_url``)."""
    name = re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()
    assert name in {field.name for field in fields(Settings)}, (key, name)
    return getattr(Settings(), name)


@pytest.mark.parametrize("key", sorted(KNOWN_KEYS))
def test_vscode_declares_every_server_setting_with_its_default(key: str) -> None:
    prop = VSCODE_SETTINGS.get(f"{SECTION}.{key}")
    assert prop is not None, f"editors/vscode/package.json has no {SECTION}.{key}"
    assert prop.get("markdownDescription") or prop.get("description"), key
    assert prop["default"] == server_default(key), (key, prop["default"])
    # The default VS Code sends is one the server takes as it is.
    parsed = parse_settings({SECTION: {key: prop["default"]}})
    assert parsed.warnings == [], (key, parsed.warnings)
    assert parsed.settings == Settings()


def test_vscode_declares_no_setting_the_server_does_not_know() -> None:
    for name in VSCODE_SETTINGS:
        section, _, key = name.partition(".")
        assert section == SECTION, name
        assert key in KNOWN_KEYS or key.split(".")[0] in CLIENT_KEYS, name


@pytest.mark.parametrize("key", INTEGER_KEYS)
@pytest.mark.parametrize("value", INTEGER_SAMPLES, ids=repr)
def test_vscode_integer_schema_and_server_agree(key: str, value: Any) -> None:
    assert key in KNOWN_KEYS
    prop = VSCODE_SETTINGS.get(f"{SECTION}.{key}")
    assert prop is not None, f"editors/vscode/package.json has no {SECTION}.{key}"
    schema = {name: prop[name] for name in ("type", "minimum", "maximum") if name in prop}
    schema_accepts = Draft7Validator(schema).is_valid(value)
    server_accepts = not parse_settings({SECTION: {key: value}}).warnings
    assert schema_accepts == server_accepts, (key, value, schema)
