"""``tfcoach``: check files for TensorFlow pitfalls and read the rules' docs.

    tfcoach check PATH... [--format text|json|sarif] [--select CODES] [--ignore CODES]
                          [--no-cache] [--jobs N] [--max-file-size MB] [--verbose]
    tfcoach rules
    tfcoach rule CODE

This module only adapts :mod:`jupyterlab_tfcoach.analysis` to a shell: it
finds the files, applies the configuration, reuses cached results
(:mod:`jupyterlab_tfcoach.cache`), analyses the others (in a pool of processes
when there are many), and hands the findings to a formatter in
:mod:`jupyterlab_tfcoach.formats`. Formatters are imported only when used, and
nothing here imports nbformat: ``tfcoach check one.ipynb`` starts in about the
time of Python itself plus the analysis modules.
"""

from __future__ import annotations

import argparse
import errno
import os
import stat
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from jupyterlab_tfcoach._version import __version__
from jupyterlab_tfcoach.analysis import (
    RULES,
    Config,
    ConfigError,
    Finding,
    Rule,
    rule_by_code,
)
from jupyterlab_tfcoach.analysis.configuration import (
    Configuration,
    Overrides,
    RawOverrides,
    configuration_for,
    read_overrides,
)
from jupyterlab_tfcoach.analysis.project_config import ConfigResolver
from jupyterlab_tfcoach.cache import (
    CacheDirRefused,
    FileResult,
    ResultCache,
    analyze_file,
    content_key,
    default_cache_dir,
)
from jupyterlab_tfcoach.course import course_ref
from jupyterlab_tfcoach.formats import CheckResult, InputProblem, RuleDescription, plural

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2

CHECKED_SUFFIXES = (".py", ".ipynb")
# Besides every hidden directory (``.git``, ``.venv``, ``.ipynb_checkpoints``):
# environments and caches hold other people's code, not the user's.
SKIPPED_DIRECTORIES = frozenset({"node_modules", "__pycache__", "__pypackages__", "site-packages"})

# A larger file is reported, not read: generated code or a notebook full of outputs, whose
# analysis would take minutes and gigabytes (a 5,000-line module is about 200 kB).
DEFAULT_MAX_FILE_MB = 20.0
# Below this many files to analyse, starting worker processes costs more than it saves.
POOL_MIN_FILES = 16

FORMAT_NAMES = ("text", "json", "sarif")

CHECK_EPILOG = """\
exit status:
  0  no findings
  1  findings were reported
  2  usage error, or some input could not be checked (missing path, file not
     UTF-8, invalid notebook JSON, syntax error, symlink loop, folder that
     cannot be read, file above --max-file-size). Each such input gets one
     line on stderr naming it; all other files are still checked and reported.
     An input error wins over findings: the exit status is 2 whenever one
     occurred, so a broken file is never mistaken for a clean run.

configuration:
  [tool.tfcoach] (select, ignore, course-base-url) is read from the nearest
  pyproject.toml above each checked file. --select and --ignore, when given,
  replace the file's lists; ignore wins over select. Codes may be prefixes
  (TFC00 selects TFC001-TFC009).

folders are searched recursively for .py and .ipynb files, skipping hidden
folders (.git, .venv, ...), node_modules, __pycache__, __pypackages__ and
site-packages; links to folders are not followed. A FIFO, socket or device
with such a name is skipped with a note on stderr. Files named explicitly are
always checked.

cache: results are kept in .tfcoach_cache in the project root (the nearest
folder with a pyproject.toml at or above the current one, else the current
one; it holds a .gitignore of *, so it is never committed) and reused while
the file, the rules its configuration enables and tfcoach are unchanged.
--no-cache neither reads nor writes it; --cache-dir or TFCOACH_CACHE_DIR put
it elsewhere. Concurrent runs share it safely. tfcoach uses only a cache folder
that it created (tagged with its CACHEDIR.TAG), a new one or an empty one: a
folder that is a symbolic link, or is not empty and not tfcoach's, is refused
(exit status 2, nothing checked), and the cache only ever deletes entries it
wrote.

notebooks: findings name the code cell (counted from 1, code cells only; the
JSON "cell" is the 0-based index) and count lines within that cell:
notebook.ipynb:code cell 3:3:5: ...
"""


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 (one per core) or more")
    return value


