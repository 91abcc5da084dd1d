"""A generative model sampled with noise unlike the noise it was trained on.

A generator (a GAN's) or a decoder (a VAE's) learns to map the noise it was given while
training: usually ``tf.random.normal``, centred on 0 with values of both signs. Sampled
afterwards with ``tf.random.uniform`` (values in [0, 1), one corner of that space) or
``np.random.rand``, it maps inputs it never saw: the samples do not follow what it learned
(shifted, too narrow), and nothing raises.

Found after a cell that completed, from its source and the history ``In`` (a cell without
``uniform`` or ``rand(`` costs two substring tests): a call of a Keras model or layer held
by a name, ``M(z, ...)`` or ``M.predict(z)``, whose first argument is a uniform draw
(``tf.random.uniform``, ``np.random.uniform``/``rand``, a generator's ``uniform``) or a
name this cell bound to one, while an earlier cell (or this one) calls the same ``M`` on
a normal draw (``tf.random.normal``, ``np.random.normal``/``randn``/``standard_normal``)
or on a name bound to one, in a scope that trains (a cell or a function, a ``train_step``
too, that opens a ``GradientTape`` or applies gradients: a call on normal noise made to try
a shape is not training). The note
names both calls; fix: the same draw made with the normal function (``tf.random.normal``
with the same shape; ``np.random.randn`` for ``rand``), given only when the uniform draw
has no range arguments to carry over.
"""

from __future__ import annotations

import ast
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.context import value_kind
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import call_name, dotted_name, parsed_source, scope_nodes

SECTION = "creating-slicing-reducing"
MAX_CELL_CHARS = 50_000
HISTORY_CELLS = 30
_UNIFORM = frozenset({"uniform", "rand"})
_NORMAL = frozenset({"normal", "randn", "standard_normal"})
# The normal function that replaces a uniform one, by the uniform's last name.
_REPLACEMENT = {"uniform": "normal", "rand": "randn"}
_RANGE_KEYWORDS = frozenset({"minval", "maxval", "low", "high"})
_TRAINING_CALLS = frozenset({"GradientTape", "apply_gradients", "train_on_batch", "minimize"})


def _draw(node: ast.AST, names: frozenset[str]) -> ast.Call | None:
    """``node`` as a random draw whose function's last name is in ``names``, made through
    a random module or generator (``tf.random.uniform``, ``np.random.rand``,
    ``rng.uniform``)."""
    if not isinstance(node, ast.Call) or call_name(node) not in names:
        return None
    owner = dotted_name(node.func.value) if isinstance(node.func, ast.Attribute) else None
    if owner is None or not ("random" in owner or "rng" in owner.lower()):
        return None
    return node


def _bound_draws(nodes: list[ast.AST], names: frozenset[str]) -> dict[str, ast.Call]:
    """Names assigned from such a draw among ``nodes`` (``z = tf.random.normal(...)``)."""
    found: dict[str, ast.Call] = {}
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            draw = _draw(node.value, names)
            if isinstance(target, ast.Name) and draw is not None:
                found[target.id] = draw
    return found


def _model_calls(nodes: list[ast.AST]) -> list[tuple[str, ast.Call, ast.expr]]:
    """``(model name, call, first argument)`` for ``M(x, ...)`` and ``M.predict(x)``."""
    calls: list[tuple[str, ast.Call, ast.expr]] = []
    for node in nodes:
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        if isinstance(func, ast.Name):
            calls.append((func.id, node, node.args[0]))
        elif (
            isinstance(func, ast.Attribute)
            and func.attr == "predict"
            and isinstance(func.value, ast.Name)
        ):
            calls.append((func.value.id, node, node.args[0]))
    return calls


def _fed(argument: ast.expr, bound: dict[str, ast.Call], names: frozenset[str]) -> ast.Call | None:
    direct = _draw(argument, names)
    if direct is not None:
        return direct
    return bound.get(argument.id) if isinstance(argument, ast.Name) else None


