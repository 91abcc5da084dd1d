"""Static analysis of TensorFlow code: the public API every adapter uses.

``analyze_source`` checks one Python source, ``analyze_cells`` the code cells
of a notebook (joined, so names flow between cells; lines count within each
cell), ``analyze_path`` a ``.py`` file or an ``.ipynb`` notebook. Findings are
sorted by (cell, line, column, code); positions are 1-based with character
columns and ``end_column`` one past the end (see ``findings.py``).

One result type: ``check_source`` and ``check_cells`` return an ``Analysis``
(``findings`` and ``syntax_errors``, a ``SyntaxProblem`` per cell left out, or one
with ``cell`` None for a source that does not parse, and one of kind ``DEPTH`` where an
expression nested too deeply to check was left out while the rest was checked); the front
ends use those. ``analyze_source`` / ``analyze_cells`` return the findings alone
(``analyze_source`` raises ``AnalysisSyntaxError``, a ``SyntaxError``, or for a ``DEPTH``
problem its subclass ``AnalysisDepthError`` with the findings of the rest); ``analyze_path`` raises
``AnalysisInputError`` for a file it cannot analyse, carrying the findings of a
notebook's other cells in ``.findings``.

Time budget: inside ``with time_budget(seconds) as budget:`` (``budget.py``), an
analysis that runs out of time returns the findings made so far and
``budget.note`` says it stopped; the long-running front ends (language server,
Jupyter server extension) use one. Without it an analysis runs to the end; its
cost is linear in the input whatever its shape (``bindings.MAX_REACHING``).

Only ``ast`` is used: no TensorFlow, no jedi, nothing imported from the
analysed code. A source that does not import TensorFlow yields no findings.
"""

from __future__ import annotations

from jupyterlab_tfcoach.analysis.budget import TimeBudget, time_budget
from jupyterlab_tfcoach.analysis.cells import analyze_cells, check_cells
from jupyterlab_tfcoach.analysis.config import Config, ConfigError
from jupyterlab_tfcoach.analysis.engine import Analysis, analyze_source, check_source
from jupyterlab_tfcoach.analysis.errors import AnalysisInputError, AnalysisSyntaxError
from jupyterlab_tfcoach.analysis.files import analyze_path
from jupyterlab_tfcoach.analysis.findings import Edit, Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.notebook import SyntaxProblem
from jupyterlab_tfcoach.analysis.project_config import load_config
from jupyterlab_tfcoach.analysis.rules import RULES, Rule, rule_by_code

__all__ = [
    "RULES",
    "Analysis",
    "AnalysisInputError",
    "AnalysisSyntaxError",
    "Config",
    "ConfigError",
    "Edit",
    "Finding",
    "Fix",
    "Rule",
    "Severity",
    "SyntaxProblem",
    "TimeBudget",
    "analyze_cells",
    "analyze_path",
    "analyze_source",
    "check_cells",
    "check_source",
    "load_config",
    "rule_by_code",
    "time_budget",
]
