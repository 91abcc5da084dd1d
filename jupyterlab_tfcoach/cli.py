"""``tfcoach``: check files for TensorFlow pitfalls and read the rules' docs.

    tfcoach check PATH... [--format text|json|sarif] [--select CODES] [--ignore CODES]
    tfcoach rules
    tfcoach rule CODE

This module only adapts :mod:`jupyterlab_tfcoach.analysis` to a shell: it
finds the files, applies the configuration, and hands the findings to a
formatter in :mod:`jupyterlab_tfcoach.formats`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from jupyterlab_tfcoach import __version__
from jupyterlab_tfcoach.analysis import (
    RULES,
    AnalysisInputError,
    Config,
    ConfigError,
    Finding,
    Rule,
    analyze_path,
    load_config,
    rule_by_code,
)
from jupyterlab_tfcoach.analysis.config import normalize_codes
from jupyterlab_tfcoach.course import course_ref
from jupyterlab_tfcoach.formats import CheckResult, InputProblem, RuleDescription
from jupyterlab_tfcoach.formats.json_format import format_json
from jupyterlab_tfcoach.formats.sarif import format_sarif
from jupyterlab_tfcoach.formats.text import format_text

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2

CHECKED_SUFFIXES = (".py", ".ipynb")
# Besides every hidden directory (``.git``, ``.venv``, ``.ipynb_checkpoints``):
# environments and caches hold other people's code, not the user's.
SKIPPED_DIRECTORIES = frozenset({"node_modules", "__pycache__", "__pypackages__", "site-packages"})

FORMATTERS: dict[str, Callable[[CheckResult], str]] = {
    "text": format_text,
    "json": format_json,
    "sarif": format_sarif,
}

CHECK_EPILOG = """\
exit status:
  0  no findings
  1  findings were reported
  2  usage error, or some input could not be checked (missing path, file not
     UTF-8, invalid notebook JSON, syntax error). Each such input gets one line
     on stderr naming it; all other files are still checked and reported.
     An input error wins over findings: the exit status is 2 whenever one
     occurred, so a broken file is never mistaken for a clean run.

configuration:
  [tool.tfcoach] (select, ignore, course-base-url) is read from the nearest
  pyproject.toml above each checked file. --select and --ignore, when given,
  replace the file's lists; ignore wins over select. Codes may be prefixes
  (TFC00 selects TFC001-TFC009).

folders are searched recursively for .py and .ipynb files, skipping hidden
folders (.git, .venv, ...), node_modules, __pycache__, __pypackages__ and
site-packages. Files named explicitly are always checked.

notebooks: findings name the code cell (0-based, counting code cells only) and
count lines within that cell: notebook.ipynb:cell 2:3:5: ...
"""


def _code_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tfcoach",
        description="A TensorFlow coach: finds TensorFlow pitfalls and links each one to the "
        "course section that explains it.",
    )
    parser.add_argument("--version", action="version", version=f"tfcoach {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser(
        "check",
        help="check .py files, notebooks and folders",
        description="Check Python files, Jupyter notebooks and folders (recursively) for "
        "TensorFlow pitfalls.",
        epilog=CHECK_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("paths", nargs="+", metavar="PATH", help=".py file, .ipynb file or folder")
    check.add_argument(
        "--format",
        choices=tuple(FORMATTERS),
        default="text",
        help="output format (default: text)",
    )
    check.add_argument(
        "--select",
        type=_code_list,
        metavar="CODES",
        help="comma-separated rule codes or prefixes to enable (replaces the configuration's)",
    )
    check.add_argument(
        "--ignore",
        type=_code_list,
        metavar="CODES",
        help="comma-separated rule codes or prefixes to disable (replaces the configuration's)",
    )

    commands.add_parser(
        "rules",
        help="list the rules",
        description="List every rule: code, name, default severity and summary.",
    )
    rule = commands.add_parser(
        "rule",
        help="show one rule's documentation",
        description="Show one rule's documentation and its course section.",
    )
    rule.add_argument("code", metavar="CODE", help="rule code (TFC001) or name")
    return parser


# ---------------------------------------------------------------------------
# Rules


def describe_rule(rule: Rule) -> RuleDescription:
    """The registry's rule as the formatters see it."""
    return RuleDescription(
        code=rule.code,
        name=rule.name,
        severity=rule.severity,
        summary=rule.summary,
        docs=rule.docs,
        section_id=rule.section,
    )


def rule_descriptions() -> tuple[RuleDescription, ...]:
    return tuple(sorted((describe_rule(rule) for rule in RULES), key=lambda r: r.code))


def find_rule(code_or_name: str) -> RuleDescription | None:
    try:
        return describe_rule(rule_by_code(code_or_name))
    except KeyError:
        return None


# ---------------------------------------------------------------------------
# Finding the files


@dataclass(frozen=True)
class Target:
    """A file to check: ``display`` is the path as the user will read it."""

    display: str
    path: Path


def _walk_folder(folder: Path) -> Iterator[Path]:
    for directory, subdirectories, names in os.walk(folder):
        # Pruning in place stops os.walk from descending; sorting gives a stable order.
        subdirectories[:] = sorted(
            name
            for name in subdirectories
            if not name.startswith(".") and name not in SKIPPED_DIRECTORIES
        )
        for name in sorted(names):
            if name.endswith(CHECKED_SUFFIXES) and not name.startswith("."):
                yield Path(directory, name)


