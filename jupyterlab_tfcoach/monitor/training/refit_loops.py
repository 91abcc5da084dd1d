"""One model object fit again for each setting of a loop: later settings start trained.

Comparing learning rates or batch sizes with ``for lr in rates: model.compile(...);
model.fit(...)`` reuses the same weights: ``compile`` keeps them, so every setting after
the first starts from where the previous one ended and looks better than it is. Nothing
raises.

The symptom, after a cell: ``fit`` ran two times or more on the same model object (by
id, ``FitRun.model_id``) and fit's first-epoch loss of a later run is below the first
run's (it started trained). The cause is named from the cell's source (``ast``, one
parse): a ``for`` loop whose body calls ``<name>.fit(...)``, reads the loop's variable
in that fit or in a ``compile`` (directly or through a name the body assigns from it:
``opt = keras.optimizers.Adam(lr)``), and never rebinds ``<name>`` (no rebuild). The fix
is the model's own construction statement (``<name> = ...``, the newest in the cells)
as the first statement of the loop's body: a fresh model for each setting.

Cost: after a cell with two fits of one model, one parse of the cell (cached); nothing
otherwise. Nothing here imports TensorFlow or prints; every failure leaves the note out.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.training import user_code
from jupyterlab_tfcoach.monitor.training.fit_watch import FitRun

SECTION = "clone-model"  # a fresh model with new weights, and what compile keeps
MAX_HISTORY_CELLS = 50


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _method_calls(body: list[ast.stmt], owner: str, method: str) -> list[ast.Call]:
    return [
        node
        for statement in body
        for node in ast.walk(statement)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == method
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == owner
    ]


def _rebinds(body: list[ast.stmt], name: str) -> bool:
    for statement in body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
                return True
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("set_weights", "load_weights")
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == name
            ):
                return True
    return False


def settings_loop(tree: ast.Module, name: str) -> tuple[ast.For, list[str]] | None:
    """The ``for`` loop that fits ``name`` once per setting without rebuilding it, and
    the loop's variables that reach its fit or compile."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.For):
            continue
        fits = _method_calls(node.body, name, "fit")
        if not fits or _rebinds(node.body, name):
            continue
        varying = _names(node.target)
        # Names the body assigns from the loop's variables vary with them.
        for statement in node.body:
            for inner in ast.walk(statement):
                if isinstance(inner, ast.Assign) and _names(inner.value) & varying:
                    for target in inner.targets:
                        varying |= _names(target)
        used = set()
        for call in [*fits, *_method_calls(node.body, name, "compile")]:
            used |= _names(call) & varying
        if used:
            return node, sorted(used & _names(node.target)) or sorted(used)
    return None


def _construction(sources: list[str], name: str) -> str | None:
    """The newest top-level ``<name> = <call>`` statement in the cells."""
    for source in sources:
        tree = user_code.parse(source)
        if tree is None:
            continue
        found = None
        for statement in tree.body:
            if (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
                and statement.targets[0].id == name
                and isinstance(statement.value, ast.Call)
            ):
                found = statement
        if found is not None:
            text = ast.get_source_segment(source, found)
            return " ".join(text.split()) if text else None
    return None


def refit_notes(fits: list[FitRun], namespace: Mapping[str, Any], cell_source: str) -> list[Note]:
    """One note per model fit again in a loop over settings without being rebuilt."""
    notes: list[Note] = []
    by_model: dict[int, list[FitRun]] = {}
    for run in fits:
        by_model.setdefault(run.model_id, []).append(run)
    for model_id, runs in by_model.items():
        try:
            if len(runs) < 2:
                continue
            first = (runs[0].history or {}).get("loss") or []
            later = [(r.history or {}).get("loss") or [] for r in runs[1:]]
            if not first or not any(loss and loss[0] < first[0] for loss in later):
                continue  # no later run started better than the first: nothing carried
            name = name_bound_to(model_id, namespace)
            tree = user_code.parse(cell_source)
            if not name or tree is None:
                continue
            found = settings_loop(tree, name)
            if found is None:
                continue
            loop, varying = found
            notes.append(_note(name, loop, varying, runs, namespace, cell_source))
        except Exception:
            continue
    return notes


def _note(
    name: str,
    loop: ast.For,
    varying: list[str],
    runs: list[FitRun],
    namespace: Mapping[str, Any],
    cell_source: str,
) -> Note:
    header = (cell_source.splitlines()[loop.lineno - 1] if cell_source else "").strip()
    first = (runs[0].history or {}).get("loss") or [float("nan")]
    second = (runs[1].history or {}).get("loss") or [float("nan")]
    settings = ", ".join(f"`{v}`" for v in varying[:3])
    text = (
        f"`{name}` is fit {len(runs)} times in `{header}` (line {loop.lineno} of this cell), "
        "once per "
        f"{settings}, but it is the same model object each time: compile keeps its weights, "
        f"so each setting after the first starts from the weights the previous one "
        f"trained (the first fit's first-epoch loss was {first[0]:.3g}, the second's "
        f"{second[0]:.3g}). The settings are not compared from the same start."
    )
    history = namespace.get("In")
    earlier = history[-MAX_HISTORY_CELLS:] if type(history) is list else []
    sources = [cell_source, *reversed([s for s in earlier if type(s) is str])]
    construction = _construction(sources, name)
    if construction is not None and user_code.valid_code(construction):
        text += (
            f" Build a fresh model for each setting: make `{construction}` the first "
            f"statement of the loop's body (then compile and fit it there)."
        )
    else:
        text += f" Build a fresh `{name}` at the start of the loop's body for each setting."
    return reports.note(text, SECTION)
