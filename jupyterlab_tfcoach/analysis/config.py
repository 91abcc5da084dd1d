"""Which rules run, where course links point, and ``# noqa`` suppression.

``[tool.tfcoach]`` is read from the nearest ``pyproject.toml`` that has such a
table (like ruff, a ``pyproject.toml`` without it does not stop the search,
so a sub-package's own packaging file does not hide the project settings).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from jupyterlab_tfcoach.course import InvalidBaseUrlError, checked_base_url

_CODE_PATTERN = re.compile(r"^[A-Z]+[0-9]*$")
_KNOWN_KEYS = ("select", "ignore", "course-base-url")


class ConfigError(ValueError):
    """An invalid ``[tool.tfcoach]`` table or option; the message names the source."""


def _known_codes() -> tuple[str, ...]:
    from jupyterlab_tfcoach.analysis.rules import RULES

    return tuple(rule.code for rule in RULES)


def normalize_codes(codes: Iterable[str], source: str) -> frozenset[str]:
    """Validate rule selectors: a full code (``TFC001``) or a prefix (``TFC``, ``TFC00``)."""
    known = _known_codes()
    selected: set[str] = set()
    for raw in codes:
        if not isinstance(raw, str):
            raise ConfigError(f"{source}: rule codes must be strings, got {raw!r}")
        code = raw.strip().upper()
        if not code:
            continue
        if not _CODE_PATTERN.match(code) or not any(k.startswith(code) for k in known):
            raise ConfigError(
                f"{source}: unknown rule code {raw!r} (known: {known[0]}..{known[-1]})"
            )
        selected.add(code)
    return frozenset(selected)


@dataclass(frozen=True)
class Config:
    """``select``: None means every rule; ``ignore`` wins over ``select``."""

    select: frozenset[str] | None = None
    ignore: frozenset[str] = frozenset()
    course_base_url: str | None = None
    source: str | None = None  # where it was read from, for messages

    @classmethod
    def from_options(
        cls,
        select: Iterable[str] | None = None,
        ignore: Iterable[str] | None = None,
        course_base_url: str | None = None,
        source: str = "options",
    ) -> Config:
        return cls(
            select=None if select is None else normalize_codes(select, source),
            ignore=normalize_codes(ignore or (), source),
            course_base_url=course_base_url or None,
            source=source,
        )

    def overridden(
        self,
        select: Iterable[str] | None = None,
        ignore: Iterable[str] | None = None,
        course_base_url: str | None = None,
    ) -> Config:
        """Command-line style overrides: given options replace the file's."""
        changes: dict[str, Any] = {}
        if select is not None:
            changes["select"] = normalize_codes(select, "select")
        if ignore is not None:
            changes["ignore"] = normalize_codes(ignore, "ignore")
        if course_base_url is not None:
            changes["course_base_url"] = course_base_url or None
        return replace(self, **changes)

    def is_enabled(self, code: str) -> bool:
        if any(code.startswith(prefix) for prefix in self.ignore):
            return False
        if self.select is None:
            return True
        return any(code.startswith(prefix) for prefix in self.select)


def _code_list(table: dict[str, Any], key: str, source: str) -> list[str] | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        value = [part for part in re.split(r"[,\s]+", value) if part]
    if not isinstance(value, list):
        raise ConfigError(f"{source}: `{key}` must be a list of rule codes")
    return value


def config_from_table(table: Any, source: str) -> Config:
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: [tool.tfcoach] must be a table")
    unknown = sorted(set(table) - set(_KNOWN_KEYS))
    if unknown:
        raise ConfigError(
            f"{source}: unknown key(s) {', '.join(unknown)} in [tool.tfcoach] "
            f"(allowed: {', '.join(_KNOWN_KEYS)})"
        )
    base_url = table.get("course-base-url")
    if base_url is not None and not isinstance(base_url, str):
        raise ConfigError(f"{source}: `course-base-url` must be a string")
    try:
        base_url = checked_base_url(base_url, f"{source}: `course-base-url`")
    except InvalidBaseUrlError as error:
        raise ConfigError(str(error)) from None
    return Config.from_options(
        select=_code_list(table, "select", source),
        ignore=_code_list(table, "ignore", source),
        course_base_url=base_url,
        source=source,
    )


def _parse_toml(path: Path, text: str) -> dict[str, Any]:
    # Imported here, not at module level: only reading a pyproject.toml needs the
    # TOML parser, so importing the analysis API (editors, kernels) stays cheaper.
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from error


def _tfcoach_table(path: Path) -> Any:
    """The ``tool.tfcoach`` value of a pyproject.toml (None when absent), in any TOML
    spelling: ``[tool.tfcoach]``, ``[tool]`` + ``tfcoach = {...}``, dotted keys."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read: {error}") from error
    if "tfcoach" not in text:  # cheap skip for packaging-only pyproject files
        return None
    tool = _parse_toml(path, text).get("tool")
    return tool.get("tfcoach") if isinstance(tool, dict) else None


def _nearest_table(start_path: str | Path) -> tuple[Path, Any] | None:
    """The nearest ``pyproject.toml`` with a ``tool.tfcoach`` table, and that table."""
    start = Path(start_path).resolve()
    directory = start if start.is_dir() else start.parent
    for candidate_dir in (directory, *directory.parents):
        candidate = candidate_dir / "pyproject.toml"
        if candidate.is_file() and (table := _tfcoach_table(candidate)) is not None:
            return candidate, table
    return None


def find_pyproject(start_path: str | Path) -> Path | None:
    """The nearest ``pyproject.toml`` with a ``tool.tfcoach`` table, or None."""
    found = _nearest_table(start_path)
    return found[0] if found is not None else None


def load_config(start_path: str | Path = ".") -> Config:
    """Settings from the nearest ``pyproject.toml`` above ``start_path`` (file or folder)."""
    found = _nearest_table(start_path)  # one read of each file, not two
    if found is None:
        return Config()
    pyproject, table = found
    return config_from_table(table, str(pyproject))


# A bare "noqa" comment, or "noqa: TFC001, TFC002" (ruff/flake8 spelling, any case).
_NOQA = re.compile(r"#\s*noqa(?P<sep>\s*:\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.I)


def _comment_start(line: str) -> int:
    """Index of the ``#`` starting the line's comment, ignoring ``#`` in string literals."""
    quote: str | None = None
    index = 0
    while index < len(line):
        char = line[index]
        if quote:
            if char == "\\":
                index += 2
                continue
            if line.startswith(quote, index):
                index += len(quote)
                quote = None
                continue
        elif char == "#":
            return index
        elif char in "'\"":
            quote = line[index : index + 3] if line[index : index + 3] in ("'''", '"""') else char
            index += len(quote)
            continue
        index += 1
    return -1


def noqa_codes(line: str) -> frozenset[str] | None:
    """None: no noqa; empty set: bare ``# noqa`` (everything); else the codes listed."""
    if "noqa" not in line.lower():
        return None
    start = _comment_start(line)
    if start < 0:
        return None
    match = _NOQA.search(line, start)
    if match is None:
        return None
    codes = match.group("codes")
    if not codes:
        return frozenset()
    return frozenset(code.upper() for code in re.split(r"[\s,]+", codes) if code)


def is_suppressed(line: str, code: str) -> bool:
    codes = noqa_codes(line)
    return codes is not None and (not codes or code in codes)
