"""Weights pruned to zero before ``fit``, then trained back to non-zero values by it
(issue "explain code it has never seen").

Magnitude pruning sets the smallest weights to zero by multiplying them with a 0/1 mask
(``dense.kernel.assign(dense.kernel * keep)``). A zero weight still has a
gradient, so the optimizer's next step moves it away from zero: masks applied once, then
a ``fit`` to "win back the accuracy", leave a dense model whose accuracy is reported as
the pruned one's. Nothing raises.

Symptom (``fit_watch.py`` counts each weight's exact zeros before and after ``fit``): a
weight of ``MIN_ENTRIES`` values or more that was between ``MIN_PRUNED`` (and
``MIN_PRUNED_COUNT`` values) and all-but-one zeros before (initializers never give
exact zeros, all zeros is a bias's start) and kept at most half of them. Cause, read
with ``ast`` from this cell, then the earlier ones: the statement that multiplied a
weight by a mask in place, ``w.assign(w * mask)`` (alone, or the one statement of a
``for`` loop); told only when one is found. Fix: the cell's
``fit`` call given a callback that applies that statement again after every batch,
``keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: [...])``.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.training import user_code
from jupyterlab_tfcoach.monitor.training.fit_watch import FitRun, WeightOutcome

SECTION = "trainable-weights"
MIN_ENTRIES = 16
# Initializers and training never give exact zeros, so a few in a hundred is pruning
# (a mask that keeps too much is still one); the statement found is required too.
MIN_PRUNED = 0.005
MIN_PRUNED_COUNT = 4
KEPT_AT_MOST = 0.5
MAX_CHARS = 20_000


def _regrown(run: FitRun) -> list[WeightOutcome]:
    return [
        w
        for w in run.weights
        if w.size >= MIN_ENTRIES
        and max(MIN_PRUNED * w.size, MIN_PRUNED_COUNT) <= w.zeros_before < w.size
        and w.zeros_after <= KEPT_AT_MOST * w.zeros_before
    ]


def _masking_call(statement: ast.stmt) -> ast.Call | None:
    """``w.assign(w * mask)`` (or ``mask * w``) as a statement: its call."""
    if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
        return None
    call = statement.value
    if not (
        isinstance(call.func, ast.Attribute)
        and call.func.attr == "assign"
        and len(call.args) == 1
        and isinstance(call.args[0], ast.BinOp)
        and isinstance(call.args[0].op, ast.Mult)
    ):
        return None
    weight = ast.dump(call.func.value)
    product = call.args[0]
    if weight in (ast.dump(product.left), ast.dump(product.right)):
        return call
    return None


def _masking_expression(statement: ast.stmt) -> tuple[ast.expr, ast.stmt] | None:
    """The expression that applies the masks again, and the statement that prunes: the
    call itself, or a list comprehension for a ``for`` loop whose one statement it is."""
    call = _masking_call(statement)
    if call is not None:
        return call, statement
    if (
        isinstance(statement, ast.For)
        and len(statement.body) == 1
        and not statement.orelse
        and (inner := _masking_call(statement.body[0])) is not None
    ):
        comprehension = ast.comprehension(
            target=statement.target, iter=statement.iter, ifs=[], is_async=0
        )
        return ast.ListComp(elt=inner, generators=[comprehension]), statement.body[0]
    return None


def _fit_call(tree: ast.Module) -> tuple[ast.stmt, ast.Call] | None:
    for statement in tree.body:
        value = getattr(statement, "value", None)
        if not isinstance(statement, (ast.Expr, ast.Assign)) or not isinstance(value, ast.Call):
            continue
        if isinstance(value.func, ast.Attribute) and value.func.attr == "fit":
            return statement, value
    return None


def _masking_in(source: str, before_line: int | None) -> tuple[ast.expr, ast.stmt] | None:
    tree = user_code.parse(source) if len(source) <= MAX_CHARS else None
    if tree is None:
        return None
    for statement in tree.body:
        if before_line is not None and statement.lineno >= before_line:
            break
        found = _masking_expression(statement)
        if found is not None:
            return found
    return None


def _keras_name(namespace: Mapping[str, Any]) -> str:
    if isinstance(namespace.get("keras"), ModuleType):
        return "keras"
    return "tf.keras" if isinstance(namespace.get("tf"), ModuleType) else "keras"


def _fixed_fit(fit: ast.Call, reapply: ast.expr, keras: str) -> str | None:
    callback = ast.parse(
        f"{keras}.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: "
        f"{ast.unparse(reapply)})",
        mode="eval",
    ).body
    call = ast.Call(func=fit.func, args=list(fit.args), keywords=list(fit.keywords))
    for index, keyword in enumerate(call.keywords):
        if keyword.arg == "callbacks":
            if not isinstance(keyword.value, ast.List):
                return None
            listed = ast.List(elts=[*keyword.value.elts, callback], ctx=ast.Load())
            call.keywords[index] = ast.keyword(arg="callbacks", value=listed)
            break
    else:
        call.keywords.append(
            ast.keyword(arg="callbacks", value=ast.List(elts=[callback], ctx=ast.Load()))
        )
    return ast.unparse(call)


def regrown_notes(fits: list[FitRun], namespace: Mapping[str, Any], cell_source: str) -> list[Note]:
    """One note for the cell's fits that filled in weights pruned to zero before them."""
    runs = [(run, found) for run in fits if run.compared and (found := _regrown(run))]
    if not runs:
        return []
    regrown = [w for _run, found in runs for w in found]
    model_name = name_bound_to(runs[0][0].model_id, namespace)
    tree = user_code.parse(cell_source) if len(cell_source) <= MAX_CHARS else None
    if tree is None:
        return []
    fit = _fit_call(tree)
    found = _masking_in(cell_source, fit[0].lineno if fit is not None else None)
    place = None
    if found is not None:
        place = f"line {found[1].lineno} of this cell"
    else:
        sources, counts = user_code.cell_sources(namespace, cell_source)
        for source, count in zip(sources[1:], counts[1:], strict=True):
            found = _masking_in(source, None)
            if found is not None:
                place = user_code.cell_place(count, found[1].lineno)
                break
    if found is None or place is None:
        return []
    reapply, statement = found
    written = ast.unparse(statement).splitlines()[0]
    pruned = sum(w.zeros_before for w in regrown)
    left = sum(w.zeros_after for w in regrown)
    size = sum(w.size for w in regrown)
    owner = f"`{model_name}`'s" if model_name else "the model's"
    weights = f"{len(regrown)} of {owner} weights" if len(regrown) > 1 else f"a weight of {owner}"
    text = (
        f"{pruned:,} of the {size:,} values of {weights} were exactly zero before `fit` "
        f"(pruned by {place}: `{written}`), and only {left:,} are after it: a pruned weight "
        "still gets a gradient, so the optimizer's steps moved the zeros away and the "
        "trained model is dense again (what it scores is a dense model's score). Apply the "
        "masks again after every batch of training, with a callback."
    )
    fixed = _fixed_fit(fit[1], reapply, _keras_name(namespace)) if fit is not None else None
    if fixed is not None and fit is not None and isinstance(fit[0], ast.Assign):
        fixed = " = ".join([*(ast.unparse(t) for t in fit[0].targets), fixed])
    if fixed is not None:
        text += f" Fix: `{fixed}`."
    return [reports.note(text, SECTION)]
