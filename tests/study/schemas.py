"""Validators for the study schemas (``schema/study-*.schema.json``), which refer to each
other by ``$id``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schema"
PROGRESS_SCHEMA: dict[str, Any] = json.loads(
    (SCHEMA_DIR / "study-progress.schema.json").read_text("utf-8")
)
API_SCHEMA: dict[str, Any] = json.loads((SCHEMA_DIR / "study-api.schema.json").read_text("utf-8"))
REGISTRY: Registry = Registry().with_resources(
    (schema["$id"], Resource.from_contents(schema)) for schema in (PROGRESS_SCHEMA, API_SCHEMA)
)


def validator(definition: str | None = None) -> Draft202012Validator:
    """The progress document's validator, or the API schema's ``$defs[definition]``."""
    if definition is None:
        return Draft202012Validator(PROGRESS_SCHEMA, registry=REGISTRY)
    schema = {"$ref": f"{API_SCHEMA['$id']}#/$defs/{definition}"}
    return Draft202012Validator(schema, registry=REGISTRY)


def problems(instance: Any, definition: str | None = None) -> list[str]:
    return [
        f"{list(error.absolute_path)}: {error.message}"
        for error in validator(definition).iter_errors(instance)
    ]
