"""Editor settings (section ``tfcoach``): parsed, validated, defaults on error.

Accepted shapes, as different clients send them:
``{"tfcoach": {...}}``, ``{...}`` (the section itself), and flat dotted keys
``{"tfcoach.select": [...]}`` (JupyterLab-LSP).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from jupyterlab_tfcoach.analysis.config import parse_codes
from jupyterlab_tfcoach.course import InvalidBaseUrlError, checked_base_url
from lsp_server import DEFAULT_MAX_DOCUMENT_CHARACTERS

SECTION = "tfcoach"
MAX_DOCUMENT_CHARACTERS_KEY = "maxDocumentCharacters"
KNOWN_KEYS = frozenset(
    {"select", "ignore", "courseBaseUrl", "debounceMs", MAX_DOCUMENT_CHARACTERS_KEY}
)
# Settings of editor clients (the VS Code extension's own `tfcoach.*` keys): clients that
# send their whole `tfcoach` section must not earn a warning for them.
CLIENT_KEYS = frozenset({"interpreter", "trace", "server"})


@dataclass(frozen=True)
class Settings:
    """``None`` means "not set by the editor" so ``[tool.tfcoach]`` applies."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    course_base_url: str | None = None
    debounce_ms: int = 200
    # Larger documents (a notebook: its code cells together) are not checked at all; see
    # ``size_limit.py``. Characters (code points), not bytes: ``len`` of the text, at no cost.
    max_document_characters: int = DEFAULT_MAX_DOCUMENT_CHARACTERS


@dataclass(frozen=True)
class ParsedSettings:
    settings: Settings
    warnings: list[str] = field(default_factory=list)


def extract_section(raw: Any) -> Mapping[str, Any] | None:
    """Find the ``tfcoach`` section in whatever the client sent; None if absent."""
    if not isinstance(raw, Mapping):
        return None
    section = raw.get(SECTION)
    if isinstance(section, Mapping):
        return section
    dotted = {k[len(SECTION) + 1 :]: v for k, v in raw.items() if k.startswith(SECTION + ".")}
    if dotted:
        return dotted
    if any(key in KNOWN_KEYS for key in raw):
        return raw
    return None


def _codes(
    key: str, value: Any, is_known: Callable[[str], bool] | None, warnings: list[str]
) -> tuple[str, ...] | None:
    """The core's code-list reader (:func:`parse_codes`, as the CLI and pyproject.toml);
    unknown codes are dropped with a warning, a value that is no list means "not set"."""
    parsed = parse_codes(value, f"{SECTION}.{key}")
    if parsed.codes is None:
        warnings.extend(f"{problem}; using default" for problem in parsed.problems)
        return None
    warnings.extend(f"{problem}; ignored" for problem in parsed.problems)
    codes = tuple(code for code in parsed.codes if is_known is None or is_known(code))
    warnings.extend(
        f"{SECTION}.{key}: rule code {code!r} ignored" for code in parsed.codes if code not in codes
    )
    return codes


def parse_settings(raw: Any, is_known: Callable[[str], bool] | None = None) -> ParsedSettings:
    """Validate a ``tfcoach`` section; every bad value falls back to its default.
    ``is_known``, when given, narrows the rule codes accepted further."""
    warnings: list[str] = []
    if raw is not None and not isinstance(raw, Mapping):
        warnings.append("tfcoach settings must be an object; using the defaults")
        return ParsedSettings(Settings(), warnings)
    if isinstance(raw, Mapping) and raw.get(SECTION) is not None:
        if not isinstance(raw[SECTION], Mapping):
            warnings.append("tfcoach settings must be an object; using the defaults")
            return ParsedSettings(Settings(), warnings)
    section = extract_section(raw) or {}
    select = _codes("select", section.get("select"), is_known, warnings)
    ignore = _codes("ignore", section.get("ignore"), is_known, warnings)

    base_url = section.get("courseBaseUrl")
    try:
        if base_url is not None and not isinstance(base_url, str):
            raise InvalidBaseUrlError(f"tfcoach.courseBaseUrl must be a string, not {base_url!r}")
        base_url = checked_base_url(base_url, "tfcoach.courseBaseUrl")
    except InvalidBaseUrlError as error:
        # Ignored, not replaced: the project's course-base-url (else the packaged course)
        # applies, as when the setting is absent.
        warnings.append(
            f"{error}; ignored (the project's course-base-url applies, else the packaged course)"
        )
        base_url = None

    debounce = section.get("debounceMs", Settings.debounce_ms)
    if isinstance(debounce, bool) or not isinstance(debounce, int) or not 0 <= debounce <= 5000:
        warnings.append(f"tfcoach.debounceMs must be an integer 0..5000, got {debounce!r}")
        debounce = Settings.debounce_ms

    max_characters = _max_document_characters(section, warnings)

    unknown = sorted(set(section) - KNOWN_KEYS - CLIENT_KEYS)
    if unknown:
        warnings.append(f"tfcoach: unknown settings ignored: {', '.join(unknown)}")
    settings = Settings(
        select=select,
        ignore=ignore,
        course_base_url=base_url,
        debounce_ms=debounce,
        max_document_characters=max_characters,
    )
    return ParsedSettings(settings, warnings)


def _max_document_characters(section: Mapping[str, Any], warnings: list[str]) -> int:
    """``maxDocumentCharacters``: a positive integer; absent or null: the default; anything
    else: the default with a warning."""
    default = Settings.max_document_characters
    value = section.get(MAX_DOCUMENT_CHARACTERS_KEY)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        warnings.append(
            f"{SECTION}.{MAX_DOCUMENT_CHARACTERS_KEY} must be a positive integer, got {value!r};"
            f" using {default}"
        )
        return default
    return value
