"""Static analysis of TensorFlow code: the public API every adapter uses.

``analyze_source`` checks one Python source, ``analyze_cells`` the code cells
of a notebook (joined, so names flow between cells; lines count within each
cell), ``analyze_path`` a ``.py`` file or an ``.ipynb`` notebook. Findings are
sorted by (cell, line, column, code); positions are 1-based with character
columns and ``end_column`` one past the end (see ``findings.py``).

Syntax errors: ``analyze_source`` raises ``AnalysisSyntaxError`` (a
``SyntaxError``). Notebooks are analysed even when some cells are broken:
those cells are left out and listed in ``check_cells(...).syntax_errors``;
``analyze_path`` then raises ``AnalysisInputError`` carrying the findings of
the other cells in ``.findings``.

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
from jupyterlab_tfcoach.analysis.cells import CellsAnalysis, analyze_cells, check_cells
from jupyterlab_tfcoach.analysis.config import Config, ConfigError
from jupyterlab_tfcoach.analysis.engine import analyze_source
from jupyterlab_tfcoach.analysis.errors import AnalysisInputError, AnalysisSyntaxError
from jupyterlab_tfcoach.analysis.files import analyze_path
from jupyterlab_tfcoach.analysis.findings import Edit, Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.notebook import CellSyntaxError
from jupyterlab_tfcoach.analysis.project_config import load_config
from jupyterlab_tfcoach.analysis.rules import RULES, Rule, rule_by_code

__all__ = [
    "RULES",
    "AnalysisInputError",
    "AnalysisSyntaxError",
    "CellSyntaxError",
    "CellsAnalysis",
    "Config",
    "ConfigError",
    "Edit",
    "Finding",
    "Fix",
    "Rule",
    "Severity",
    "TimeBudget",
    "analyze_cells",
    "analyze_path",
    "analyze_source",
    "check_cells",
    "load_config",
    "rule_by_code",
    "time_budget",
]
