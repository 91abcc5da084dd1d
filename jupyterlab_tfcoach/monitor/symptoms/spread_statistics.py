"""A variance used where a standard deviation belongs, or the other way round.

A Gaussian's spread comes in two units: the variance and its square root, the standard
deviation. A network that outputs a log-variance gives the variance by ``exp(log_var)``
and the standard deviation by ``exp(0.5 * log_var)`` or ``sqrt(exp(log_var))``. Mixing
them up runs and prints plausible numbers: ``sigma = np.exp(log_var)`` or ``std =
x.var()`` holds a variance under a standard deviation's name (every later interval,
z-score or sample is too narrow where the variance is below 1, too wide above), and
``mu - 1.96 * np.exp(log_var)`` builds a 95% interval of 1.96 variances. Nothing raises.

Read from the cell's syntax after it completed (``cell_reading``; a cell without ``exp``,
``var``, ``std`` or ``sigma`` costs one regular-expression search). An expression is a
variance when it is ``var``/``nanvar``/``reduce_variance`` of something, ``exp`` of a
name whose words say log-variance (``log_var``, ``logvar``, ``log_sigma2``) or of an
expression the learner took the square root of elsewhere (``sqrt(exp(pred[:, 1]))`` in
this cell or one of the last ``MAX_HISTORY``: the learner's own reading of it as a
log-variance, looked up once per cell source), or a
name whose words say variance; a standard deviation when it is ``std``/``reduce_std`` of
something, ``exp(0.5 * log_var)``, ``sqrt`` of a variance, or a name whose words say
one. Told:

- a name whose words say standard deviation (``std``, ``sigma``, ``sd``, ``stddev``)
  assigned a variance, or a name that says variance assigned a standard deviation;
- a normal interval's half-width ``z * S`` (``z`` a two-sided normal quantile: 1.645,
  1.96, 2.576...) added to or taken from a value, with ``S`` a variance.

The fix is the statement with the value converted: ``sqrt`` (of the same library) around
a variance, ``std`` for ``var`` (``reduce_std`` for ``reduce_variance``), ``square``
around a standard deviation.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode
from jupyterlab_tfcoach.monitor.symptoms.intent_words import identifier_words
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source, walk_nodes

SECTION = "reducing-tensors"
MAX_NOTES = 2
MAX_HISTORY = 60
WANTED = re.compile(r"\bexp\b|var|std|sigma")
VARIANCE, STD = "variance", "standard deviation"
_VARIANCE_CALLS = {"var": "std", "nanvar": "nanstd", "reduce_variance": "reduce_std"}
_STD_CALLS = {"std": "var", "nanstd": "nanvar", "reduce_std": "reduce_variance"}
_STD_WORDS = frozenset({"std", "stddev", "stdev", "sigma", "sd"})
_VAR_WORDS = frozenset({"var", "variance", "logvar"})
_SQUARED = frozenset({"2", "sq", "squared", "sqr"})
# Two-sided normal quantiles (90%, 95%, 98%, 99%...), as learners write them.
_Z_VALUES = frozenset({1.64, 1.645, 1.65, 1.96, 2.326, 2.33, 2.576, 2.58})


def _words(node: ast.AST) -> list[str]:
    """The words of the name a value is read from: ``log_var`` for ``log_var[:, 0]``."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return identifier_words(node.id)
    if isinstance(node, ast.Attribute):
        return identifier_words(node.attr)
    return []


def _named(words: list[str]) -> str | None:
    """What a name says it holds: a variance, a standard deviation, their logs."""
    if not words:
        return None
    squared = bool(_SQUARED.intersection(words))
    if _VAR_WORDS.intersection(words) or (_STD_WORDS.intersection(words) and squared):
        kind = VARIANCE
    elif _STD_WORDS.intersection(words):
        kind = STD
    else:
        return None
    if "logvar" in words or "log" in words:
        return "log " + kind
    return kind


def _half(node: ast.AST) -> ast.AST | None:
    """``X`` for ``0.5 * X``, ``X * 0.5``, ``X / 2``."""
    if not isinstance(node, ast.BinOp):
        return None
    left, right = node.left, node.right
    if isinstance(node.op, ast.Mult):
        for factor, other in ((left, right), (right, left)):
            if isinstance(factor, ast.Constant) and factor.value == 0.5:
                return other
    if isinstance(node.op, ast.Div) and isinstance(right, ast.Constant) and right.value == 2:
        return left
    return None


class _Reader:
    def __init__(self, code: CellCode, namespace: dict[str, Any]) -> None:
        self.code = code
        self.namespace = namespace
        self._history: str | None = None

    def _rooted_elsewhere(self, exp_text: str) -> bool:
        """Whether the learner took the square root of this ``exp(...)`` somewhere (the
        history is joined only when an ``exp`` of an unnamed value needs it)."""
        # Kept with the parsed cell: a cell run again unchanged reads no history.
        rooted: dict[str, bool] = self.code.memo.setdefault("spread_rooted", {})
        if exp_text not in rooted:
            if self._history is None:
                self._history = _history(self.namespace, self.code.source)
            rooted[exp_text] = f"sqrt({exp_text})" in self._history
        return rooted[exp_text]

    def kind(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Call):
            name = call_name(node)
            if name in _VARIANCE_CALLS:
                return VARIANCE
            if name in _STD_CALLS:
                return STD
            if name == "sqrt" and len(node.args) == 1:
                return STD if self.kind(node.args[0]) == VARIANCE else None
            if name == "exp" and len(node.args) == 1:
                argument = node.args[0]
                half = _half(argument)
                said = _named(_words(half if half is not None else argument))
                if said == "log " + VARIANCE:
                    return STD if half is not None else VARIANCE
                if said == "log " + STD and half is None:
                    return STD
                text = self.code.segment(node)
                if half is None and text is not None and self._rooted_elsewhere(text):
                    return VARIANCE
            return None
        said = _named(_words(node))
        return said if said in (VARIANCE, STD) else None