def _megabytes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError("must be above 0")
    return value


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
        choices=FORMAT_NAMES,
        default="text",
        help="output format (default: text)",
    )
    check.add_argument(
        "--select",
        metavar="CODES",
        help="comma-separated rule codes or prefixes to enable (replaces the configuration's)",
    )
    check.add_argument(
        "--ignore",
        metavar="CODES",
        help="comma-separated rule codes or prefixes to disable (replaces the configuration's)",
    )
    check.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the result cache",
    )
    check.add_argument(
        "--cache-dir",
        type=Path,
        metavar="DIR",
        help="result cache folder (default: $TFCOACH_CACHE_DIR, else .tfcoach_cache in the "
        "project root)",
    )
    check.add_argument(
        "-j",
        "--jobs",
        type=_jobs,
        default=0,
        metavar="N",
        help=f"processes analysing files when at least {POOL_MIN_FILES} need it "
        "(default 0: one per available core; 1: no pool)",
    )
    check.add_argument(
        "--max-file-size",
        type=_megabytes,
        default=DEFAULT_MAX_FILE_MB,
        metavar="MB",
        help="files larger than this are reported as input errors, not read "
        f"(default: {DEFAULT_MAX_FILE_MB:g} MB)",
    )
    check.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also print on stderr how many results came from the cache",
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


def formatter(name: str) -> Callable[[CheckResult], str]:
    """The output format ``name``, imported on first use (each costs start-up time)."""
    if name == "json":
        from jupyterlab_tfcoach.formats.json_format import format_json

        return format_json
    if name == "sarif":
        from jupyterlab_tfcoach.formats.sarif import format_sarif

        return format_sarif
    from jupyterlab_tfcoach.formats.text import format_text

    return format_text


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


@dataclass
class Discovery:
    """What a walk found: files to check, input errors, and notes (skipped special files)."""

    targets: list[Target] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    _seen: set[object] = field(default_factory=set)

    def add(self, path: Path, info: os.stat_result) -> None:
        # One file named twice, or through a link, is checked once. Some network file
        # systems report no inode numbers: there the resolved path tells.
        key = (info.st_dev, info.st_ino) if info.st_ino else os.path.realpath(path)
        if key not in self._seen:
            self._seen.add(key)
            self.targets.append(Target(str(path), path))


def _special_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"


