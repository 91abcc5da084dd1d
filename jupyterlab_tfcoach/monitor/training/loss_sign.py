"""A loss that rewards the wrong direction: a log-likelihood written without its minus.

A cross-entropy is the negative mean log-probability of the labels:
``-tf.reduce_mean(y * tf.math.log(p) + (1 - y) * tf.math.log(1 - p))``. Written without
the minus, the loss is the log-likelihood itself, at most 0, and minimising it pushes the
probabilities of the right classes to 0: the loss goes steadily more negative (to -inf,
then nan in a custom loop) while accuracy falls. Nothing raises.

Told on the symptom, from values the monitor already has: a ``fit``'s ``History`` (the
per-epoch ``loss``, and its accuracy), or the custom-loop samples of a ``tape.gradient``
target (calls 1, 2, 4, 8, ...: ``variables/training_symptoms.py``). The symptom is a loss
below zero at its end that fell across every sample and reached 1.5 times its first
magnitude (``falling_below_zero``), or that then went non-finite. The cause is read from
the learner's code with ``ast``: the loss function compiled (a plain function, or the
``call`` of a ``keras.losses.Loss`` subclass of the notebook, by ``inspect``), the
statement that computed the target in the code that called ``tape.gradient``, or the
notebook function that statement calls. ``log_sign`` follows the expression's sign from
its reductions down to its ``log`` calls (``tf.math.log``, ``np.log``, ``keras.ops.log``,
``log_sigmoid``, ``log_softmax``, ``xlogy``): a log term reached through no minus is a
log-likelihood being minimised. The note names the statement and gives it with the minus
(``return -tf.reduce_mean(...)``). With no readable cause, a loss that went from negative
to non-finite, or a ``fit`` whose accuracy fell by 0.1 or more while its loss fell, is
told as the symptom with what to check, unless the loss is Keras's own and stayed positive
(its sign is right; raw scores given to a probability loss do that, told at compile).
"""

from __future__ import annotations

import ast
import itertools
import math
import types
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.cell_sources import last_assignment
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, is_library_class
from jupyterlab_tfcoach.monitor.syntax import call_name
from jupyterlab_tfcoach.monitor.training import inverted_weights
from jupyterlab_tfcoach.monitor.training.user_code import loss_return

SECTION = "labels-and-loss"
# The last sample past this many times the first's magnitude, below zero: a fall, not noise.
FALL = 1.5
ACCURACY_DROP = 0.1
_LOGS = frozenset(
    {"log", "log1p", "log2", "log10", "log_sigmoid", "log_softmax", "xlogy", "logsumexp"}
)
_REDUCTIONS = frozenset({"reduce_mean", "reduce_sum", "mean", "sum", "nanmean", "average"})
_LOG, _NEGATED, _PLAIN, _MINUS_PLAIN = "log", "negated", "plain", "minus-plain"
_LIBRARIES = frozenset({"keras", "tensorflow", "numpy", "tf_keras", "jax", "torch"})


def falling_below_zero(values: list[tuple[int, float]], unit: str) -> str | None:
    """``"went from -1.24 at epoch 1 to -7.94 at epoch 5"`` when a loss below zero at its
    end fell across every sample (or went non-finite after going negative)."""
    finite = [(s, v) for s, v in values if math.isfinite(v)]
    if len(finite) < 2 or len(values) < 3:
        return None
    first_step, first = finite[0]
    last_step, last = finite[-1]
    if last >= 0 or last >= first:
        return None
    if any(b[1] > a[1] for a, b in itertools.pairwise(finite)):
        return None
    went = f"went from {first:.4g} at {unit} {first_step} to {last:.4g} at {unit} {last_step}"
    if not math.isfinite(values[-1][1]):
        return f"{went}, and was {values[-1][1]} at {unit} {values[-1][0]}"
    if abs(last) < FALL * abs(first) and first < 0:
        return None
    return went


def _flip(sign: str | None) -> str | None:
    flipped = {_LOG: _NEGATED, _NEGATED: _LOG, _PLAIN: _MINUS_PLAIN, _MINUS_PLAIN: _PLAIN}
    return flipped.get(sign or "", sign)


def _product(left: str | None, right: str | None) -> str | None:
    """The sign of a product of two factors: a minus on a plain factor (``-y``)
    negates the other."""
    if left is None or right is None:
        return None
    for one, other in ((left, right), (right, left)):
        if one == _PLAIN:
            return other
        if one == _MINUS_PLAIN:
            return _flip(other)
    return None  # log times log


