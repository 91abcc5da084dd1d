"""The coach feeds the study deck: a pitfall found in the learner's own code makes the
cards of its course section due, with the place it was met (``store.mark_met``).

Two sources, both already on the server (nothing leaves it):

* a kernel report (``ReportHub``, once its session path is known): every entry that coaches
  (an explained error, a variable entry, a trace with a retrace or a tip, a coaching note)
  names a course section; the cell is the 0-based code-cell index of the report's
  ``cell_id`` in the notebook file as saved (``None`` when the file, or the cell in it, is
  not found), the line unknown;
* the static findings of ``POST tfcoach/api/analyze`` for a notebook or file ``path``: each
  finding's section, with its cell and line.

The terms of a section are ``course.terms.terms_for_section``. What is recorded is bounded:
a term met again in the same source and cell within ``MET_AGAIN_AFTER_S`` is not recorded
again, whichever of the two found it (the analysis runs on every pause in typing, the same
cell may run in a loop, the rules and the monitor often see one pitfall both), at most
``MAX_REMEMBERED`` places are remembered for that, and at most ``MAX_IN_FLIGHT`` batches
wait for the store (more are dropped, with a debug line).

The store is synchronous SQLite: each batch runs in a thread of the server's executor, as
the study routes' calls do, never on the event loop. Whatever fails there (the store, the
notebook file) is caught and logged: report delivery and the analysis answer never wait for
it nor see its errors.

Opt-out, in two places (``docs/configuration.md``): ``c.TfCoach.study_from_findings = False``
turns it off for the server, whatever the learner chose; JupyterLab's setting
``studyFromFindings`` turns it off for the learner. JupyterLab keeps user settings on the
server (``<user settings dir>/jupyterlab_tfcoach/plugin.jupyterlab-settings``, JSON5), so the
feed reads the learner's choice there, in its thread, re-read only when the file changes: it
holds for kernels run without any page open too, and survives restarts.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyterlab_tfcoach.course.terms import terms_for_section
from jupyterlab_tfcoach.study import StudyStore

MET_AGAIN_AFTER_S = 600.0
MAX_REMEMBERED = 4096
MAX_IN_FLIGHT = 16
NOTEBOOK_VERSIONS_KEPT = 8  # notebooks whose cell indexes are kept (newest versions)
MAX_NOTEBOOK_BYTES = 32 * 1024 * 1024
LAB_PLUGIN_SETTINGS = Path("jupyterlab_tfcoach") / "plugin.jupyterlab-settings"
LAB_SETTING = "studyFromFindings"
# The counts a trace reason gives (docs/report.md): only these are pitfalls.
_PITFALL_REASONS = frozenset({"retrace", "tip"})
_FIRST_TRACE = "first_trace"


@dataclass(frozen=True)
class Place:
    """Where a section's pitfall was met: ``cell_key`` tells places apart (the code-cell
    index; for a kernel report's cell not found in the saved notebook, its cell id),
    ``cell`` and ``line`` are stored."""

    section: str
    cell_key: str | int | None
    cell: int | None = None
    line: int | None = None


def report_sections(report: dict[str, Any]) -> list[str]:
    """The course sections of the entries of a report that coach, each once, in order."""
    found: list[str] = []
    for trace in report.get("traces") or []:
        if isinstance(trace, dict) and _trace_coaches(trace):
            found.append(_section(trace))
    for variable in report.get("variables") or []:
        if isinstance(variable, dict):
            found.append(_section(variable))
    error = report.get("error")
    if isinstance(error, dict):
        found.append(_section(error))
    for note in report.get("notes") or []:
        if isinstance(note, dict) and note.get("kind", "coaching") == "coaching":
            found.append(_section(note))
    return list(dict.fromkeys(section for section in found if section))


def _trace_coaches(trace: dict[str, Any]) -> bool:
    reasons = [r for r in trace.get("reasons") or [] if isinstance(r, dict)]
    if not reasons:
        retraces = trace.get("retraces")
        return isinstance(retraces, int) and retraces > 0
    for reason in reasons:
        counts_as = reason.get("counts_as")
        if counts_as in _PITFALL_REASONS:
            return True
        if counts_as is None and reason.get("kind") != _FIRST_TRACE:
            return True  # an older monitor: the kind says it
    return False


def _section(entry: dict[str, Any]) -> str:
    course = entry.get("course")
    section = course.get("section") if isinstance(course, dict) else None
    return section if isinstance(section, str) else ""


def finding_places(answer: dict[str, Any]) -> list[Place]:
    """Each finding of an analyze answer as the place its section was met."""
    places: list[Place] = []
    for finding in answer.get("findings") or []:
        if not isinstance(finding, dict):
            continue
        section = _section(finding)
        cell, line = finding.get("cell"), finding.get("line")
        cell = cell if isinstance(cell, int) and cell >= 0 else None
        line = line if isinstance(line, int) and line >= 1 else None
        if section:
            places.append(Place(section, cell, cell, line))
    return places


def code_cell_indexes(notebook_file: Path) -> dict[str, int]:
    """Each code cell's id in a saved notebook -> its 0-based code-cell index."""
    if os.path.getsize(notebook_file) > MAX_NOTEBOOK_BYTES:
        return {}
    with open(notebook_file, encoding="utf-8") as handle:
        notebook = json.load(handle)
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    code_cells = [
        cell
        for cell in (cells if isinstance(cells, list) else [])
        if isinstance(cell, dict) and cell.get("cell_type") == "code"
    ]
    return {
        cell["id"]: index
        for index, cell in enumerate(code_cells)
        if isinstance(cell.get("id"), str)
    }


