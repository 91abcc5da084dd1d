"""Which rules run and where course links point: the ``Config`` every front end
hands to the analysis, and the one reader of rule-code lists.

Where a ``Config`` comes from (``[tool.tfcoach]`` in the nearest
``pyproject.toml``, read once per version of the file) is
:mod:`jupyterlab_tfcoach.analysis.project_config`; ``# noqa`` comments are
:mod:`jupyterlab_tfcoach.analysis.noqa`.

Rule-code lists (``select``/``ignore`` in ``[tool.tfcoach]``, ``--select``/``--ignore``,
the editors' and JupyterLab's settings) are all read by :func:`parse_codes`: a list of
strings, or one string of codes separated by commas or spaces; each code is
upper-cased and must be a known code (``TFC001``) or a prefix of one (``TFC00``,
``TFC``). ``ignore`` wins over ``select``; a list given by a front end replaces
the file's (:meth:`Config.overridden`).

Messages about a ``pyproject.toml`` name the file and the key, not the file's text:
a value is quoted only when it is a short word of letters and digits (what a
mistyped rule code looks like, ``NOPE42``), never a base URL or a longer string (a
misplaced secret must not reach a notification, a log or a REST answer).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from jupyterlab_tfcoach.course import InvalidBaseUrlError, checked_base_url

CODE_PATTERN = re.compile(r"^[A-Z]+[0-9]*$")
_SEPARATORS = re.compile(r"[,\s]+")
_KNOWN_KEYS = ("select", "ignore", "course-base-url")
# A file's value quoted in a message: a short word (a mistyped code), nothing longer.
_QUOTABLE = re.compile(r"^[A-Za-z0-9]{1,16}$")
_SHOWN_KEYS = 5  # unknown keys named in a message, each cut to _SHOWN_KEY_CHARS
_SHOWN_KEY_CHARS = 40


class ConfigError(ValueError):
    """An invalid ``[tool.tfcoach]`` table or option; the one-line message names the
    source (the ``pyproject.toml``, or the option).

    ``version`` identifies the version of the file at fault (path, mtime, size,
    inode) when it came from one, so a front end can report each broken version once.
    """

    def __init__(self, message: str, version: tuple[object, ...] | None = None) -> None:
        super().__init__(" ".join(message.split("\n")))
        self.version = version


def _known_codes() -> tuple[str, ...]:
    from jupyterlab_tfcoach.analysis.rules import RULES

    return tuple(rule.code for rule in RULES)


@dataclass(frozen=True)
class ParsedCodes:
    """A rule-code list as read: ``codes`` None when it was not given (or not a list),
    ``problems`` one message per value left out."""

    codes: tuple[str, ...] | None
    problems: tuple[str, ...] = field(default=())


def parse_codes(value: Any, where: str, from_file: bool = False) -> ParsedCodes:
    """Read a rule-code list; ``where`` names it in messages (``--select``,
    ``/p/pyproject.toml: `ignore```, ``tfcoach.select``). Never raises: bad entries
    are left out and described in ``problems`` (see :func:`normalize_codes`).
    ``from_file``: the list comes from a file, whose text messages quote only when
    it is a short word."""
    if value is None:
        return ParsedCodes(None)
    if isinstance(value, str):
        value = [part for part in _SEPARATORS.split(value) if part]
    if not isinstance(value, list | tuple) or not all(isinstance(code, str) for code in value):
        return ParsedCodes(None, (f"{where}: must be a list of rule codes like TFC001",))
    known = _known_codes()
    codes: list[str] = []
    problems: list[str] = []
    for raw in value:
        code = raw.strip().upper()
        if not code:
            continue
        if CODE_PATTERN.match(code) and any(k.startswith(code) for k in known):
            if code not in codes:
                codes.append(code)
        else:
            shown = repr(raw) if not from_file or _QUOTABLE.match(raw.strip()) else ""
            problems.append(
                f"{where}: unknown rule code{' ' if shown else ''}{shown} "
                f"(known: {known[0]}..{known[-1]}, or a prefix such as TFC00)"
            )
    return ParsedCodes(tuple(codes), tuple(problems))


def normalize_codes(codes: Any, where: str) -> frozenset[str]:
    """The codes of a list that must be valid: a ``ConfigError`` for the first problem."""
    if isinstance(codes, Iterable) and not isinstance(codes, str | list | tuple):
        codes = list(codes)  # a generator, a set: read once, as a list
    parsed = parse_codes(codes, where)
    if parsed.problems:
        raise ConfigError(parsed.problems[0])
    return frozenset(parsed.codes or ())


def is_known_code(code: str) -> bool:
    """A rule code or prefix the analysis accepts (``TFC001``, ``TFC00``)."""
    return not parse_codes([code], "code").problems and bool(code.strip())


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


def _table_codes(table: dict[str, Any], key: str, source: str) -> frozenset[str] | None:
    parsed = parse_codes(table.get(key), f"{source}: `{key}`", from_file=True)
    if parsed.problems:
        raise ConfigError(parsed.problems[0])
    return None if parsed.codes is None else frozenset(parsed.codes)


def config_from_table(table: Any, source: str) -> Config:
    """The ``Config`` of a ``[tool.tfcoach]`` table read from ``source`` (for messages)."""
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: [tool.tfcoach] must be a table")
    unknown = sorted(set(table) - set(_KNOWN_KEYS))
    if unknown:
        shown = [_shown_key(key) for key in unknown[:_SHOWN_KEYS]]
        if len(unknown) > _SHOWN_KEYS:
            shown.append(f"and {len(unknown) - _SHOWN_KEYS} more")
        raise ConfigError(
            f"{source}: unknown key(s) {', '.join(shown)} in [tool.tfcoach] "
            f"(allowed: {', '.join(_KNOWN_KEYS)})"
        )
    base_url = table.get("course-base-url")
    if base_url is not None and not isinstance(base_url, str):
        raise ConfigError(f"{source}: `course-base-url` must be a string")
    try:
        base_url = checked_base_url(base_url)
    except InvalidBaseUrlError:
        # The checker's message quotes the URL: say what is wrong without it.
        raise ConfigError(
            f"{source}: `course-base-url` must be an http:// or https:// URL with a host "
            "and without spaces, quotes, angle brackets or backslashes (or empty for the "
            "packaged course)"
        ) from None
    return Config(
        select=_table_codes(table, "select", source),
        ignore=_table_codes(table, "ignore", source) or frozenset(),
        course_base_url=base_url or None,
        source=source,
    )


def _shown_key(key: str) -> str:
    """A key of the file as a message names it: cut short, on one line."""
    one_line = " ".join(str(key).split())
    if len(one_line) > _SHOWN_KEY_CHARS:
        return one_line[: _SHOWN_KEY_CHARS - 3] + "..."
    return one_line
