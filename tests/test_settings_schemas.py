"""The editors' settings schemas accept exactly the rule codes the core accepts.

JupyterLab's settings editor (``labextension/schema/plugin.json``, ``ignoreRules``) and
jupyterlab-lsp's (``jupyter_lsp_spec.CONFIG_SCHEMA``, ``tfcoach.select``/``ignore``)
check entries before the server sees them; a pattern narrower than the core's would
refuse a prefix the CLI and ``pyproject.toml`` take, a wider one would let through
codes the server then drops.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft7Validator

from jupyterlab_tfcoach.analysis.config import parse_codes
from lsp_server.jupyter_lsp_spec import CONFIG_SCHEMA
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