@dataclass
class LabPreference:
    """The learner's ``studyFromFindings`` in JupyterLab's settings file (True when unset),
    read again only when the file's modification time or size changes."""

    settings_dir: Callable[[], str | None]
    log: logging.Logger | logging.LoggerAdapter[Any]
    _seen: tuple[str, int, int] | None = None
    _value: bool = True
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def enabled(self) -> bool:
        folder = self.settings_dir()
        if not folder:
            return True
        path = Path(folder) / LAB_PLUGIN_SETTINGS
        try:
            stat = os.stat(path)
        except OSError:
            return True  # no settings saved: the schema's default
        seen = (str(path), stat.st_mtime_ns, stat.st_size)
        with self._lock:
            if seen != self._seen:
                self._value = self._read(path)
                self._seen = seen
            return self._value

    def _read(self, path: Path) -> bool:
        try:
            import json5

            settings = json5.loads(path.read_text(encoding="utf-8"))
        except Exception as error:  # JupyterLab refuses such a file too: its default holds
            self.log.warning("tfcoach: cannot read JupyterLab's settings %s: %s", path, error)
            return True
        value = settings.get(LAB_SETTING, True) if isinstance(settings, dict) else True
        return value is not False


@dataclass
class StudyFeed:
    """Records the terms of pitfalls met in the learner's code (see the module docstring)."""

    store: StudyStore
    preference: LabPreference
    root_dir: Callable[[], str | None]
    log: logging.Logger | logging.LoggerAdapter[Any]
    enabled: bool = True
    clock: Callable[[], float] = time.monotonic
    _recorded: OrderedDict[tuple[str, str, str | int | None], float] = field(
        default_factory=OrderedDict
    )
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _in_flight: int = 0
    # A cell that retraces in a loop reports after every run: the saved notebook's cell
    # indexes are read once per version of the file (path, mtime, size), not per report.
    _indexes: OrderedDict[tuple[Path, int, int], dict[str, int]] = field(
        default_factory=OrderedDict
    )
    # Test hook: each batch's future, once scheduled.
    batches: list[asyncio.Future[int]] | None = None

    def from_report(self, report: dict[str, Any], path: str | None) -> None:
        """A kernel report stored for the notebook at ``path`` (on the event loop)."""
        if not self.enabled or not path:
            return
        sections = report_sections(report)
        if sections:
            cell_id = report.get("cell_id")
            self._schedule(self._record_report, sections, cell_id, path)

    def from_analysis(self, answer_json: str, path: str | None) -> None:
        """The analyze route's answer for the notebook or file at ``path`` (on the loop)."""
        # Most analyses find nothing: no thread for them (the route writes ``"findings": []``).
        if self.enabled and path and '"findings": []' not in answer_json:
            self._schedule(self._record_analysis, answer_json, path)

    # ------------------------------------------------------------------ in a thread

    def _schedule(self, work: Callable[..., int], *args: Any) -> None:
        if self._in_flight >= MAX_IN_FLIGHT:
            self.log.debug("tfcoach: study store behind, a batch of met terms dropped")
            return
        self._in_flight += 1
        future = asyncio.get_running_loop().run_in_executor(None, self._guarded, work, *args)
        future.add_done_callback(self._done)
        if self.batches is not None:
            self.batches.append(future)

    def _done(self, _future: asyncio.Future[int]) -> None:
        self._in_flight -= 1

    def _guarded(self, work: Callable[..., int], *args: Any) -> int:
        try:
            if not self.preference.enabled():
                return 0
            return work(*args)
        except Exception as error:
            self.log.warning("tfcoach: could not record a term met in code: %s", error)
            return 0

    def _record_report(self, sections: list[str], cell_id: Any, path: str) -> int:
        if not any(terms_for_section(section) for section in sections):
            return 0
        known_id = cell_id if isinstance(cell_id, str) and cell_id else None
        cell = self._cell_index(path, known_id) if known_id is not None else None
        # Keyed as findings are (the code-cell index) when the saved notebook has the cell:
        # the static rules and the monitor meeting one pitfall in one cell count once.
        key: str | int | None = cell if cell is not None else known_id
        fresh = self._fresh([Place(section, key, cell) for section in sections], path)
        return self._write(path, [(term, place.cell, None) for term, place in fresh])

    def _record_analysis(self, answer_json: str, path: str) -> int:
        places = finding_places(json.loads(answer_json))
        fresh = self._fresh(places, path)
        return self._write(path, [(term, place.cell, place.line) for term, place in fresh])

    def _fresh(self, places: Iterable[Place], source: str) -> list[tuple[str, Place]]:
        """The (term, place) pairs not recorded within ``MET_AGAIN_AFTER_S``; remembered."""
        now = self.clock()
        fresh: list[tuple[str, Place]] = []
        with self._lock:
            for place in places:
                for term in terms_for_section(place.section):
                    key = (term.id, source, place.cell_key)
                    last = self._recorded.get(key)
                    if last is not None and now - last < MET_AGAIN_AFTER_S:
                        continue
                    self._recorded[key] = now
                    self._recorded.move_to_end(key)
                    while len(self._recorded) > MAX_REMEMBERED:
                        self._recorded.popitem(last=False)
                    fresh.append((term.id, place))
        return fresh

    def _write(self, source: str, met: list[tuple[str, int | None, int | None]]) -> int:
        """Each (term, cell, line) as met in ``source``: one store transaction each."""
        for term, cell, line in met:
            self.store.mark_met(term, source, cell, line)
        return len(met)

    def _cell_index(self, path: str, cell_id: str) -> int | None:
        """The cell's code-cell index in the saved notebook (None: not found there)."""
        root = self.root_dir()
        if not root or not path.endswith(".ipynb"):
            return None
        real_root = Path(root).resolve()
        notebook = (real_root / path).resolve()
        if not notebook.is_relative_to(real_root) or not notebook.is_file():
            return None
        try:
            stat = notebook.stat()
            version = (notebook, stat.st_mtime_ns, stat.st_size)
            with self._lock:
                indexes = self._indexes.get(version)
            if indexes is None:
                indexes = code_cell_indexes(notebook)
                with self._lock:
                    self._indexes[version] = indexes
                    while len(self._indexes) > NOTEBOOK_VERSIONS_KEPT:
                        self._indexes.popitem(last=False)
            return indexes.get(cell_id)
        except (OSError, ValueError):
            return None