def _scopes(tree: ast.Module) -> list[list[ast.AST]]:
    """The nodes of the module's own scope, then of each function in it (a train step)."""
    scopes = [scope_nodes(tree)]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scopes.append(scope_nodes(node))
    return scopes


def _trains(nodes: list[ast.AST]) -> bool:
    """Whether a scope trains: it opens a GradientTape or applies gradients."""
    return any(isinstance(n, ast.Call) and call_name(n) in _TRAINING_CALLS for n in nodes)


def _trained_on_normal(model: str, sources: list[str]) -> tuple[str, int, str] | None:
    """Where ``model`` is called on a normal draw: (the draw as written, its line, the
    index of the source in ``sources``)."""
    for index, source in enumerate(sources):
        if model not in source or ("normal" not in source and "randn" not in source):
            continue
        tree = parsed_source(source)
        if tree is None:
            continue
        for nodes in _scopes(tree):
            if not _trains(nodes):
                continue  # a call on normal noise to try a shape is not training
            bound = _bound_draws(nodes, _NORMAL)
            for name, call, argument in _model_calls(nodes):
                if name != model:
                    continue
                draw = _fed(argument, bound, _NORMAL)
                if draw is not None:
                    written = ast.get_source_segment(source, draw) or "a normal draw"
                    return " ".join(written.split()), call.lineno, str(index)
    return None


def _fix(draw: ast.Call, source: str) -> str | None:
    """The uniform draw written with the normal function, when nothing else changes."""
    if any(k.arg in _RANGE_KEYWORDS for k in draw.keywords):
        return None
    name = call_name(draw)
    if name == "uniform" and len(draw.args) > 1:
        return None  # positional low/high (NumPy) or a dtype: not a plain swap
    written = ast.get_source_segment(source, draw)
    if written is None or name not in _REPLACEMENT or not isinstance(draw.func, ast.Attribute):
        return None
    head = ast.get_source_segment(source, draw.func.value)
    tail = written[len(ast.get_source_segment(source, draw.func) or "") :]
    if head is None:
        return None
    return f"{head}.{_REPLACEMENT[name]}{tail}"


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if "uniform" not in source and "rand(" not in source:
        return []
    if len(source) > MAX_CELL_CHARS:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    nodes = scope_nodes(tree)
    bound = _bound_draws(nodes, _UNIFORM)
    history = namespace.get("In")
    earlier: list[str] = []
    if type(history) is list:
        earlier = [cell for cell in history[-HISTORY_CELLS:] if type(cell) is str]
    found: list[Note] = []
    told: set[str] = set()
    for model, call, argument in _model_calls(nodes):
        if model in told or value_kind(namespace.get(model)) not in ("model", "layer"):
            continue
        draw = _fed(argument, bound, _UNIFORM)
        if draw is None:
            continue
        # The current cell is the history's last entry: search it too (a step defined here).
        trained = _trained_on_normal(model, [*earlier, source])
        if trained is None:
            continue
        told.add(model)
        normal, normal_line, _ = trained
        called = " ".join((ast.get_source_segment(source, call) or model).split())
        uniform = " ".join((ast.get_source_segment(source, draw) or "a uniform draw").split())
        fix = _fix(draw, source)
        text = (
            f"`{called}` (line {call.lineno} of this cell) gives `{model}` noise from "
            f"`{uniform}`, values between 0 and 1, but `{model}` is given `{normal}` elsewhere "
            f"in this notebook (line {normal_line} of the cell that calls it so), noise centred "
            f"on 0 with values of both signs. A generator or decoder only learned to map the "
            f"noise it was trained on: on other noise its outputs do not follow what it "
            f"learned, and nothing raises."
        )
        text += f" Draw it the same way: `{fix}`." if fix else " Draw it the way training did."
        found.append(reports.note(text, SECTION))
    return found