def _negative_number(node: ast.AST) -> bool | None:
    """True/False for a number written as a literal (``-1``, ``0.5``), None otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value < 0
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _negative_number(node.operand)
        return None if inner is None else not inner
    return None


def _combine(left: str | None, right: str | None) -> str | None:
    if left is None or right is None:
        return None
    if left == _PLAIN:
        return right
    if right == _PLAIN or left == right:
        return left
    return None  # a log-likelihood minus another: not a simple sign


def log_sign(node: ast.AST, depth: int = 0) -> str | None:
    """``"log"`` for an expression that is a sum or mean of log terms reached through no
    minus (a log-likelihood), ``"negated"`` for its negative (a cross-entropy),
    ``"plain"`` for one with no log, None when the sign cannot be read simply."""
    if depth > 30:
        return None
    if isinstance(node, ast.Constant | ast.Name | ast.Attribute | ast.Subscript):
        return _PLAIN
    if isinstance(node, ast.UnaryOp):
        inner = log_sign(node.operand, depth + 1)
        return _flip(inner) if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.Call):
        name = call_name(node)
        if name in _LOGS:
            return _LOG
        if name in ("negative", "neg"):
            return _flip(log_sign(node.args[0], depth + 1)) if node.args else None
        if name in _REDUCTIONS and node.args:
            return log_sign(node.args[0], depth + 1)
        inner = [log_sign(a, depth + 1) for a in node.args]
        return _PLAIN if all(s in (_PLAIN, _MINUS_PLAIN) for s in inner) else None
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Mult | ast.Div):
            for number, other in ((node.left, node.right), (node.right, node.left)):
                negative = _negative_number(number)
                if negative is not None and (other is node.left or isinstance(node.op, ast.Mult)):
                    inner = log_sign(other, depth + 1)
                    return _flip(inner) if negative else inner
            left, right = log_sign(node.left, depth + 1), log_sign(node.right, depth + 1)
            if isinstance(node.op, ast.Div) and right not in (_PLAIN, _MINUS_PLAIN):
                return None
            return _product(left, right)
        if isinstance(node.op, ast.Add | ast.Sub):
            left, right = log_sign(node.left, depth + 1), log_sign(node.right, depth + 1)
            if isinstance(node.op, ast.Sub):
                right = _flip(right)
            # A log term plus another quantity (``log(sigma) + 0.5 * z ** 2``, a
            # Gaussian's negative log-likelihood) is not a sum of log-probabilities.
            plain = (_PLAIN, _MINUS_PLAIN)
            if left in plain and right in plain:
                return _PLAIN
            for side, sign in ((node.left, left), (node.right, right)):
                if sign in plain and not isinstance(side, ast.Constant):
                    return None
            return _combine(_PLAIN if left in plain else left, _PLAIN if right in plain else right)
    return None


@dataclass(frozen=True)
class UnsignedLoss:
    """The statement computing a log-likelihood as a loss, and it with the minus."""

    statement: str
    fix: str
    where: str  # "in `my_bce`", "line 5 of this cell"


def _negated(source: str, statement: ast.Return | ast.Assign) -> str | None:
    value = statement.value
    if value is None or statement.lineno != statement.end_lineno:
        return None
    text = ast.get_source_segment(source, statement)
    expression = ast.get_source_segment(source, value)
    if text is None or expression is None:
        return None
    simple = isinstance(value, ast.Call | ast.Name | ast.Attribute | ast.Subscript)
    negated = f"-{expression}" if simple else f"-({expression})"
    start = (value.col_offset or 0) - (statement.col_offset or 0)
    raw = text.encode("utf-8")
    end = start + len(expression.encode("utf-8"))
    return (raw[:start] + negated.encode("utf-8") + raw[end:]).decode("utf-8")


def _unsigned_statement(source: str, statement: ast.Return | ast.Assign) -> tuple[str, str] | None:
    if statement.value is None or log_sign(statement.value) != _LOG:
        return None
    written = ast.get_source_segment(source, statement)
    fixed = _negated(source, statement)
    if written is None or fixed is None:
        return None
    return written, fixed


def function_unsigned(function: Any) -> UnsignedLoss | None:
    """A notebook function (or a ``Loss`` subclass's ``call``) whose last ``return`` is a
    log-likelihood without its minus."""
    read = loss_return(function)
    if read is None:
        return None
    label, source, returned = read
    found = _unsigned_statement(source, returned)
    if found is None:
        return None
    return UnsignedLoss(found[0], found[1], f"in `{label}`")


def assigned_unsigned(
    source: str,
    tree: ast.AST,
    target: str,
    before_line: int,
    line_offset: int,
    namespace: Mapping[str, Any],
) -> UnsignedLoss | None:
    """The statement that last assigned ``target`` before ``before_line`` in a scope: a
    log-likelihood itself, or a call of a notebook function returning one."""
    statement = last_assignment(tree, target, before_line)
    if statement is None:
        return None
    value = statement.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        function = namespace.get(value.func.id)
        if function is not None:
            return function_unsigned(function)
    found = _unsigned_statement(source, statement)
    if found is None:
        return None
    return UnsignedLoss(found[0], found[1], f"line {statement.lineno + line_offset}")


def cause_text(unsigned: UnsignedLoss, again: str = "build and train the model again") -> str:
    return (
        f" `{unsigned.statement}` ({unsigned.where}) is a mean of log-probabilities, "
        "a log-likelihood, which is at most 0 and is larger for better predictions: "
        "minimising it pushes the probabilities of the right labels to 0. A "
        "cross-entropy is its negative; put the minus in front: "
        f"`{unsigned.fix}`, then {again}."
    )


# ------------------------------------------------------------------ fit
def _accuracy_fall(history: Mapping[str, list[float]]) -> tuple[str, float, float] | None:
    for key, values in history.items():
        if key.startswith("val_") or "acc" not in key or len(values) < 2:
            continue
        if values[0] - values[-1] >= ACCURACY_DROP:
            return key, values[0], values[-1]
    return None


def _library_loss(loss: Any) -> bool:
    """Whether the compiled loss is Keras's own: a name (``"mse"``), or a function or object
    defined by TensorFlow/Keras (read by type and module name only)."""
    if loss is None or type(loss) is str:
        return True
    if isinstance(loss, types.FunctionType):
        module = loss.__module__ if type(loss.__module__) is str else ""
        return module.split(".", 1)[0] in _LIBRARIES
    return is_library_class(type(loss))


def fit_notes(
    runs: list[tuple[weakref.ReferenceType[Any], Mapping[str, list[float]] | None]],
    namespace: Mapping[str, Any],
) -> list[Note]:
    """A note per fit whose loss fell below zero (or fell while accuracy fell)."""
    notes: list[Note] = []
    for reference, history in runs:
        model = reference()
        if model is None or not history or "loss" not in history:
            continue
        losses = history["loss"]
        how = falling_below_zero([(i + 1, v) for i, v in enumerate(losses)], "epoch")
        accuracy = _accuracy_fall(history) if len(losses) >= 2 and losses[-1] < losses[0] else None
        if how is None and accuracy is None:
            continue
        loss = (instance_dict(model) or {}).get("loss")  # no attribute hooks run
        unsigned = function_unsigned(loss) if loss is not None else None
        name = name_bound_to(id(model), namespace) or "model"
        if how is None:
            how = f"fell from {losses[0]:.4g} to {losses[-1]:.4g}"
        head = f"The loss of `{name}.fit` {how}"
        if accuracy is not None:
            key, first, last = accuracy
            head += f", while `{key}` fell from {first:.3g} to {last:.3g}"
        head += ': training made the predictions worse while the loss "improved".'
        if unsigned is not None:
            notes.append(reports.note(head + cause_text(unsigned), SECTION))
            continue
        inverted = inverted_weights.inverted_weight(loss) if loss is not None else None
        if inverted is not None:
            cause = inverted_weights.cause_text(inverted)
            notes.append(reports.note(f"{head} {cause[0].upper()}{cause[1:]}.", SECTION))
            continue
        if accuracy is None and math.isfinite(losses[-1]):
            continue  # a negative loss alone may be meant (a density's log-likelihood)
        if _library_loss(loss) and min(losses) >= 0.0:
            # Keras's own losses have the right sign: a positive one that falls while
            # accuracy falls has another cause (raw scores given to a loss that expects
            # probabilities, which the compile check tells), not a missing minus.
            continue
        notes.append(
            reports.note(
                head + " A loss to minimise must be smaller for better predictions: check "
                "its sign (a cross-entropy or negative log-likelihood is `-mean(log p)`), "
                "and that compile got the loss, not a score to maximise.",
                SECTION,
            )
        )
    return notes