def discover(paths: Iterable[str]) -> tuple[list[Target], list[InputProblem]]:
    targets: list[Target] = []
    problems: list[InputProblem] = []
    seen: set[Path] = set()

    def add(path: Path) -> None:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            targets.append(Target(str(path), path))

    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for found in _walk_folder(path):
                add(found)
        elif path.is_file():
            add(path)
        elif path.exists():
            problems.append(InputProblem(raw, "not a regular file or folder"))
        else:
            problems.append(InputProblem(raw, "no such file or folder"))
    return targets, problems


# ---------------------------------------------------------------------------
# Checking


@dataclass(frozen=True)
class Overrides:
    select: list[str] | None
    ignore: list[str] | None

    def apply(self, config: Config) -> Config:
        return config.overridden(select=self.select, ignore=self.ignore)


class ConfigCache:
    """One ``load_config`` per folder: files in the same folder share a pyproject."""

    def __init__(self, overrides: Overrides) -> None:
        self._overrides = overrides
        self._by_folder: dict[Path, Config | ConfigError] = {}

    def for_file(self, path: Path) -> Config:
        folder = path.resolve().parent
        if folder not in self._by_folder:
            try:
                self._by_folder[folder] = self._overrides.apply(load_config(folder))
            except ConfigError as error:
                self._by_folder[folder] = error
        cached = self._by_folder[folder]
        if isinstance(cached, ConfigError):
            raise cached
        return cached


def check_targets(
    targets: Sequence[Target], configs: ConfigCache
) -> tuple[list[Finding], list[InputProblem], dict[str, str | None]]:
    findings: list[Finding] = []
    problems: list[InputProblem] = []
    base_urls: dict[str, str | None] = {}
    for target in targets:
        try:
            config = configs.for_file(target.path)
            file_findings = analyze_path(target.path, config)
        except ConfigError as error:
            # The message already names the pyproject.toml at fault.
            problems.append(InputProblem(target.display, f"configuration error: {error}"))
            continue
        except AnalysisInputError as error:
            problems.append(InputProblem(target.display, error.problem))
            # A notebook with one broken cell still has findings in the others.
            file_findings = error.findings
        except OSError as error:
            # Unreadable after discovery (permissions, removed meanwhile).
            problems.append(InputProblem(target.display, error.strerror or str(error)))
            continue
        base_urls[target.display] = config.course_base_url
        # analyze_path sorts by (cell, line, column, code); the path is shown as given.
        findings.extend(finding.with_location(path=target.display) for finding in file_findings)
    return findings, problems, base_urls


def _validated_codes(codes: list[str] | None, option: str) -> list[str] | None:
    if codes is not None:
        normalize_codes(codes, option)  # raises ConfigError naming the option
    return codes


def run_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        overrides = Overrides(
            select=_validated_codes(args.select, "--select"),
            ignore=_validated_codes(args.ignore, "--ignore"),
        )
    except ConfigError as error:
        print(f"tfcoach check: {error}", file=err)
        return EXIT_ERROR

    targets, problems = discover(args.paths)
    findings, check_problems, base_urls = check_targets(targets, ConfigCache(overrides))
    problems.extend(check_problems)
    for problem in problems:
        print(f"tfcoach: {problem}", file=err)

    result = CheckResult(
        findings=tuple(findings),
        files_examined=len(targets),
        problems=tuple(problems),
        rules=rule_descriptions(),
        course_base_urls=base_urls,
        # Rule descriptions (SARIF helpUri) are not tied to one file: use the
        # project the command runs in. A broken pyproject there was already
        # reported for the files it covers.
        default_course_base_url=_cwd_course_base_url(report_errors_to=None),
    )
    out.write(FORMATTERS[args.format](result))
    if problems:
        return EXIT_ERROR
    return EXIT_FINDINGS if findings else EXIT_CLEAN


def _cwd_course_base_url(report_errors_to: TextIO | None) -> str | None:
    try:
        return load_config(Path.cwd()).course_base_url
    except ConfigError as error:
        if report_errors_to is not None:
            print(f"tfcoach: {error}", file=report_errors_to)
        return None


def run_rules(out: TextIO) -> int:
    rules = rule_descriptions()
    rows = [(r.code, r.name, r.severity.value, r.summary) for r in rules]
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    for code, name, severity, summary in rows:
        out.write(f"{code:<{widths[0]}}  {name:<{widths[1]}}  {severity:<{widths[2]}}  {summary}\n")
    return EXIT_CLEAN


def run_rule(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    rule = find_rule(args.code)
    if rule is None:
        print(f"tfcoach rule: unknown rule {args.code!r} (`tfcoach rules` lists them)", file=err)
        return EXIT_ERROR
    course = course_ref(rule.section_id, _cwd_course_base_url(report_errors_to=err))
    out.write(f"{rule.code} {rule.name} (default severity: {rule.severity.value})\n\n")
    out.write(rule.docs.strip() + "\n\n")
    out.write(f"Course: {course['title']} ({course['module']})\n{course['url']}\n")
    return EXIT_CLEAN


# ---------------------------------------------------------------------------
# Entry point


def _prepare_stream(stream: TextIO, utf8: bool) -> None:
    # JSON and SARIF are UTF-8 by definition; text follows the terminal but must
    # not crash on a message quoting non-ASCII source under a C locale.
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is None:
        return
    if utf8:
        reconfigure(encoding="utf-8")
    else:
        reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    out, err = sys.stdout, sys.stderr
    _prepare_stream(out, utf8=getattr(args, "format", "text") != "text")
    _prepare_stream(err, utf8=False)
    try:
        if args.command == "check":
            return run_check(args, out, err)
        if args.command == "rules":
            return run_rules(out)
        if args.command == "rule":
            return run_rule(args, out, err)
        parser.print_help(err)
        return EXIT_ERROR
    except BrokenPipeError:
        # `tfcoach check . | head`: the reader left; exit quietly like other tools.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