def _prefix(call: ast.AST, code: CellCode, default: str) -> str:
    """``np.`` for ``np.exp(...)``, ``tf.math.`` for ``tf.math.exp(...)``."""
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
        text = code.segment(call.func.value)
        if text is not None:
            return text + "."
    return default


def _converted(code: CellCode, node: ast.AST, to: str, numpy_prefix: str) -> str | None:
    """``node`` rewritten to hold ``to`` (STD from a variance, VARIANCE from a std)."""
    text = code.segment(node)
    if text is None:
        return None
    if isinstance(node, ast.Call):
        name = call_name(node) or ""
        swap = (_VARIANCE_CALLS if to == STD else _STD_CALLS).get(name)
        func = code.segment(node.func)
        if swap is not None and func is not None and func.endswith(name):
            return func[: -len(name)] + swap + text[len(func) :]
    prefix = _prefix(node, code, numpy_prefix)
    return f"{prefix}sqrt({text})" if to == STD else f"{prefix}square({text})"


def _history(namespace: dict[str, Any], source: str) -> str:
    cells = namespace.get("In")
    texts = [source]
    if isinstance(cells, list):
        texts += [c for c in cells[-MAX_HISTORY:] if isinstance(c, str)]
    return "\n".join(texts)


def _numpy_prefix(namespace: dict[str, Any]) -> str:
    for alias in ("np", "numpy", "onp"):
        if getattr(namespace.get(alias), "__name__", None) == "numpy":
            return alias + "."
    return "np."


def _z_factor(node: ast.AST) -> ast.AST | None:
    """``S`` of ``z * S`` or ``S * z`` with ``z`` a normal quantile."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return None
    for factor, other in ((node.left, node.right), (node.right, node.left)):
        if isinstance(factor, ast.Constant) and type(factor.value) in (int, float):
            if float(factor.value) in _Z_VALUES:
                return other
    return None


def spread_statistic_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    if WANTED.search(code.source) is None:
        return []
    reader = _Reader(code, namespace)
    numpy_prefix = _numpy_prefix(namespace)
    notes: list[Note] = []
    told: set[int] = set()
    tree = parsed_source(code.source)
    # Names assigned inside functions too (a loss's ``sigma = tf.exp(log_var)``); the
    # intervals at the top level, where the statement holding them is known.
    assignments = [n for n in walk_nodes(tree) if isinstance(n, ast.Assign)] if tree else []
    for node in [*assignments, *(n for n in code.nodes if not isinstance(n, ast.Assign))]:
        if len(notes) >= MAX_NOTES:
            break
        if id(node) in told:
            continue
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            target = node.targets[0].id
            said = _named(identifier_words(target))
            held = reader.kind(node.value)
            if said not in (VARIANCE, STD) or held not in (VARIANCE, STD) or said == held:
                continue
            new = _converted(code, node.value, said, numpy_prefix)
            value_text = code.segment(node.value)
            fixed = code.replaced_in(node, node.value, new) if new is not None else None
            if fixed is None or value_text is None:
                continue
            square = "its square root" if said == STD else "its square"
            text = (
                f"`{target}` is named as a {said}, but `{value_text}` (line {node.lineno} of "
                f"this cell) is a {held}: the {said} is {square}. Every interval, z-score or "
                f"sample built from `{target}` has the wrong width, and nothing raises. "
                f"Fix: `{fixed}`."
            )
            told.add(id(node))
            notes.append(reports.note(text, SECTION))
            continue
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub)):
            continue
        for side in (node.right, node.left):
            spread = _z_factor(side)
            if spread is None or reader.kind(spread) != VARIANCE:
                continue
            statement = code.statement_of(node)
            if statement is None or id(statement) in told:
                break
            new = _converted(code, spread, STD, numpy_prefix)
            side_text, spread_text = code.segment(side), code.segment(spread)
            fixed = code.replaced_in(statement, spread, new) if new is not None else None
            if fixed is None or side_text is None or spread_text is None:
                break
            told.add(id(statement))
            text = (
                f"`{side_text}` (line {node.lineno} of this cell) is the half-width of a "
                f"normal interval: a number of standard deviations. But `{spread_text}` is a "
                f"variance (the square of the standard deviation), so the interval is too "
                f"narrow where the variance is below 1 and too wide above, and its coverage "
                f"is not the one intended. Nothing raises. Fix: `{fixed}`."
            )
            notes.append(reports.note(text, SECTION))
            break
    return notes