def _stat_problem(error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "symlink loop (too many levels of symbolic links)"
    if error.errno in (errno.ENOENT, errno.ENOTDIR):
        return "no such file or folder"
    return f"cannot read: {error.strerror or error}"


def _walk_folder(folder: Path, found: Discovery) -> None:
    """Depth first, names sorted, files of a folder before its subfolders (as ``os.walk``).

    Symbolic links to folders are not followed (no cycles, no escaping the tree); links to
    files are checked like files. A link loop is an input error, as is a folder that
    cannot be listed; a FIFO, socket or device with a checked suffix is skipped with a
    note: opening a FIFO would wait for a writer forever.
    """
    pending = [folder]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError as error:
            found.problems.append(
                InputProblem(str(directory), f"cannot read folder: {error.strerror or error}")
            )
            continue
        subfolders: list[Path] = []
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            path = directory / name
            checked = name.endswith(CHECKED_SUFFIXES)
            try:
                if entry.is_dir(follow_symlinks=False):
                    if name not in SKIPPED_DIRECTORIES:
                        subfolders.append(path)
                    continue
                if not checked and not entry.is_symlink():
                    continue
                info = os.stat(path)  # follows a link: its loop or dangling end shows here
            except OSError as error:
                if error.errno == errno.ELOOP or checked:
                    found.problems.append(InputProblem(str(path), _stat_problem(error)))
                continue
            if not checked or stat.S_ISDIR(info.st_mode):
                continue  # a link to a folder: not followed
            if stat.S_ISREG(info.st_mode):
                found.add(path, info)
            else:
                found.notes.append(f"{path}: skipped, {_special_kind(info.st_mode)}")
        pending.extend(reversed(subfolders))


def discover(paths: Iterable[str]) -> Discovery:
    found = Discovery()
    for raw in paths:
        path = Path(raw)
        try:
            info = os.stat(path)
        except OSError as error:
            found.problems.append(InputProblem(raw, _stat_problem(error)))
            continue
        if stat.S_ISDIR(info.st_mode):
            _walk_folder(path, found)
        elif stat.S_ISREG(info.st_mode):
            found.add(path, info)
        else:
            # Named explicitly, it was meant to be checked: an input error, not a note.
            kind = _special_kind(info.st_mode)
            found.problems.append(InputProblem(raw, f"not a regular file or folder ({kind})"))
    return found


# ---------------------------------------------------------------------------
# Checking


class ConfigCache:
    """Each file's configuration for this run: the core's one configuration path
    (``configuration_for``: the resolver reads each ``pyproject.toml`` once), with the
    command line's overrides on top. Asked once per folder: files in the same folder
    share a pyproject."""

    def __init__(self, overrides: Overrides, resolver: ConfigResolver | None = None) -> None:
        self._overrides = overrides
        self._resolver = resolver
        self._by_folder: dict[str, Configuration] = {}
        self._enabled: dict[Config, tuple[str, ...]] = {}

    def for_file(self, path: Path) -> Config:
        """``ConfigError`` when the project's configuration cannot be used: unlike the
        servers, the CLI does not check such a file with the defaults (an input error)."""
        # A linked file takes the configuration of the folder it really is in.
        real = os.path.realpath(path) if os.path.islink(path) else os.path.abspath(path)
        folder = os.path.dirname(real)
        if folder not in self._by_folder:
            self._by_folder[folder] = configuration_for(
                Path(folder), None, self._overrides, self._resolver
            )
        configuration = self._by_folder[folder]
        if configuration.file_problem is not None:
            raise ConfigError(configuration.file_problem.detail)
        return configuration.config

    def enabled_rules(self, config: Config) -> tuple[str, ...]:
        """The rules that run under ``config``: the part of it a cached result depends on."""
        if config not in self._enabled:
            self._enabled[config] = tuple(r.code for r in RULES if config.is_enabled(r.code))
        return self._enabled[config]


class NotRead(Exception):
    """A found file that is not read: too large, or no longer a regular file."""


def _open_checked(path: Path, max_bytes: int, read: bool) -> tuple[bytes, os.stat_result]:
    """The file's bytes (``b""`` unless ``read``) and its status, taken on the open file.

    Opened non-blocking, so a file replaced by a FIFO since the walk cannot hang the run,
    and checked through the descriptor, so what is checked is what is read.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    descriptor = os.open(path, flags)
    with open(descriptor, "rb") as stream:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise NotRead(f"skipped, {_special_kind(info.st_mode)}")
        if info.st_size > max_bytes:
            raise NotRead(
                f"{_size(info.st_size)}, above the {max_bytes / 1e6:g} MB limit "
                "(--max-file-size): not read"
            )
        return (stream.read() if read else b""), info


def _size(count: int) -> str:
    return f"{count / 1e6:.1f} MB" if count >= 100_000 else f"{count / 1e3:.1f} kB"


def _unchanged(path: Path, before: os.stat_result) -> bool:
    try:
        after = os.stat(path)
    except OSError:
        return False
    return (after.st_size, after.st_mtime_ns, after.st_ino, after.st_dev) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
        before.st_dev,
    )


def available_cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def analyze_files(
    jobs: Sequence[tuple[Path, Config]], workers: int
) -> tuple[list[FileResult], int]:
    """Each file's result, in order, and how many processes computed them (1: this one)."""
    workers = min(workers, len(jobs))
    if workers > 1 and len(jobs) >= POOL_MIN_FILES:
        # Imported here: a run on a few files never pays for multiprocessing.
        from concurrent.futures import BrokenExecutor, ProcessPoolExecutor

        paths = [path for path, _ in jobs]
        configs = [config for _, config in jobs]
        try:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                # Chunks amortise the pickling; four per worker still balance the load.
                chunk = max(1, len(jobs) // (workers * 4))
                return list(pool.map(analyze_file, paths, configs, chunksize=chunk)), workers
        except (OSError, NotImplementedError, BrokenExecutor):
            pass  # no semaphores or fork here, or a worker died: do it in this process
    return [analyze_file(path, config) for path, config in jobs], 1


@dataclass
class Checked:
    findings: list[Finding] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    base_urls: dict[str, str | None] = field(default_factory=dict)
    examined: int = 0
    from_cache: int = 0
    analysed: int = 0
    processes: int = 1


@dataclass
class _Pending:
    index: int
    target: Target
    config: Config
    key: str | None
    before: os.stat_result


def check_targets(
    targets: Sequence[Target],
    configs: ConfigCache,
    cache: ResultCache | None = None,
    workers: int = 1,
    max_bytes: int = int(DEFAULT_MAX_FILE_MB * 1e6),
) -> Checked:
    checked = Checked()
    results: list[FileResult | InputProblem | None] = [None] * len(targets)
    file_configs: list[Config | None] = [None] * len(targets)
    pending: list[_Pending] = []
    for index, target in enumerate(targets):
        try:
            config = configs.for_file(target.path)
            data, info = _open_checked(target.path, max_bytes, read=cache is not None)
        except ConfigError as error:
            # The message already names the pyproject.toml at fault.
            results[index] = InputProblem(target.display, f"configuration error: {error}")
            checked.examined += 1
            continue
        except NotRead as reason:
            results[index] = InputProblem(target.display, str(reason))
            continue
        except OSError as error:
            # Unreadable after discovery (permissions, removed meanwhile).
            results[index] = InputProblem(target.display, _stat_problem(error))
            checked.examined += 1
            continue
        checked.examined += 1
        file_configs[index] = config
        key = None
        if cache is not None:
            kind = target.path.suffix.lower()
            key = content_key(data, kind, configs.enabled_rules(config))
            hit = cache.get(target.path, key, target.display)
            if hit is not None:
                results[index] = hit
                checked.from_cache += 1
                continue
        pending.append(_Pending(index, target, config, key, info))

    analysed, checked.processes = analyze_files(
        [(item.target.path, item.config) for item in pending], workers
    )
    checked.analysed = len(analysed)
    for item, result in zip(pending, analysed, strict=True):
        results[item.index] = result
        # A file edited while it was analysed: its result may belong to neither version.
        if cache is not None and item.key is not None and _unchanged(item.target.path, item.before):
            cache.put(item.target.path, item.key, result)

    for target, config, result in zip(targets, file_configs, results, strict=True):
        if isinstance(result, InputProblem):
            checked.problems.append(result)
            continue
        assert result is not None and config is not None
        if result.problem is not None:
            checked.problems.append(InputProblem(target.display, result.problem))
        checked.base_urls[target.display] = config.course_base_url
        # analyze_path sorts by (cell, line, column, code) and names the file as given.
        checked.findings.extend(
            f if f.path == target.display else f.with_location(path=target.display)
            for f in result.findings
        )
    return checked


def _open_cache(args: argparse.Namespace) -> ResultCache | None:
    """This run's result cache, or None; :class:`CacheDirRefused` when its folder is a
    link, or is not empty and not tfcoach's (the cache would write, and prune, there)."""
    if args.no_cache:
        return None
    if args.cache_dir is not None:
        return ResultCache(args.cache_dir)
    try:
        cwd = Path.cwd()
    except OSError:
        return None  # the working folder was deleted: no project root to keep a cache in
    return ResultCache(default_cache_dir(cwd))


def run_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    # --select/--ignore (comma-separated), read as every front end's lists are; a bad
    # code is a usage error (the first problem names the option), not left out.
    overrides, bad_codes = read_overrides(
        RawOverrides({"select": args.select, "ignore": args.ignore}, name="--{key}")
    )
    if bad_codes:
        print(f"tfcoach check: {bad_codes[0]}", file=err)
        return EXIT_ERROR

    try:
        cache = _open_cache(args)
    except CacheDirRefused as error:
        # Before anything is checked, like any usage error: a run quietly without the
        # cache would leave the folder's problem unseen; the user picks another or --no-cache.
        print(f"tfcoach check: {error}", file=err)
        return EXIT_ERROR
    found = discover(args.paths)
    for note in found.notes:
        print(f"tfcoach: note: {note}", file=err)
    checked = check_targets(
        found.targets,
        ConfigCache(overrides),
        cache,
        workers=args.jobs or available_cores(),
        max_bytes=int(args.max_file_size * 1e6),
    )
    problems = found.problems + checked.problems
    for problem in problems:
        print(f"tfcoach: {problem}", file=err)
    if args.verbose:
        where = "no cache" if cache is None else f"cache {cache.root}"
        if cache is not None and not cache.writable:
            where += " (not writable: results not kept)"
        pool = f" in {checked.processes} processes" if checked.processes > 1 else ""
        print(
            f"tfcoach: {plural(checked.examined, 'file')}: {checked.from_cache} from the cache, "
            f"{checked.analysed} analysed{pool}; {where}",
            file=err,
        )

    result = CheckResult(
        findings=tuple(checked.findings),
        files_examined=checked.examined,
        problems=tuple(problems),
        rules=rule_descriptions(),
        course_base_urls=checked.base_urls,
        # Rule descriptions (SARIF helpUri) are not tied to one file: use the
        # project the command runs in. A broken pyproject there was already
        # reported for the files it covers.
        default_course_base_url=_cwd_course_base_url(report_errors_to=None),
    )
    out.write(formatter(args.format)(result))
    if problems:
        return EXIT_ERROR
    return EXIT_FINDINGS if checked.findings else EXIT_CLEAN


def _cwd_course_base_url(report_errors_to: TextIO | None) -> str | None:
    """The course base URL of the project the command runs in (the defaults' when its
    configuration cannot be used: said on ``report_errors_to`` when given)."""
    configuration = configuration_for(Path.cwd())
    if configuration.file_problem is not None and report_errors_to is not None:
        print(f"tfcoach: {configuration.file_problem.detail}", file=report_errors_to)
    return configuration.config.course_base_url


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
