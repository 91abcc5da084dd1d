"""A Monte Carlo integral over [a, b] estimated by the mean alone, without the length b - a.

With ``u`` drawn uniformly on [a, b], the mean of ``f(u)`` estimates the AVERAGE of ``f``
over the interval; the integral is ``(b - a)`` times it. ``estimate =
tf.reduce_mean(tf.exp(-u ** 2))`` for an integral on [0, 2] is half the right value.
Nothing raises; the printed closed form disagrees and the learner doubts the method.

Read from the source after a completed cell whose words say integral (``integral``,
``integrate``, in a name, a comment or a label; one regular-expression search otherwise):
a name ``u`` the cell assigns from a uniform draw whose bounds are number literals with
``b - a`` other than 1 (``tf.random.uniform(shape, minval=a, maxval=b)``, a
``tf.random.Generator``'s or NumPy generator's ``uniform``, ``np.random.uniform(a, b,
size)``), and a name assigned at the top level from exactly a mean (``tf.reduce_mean``,
``np.mean``, ``.mean()``, under ``float`` at most) of an expression that uses ``u``. The
fix is that statement with ``(b - a) *`` in front of the mean.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode
from jupyterlab_tfcoach.monitor.syntax import call_name, number_literal

SECTION = "reducing-tensors"
WANTED = re.compile(r"(?i)integra(?:l|te|tion)")
_MEANS = frozenset({"reduce_mean", "mean"})


def _bounds(call: ast.Call) -> tuple[ast.AST, ast.AST] | None:
    """The (low, high) nodes of a uniform draw, written as number literals."""
    if call_name(call) != "uniform":
        return None
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    low = keywords.get("minval", keywords.get("low"))
    high = keywords.get("maxval", keywords.get("high"))
    path_text = ast.unparse(call.func)
    numpy_style = "random.uniform" in path_text and not path_text.startswith("tf.")
    if numpy_style or not any(k in keywords for k in ("minval", "maxval")):
        # NumPy's order: uniform(low, high, size).
        if low is None and len(call.args) >= 1:
            low = call.args[0]
        if high is None and len(call.args) >= 2:
            high = call.args[1]
    else:
        # TensorFlow's order: uniform(shape, minval, maxval).
        if low is None and len(call.args) >= 2:
            low = call.args[1]
        if high is None and len(call.args) >= 3:
            high = call.args[2]
    if low is None or high is None or number_literal(low) is None or number_literal(high) is None:
        return None
    return low, high


def integral_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    if WANTED.search(code.source) is None:
        return []
    draws: dict[str, tuple[ast.AST, ast.AST, int]] = {}
    for name, assignments in code.assigned.items():
        line, value = assignments[-1]
        if isinstance(value, ast.Call):
            bounds = _bounds(value)
            if bounds is not None:
                low, high = number_literal(bounds[0]), number_literal(bounds[1])
                if low is not None and high is not None and high - low != 1.0 and high > low:
                    draws[name] = (bounds[0], bounds[1], line)
    if not draws:
        return []
    for name, assignments in code.assigned.items():
        line, value = assignments[-1]
        inner = value
        while isinstance(inner, ast.Call) and call_name(inner) == "float" and inner.args:
            inner = inner.args[0]
        if not (isinstance(inner, ast.Call) and call_name(inner) in _MEANS):
            continue
        used = {n.id for n in ast.walk(inner) if isinstance(n, ast.Name)}
        drawn = next((u for u in draws if u in used and draws[u][2] < line), None)
        if drawn is None:
            continue
        note = _note(code, name, line, inner, drawn, draws[drawn])
        if note is not None:
            return [note]
    return []


def _note(
    code: CellCode,
    name: str,
    line: int,
    mean: ast.Call,
    drawn: str,
    draw: tuple[ast.AST, ast.AST, int],
) -> Note | None:
    statement = next(
        (s for s in code.nodes if isinstance(s, ast.Assign) and s.lineno == line), None
    )
    low, high = code.segment(draw[0]), code.segment(draw[1])
    mean_text = code.segment(mean)
    if statement is None or low is None or high is None or mean_text is None:
        return None
    length = f"({high} - {low})"
    fixed = code.replaced_in(statement, mean, f"{length} * {mean_text}")
    if fixed is None:
        return None
    size = (number_literal(draw[1]) or 0.0) - (number_literal(draw[0]) or 0.0)
    drawn_at = next(
        (s for s in code.nodes if isinstance(s, ast.Assign) and s.lineno == draw[2]), None
    )
    written = code.segment(drawn_at) if drawn_at is not None else None
    where = f"`{written}`" if written else f"line {draw[2]} of this cell"
    text = (
        f"`{name}` is a mean of values at `{drawn}`, drawn uniformly on [{low}, {high}] "
        f"({where}): a mean estimates the AVERAGE of the function over the interval, and "
        f"the integral is the interval's length times it, here {size:g} times `{name}`. "
        f"Nothing raises. Fix: `{fixed}`."
    )
    return reports.note(text, SECTION)
