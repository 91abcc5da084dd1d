"""A hand-written update that adds the gradient of a loss: gradient ascent.

A gradient points where the loss grows. A custom step written as
``v.assign_add(lr * g)`` (or ``v.assign(v + lr * g)``), with ``g`` the tape's gradient of
the loss and ``lr`` a positive step size, moves every variable uphill: the loss rises step
after step instead of falling. Nothing raises, and inside a ``tf.function`` the monitor's
per-step samples of the tape see nothing.

Read from the source of the cell and of the notebook functions its top level calls (by
``inspect``, never called), per scope: ``g`` is a name bound from ``tape.gradient(T, ...)``
(``g_w, g_b = tape.gradient(...)``, or the loop name of ``for v, g in zip(..., grads)``
over its result, or ``grads[i]``), the update is ``X.assign_add(c * g)`` /
``X.assign(X + c * g)`` (either order of the product), and ``c`` is a number above zero
(a literal, or a name holding one in the namespace). Told when one of these holds:

- ``T`` is a loss by its name, or by the name of the function whose call computed it
  (``loss``, ``cost``, ``error``, ``mse``, ``nll``...), and no list of numbers the cell
  bound fell (a fall says the learner minimises something we cannot read);
- a list of at least three numbers the cell bound at its top level rose from its first to
  its last element (or ended non-finite): the symptom, quoted in the note.

The same step written functionally, as MAML's differentiable inner loop writes it, is
read too: ``fast = [w + c * g for w, g in zip(fast, grads)]`` (or ``w_new = w + c * g``),
new tensors made from the very sources given to ``tape.gradient``; ``c`` may be a
parameter of the function, read from its default (``lr=INNER_LR``). Its fix keeps the
functional form (``w - c * g``, no ``assign``), so that an outer tape still differentiates
through the step; a tensor made from an input (``x``, ``image``...) is left alone.

Silent for ascent written on purpose: ``T`` named as a quantity to maximise (a reward, a
likelihood, a score: ``maximised_targets``), the update of an input (the variable is an
argument of a call inside the tape, or named as an image, input, perturbation or noise:
an adversarial step), an update through ``sign(g)`` or ``-lr * g``, and ``assign_sub``.
The fix is the line with ``assign_sub`` (or ``X - c * g``).
"""

from __future__ import annotations

import ast
import functools
import math
import numbers
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    dotted_name,
    function_scopes,
    is_tape_gradient,
    number_literal,
    parsed_source,
    scope_nodes,
    tape_names,
)
from jupyterlab_tfcoach.monitor.training.maximised_targets import _MAXIMISED
from jupyterlab_tfcoach.monitor.training.user_code import (
    called_function_sources,
    called_names,
)

SECTION = "training-loop"
MAX_CELL_CHARS = 50_000
MAX_LIST = 100_000
MIN_SAMPLES = 3
_CACHED_SOURCES = 64
_LOSS_WORDS = frozenset(
    {"loss", "losses", "cost", "costs", "error", "err", "mse", "mae", "nll", "rmse", "risk"}
)
# Names a learner gives to an input moved on purpose (adversarial examples, feature
# visualisation): an ascent on those is meant.
_INPUT_WORDS = frozenset(
    {
        "adv",
        "adversarial",
        "perturbation",
        "perturb",
        "delta",
        "attack",
        "noise",
        "image",
        "images",
        "img",
        "input",
        "inputs",
    }
)

# A new tensor made from an input (``x2 = x + eps * g``) is more often an adversarial or
# visualisation step, on purpose, than a weight update.
_FUNCTIONAL_INPUT_WORDS = _INPUT_WORDS | {"x", "xs", "inp", "pixels", "sample", "samples"}


def _words(name: str) -> set[str]:
    return {part for part in re.split(r"[_\d.]+", name.lower()) if part}


@dataclass(frozen=True)
class Ascent:
    """One update adding a step size times a gradient, as the source reads."""

    statement: str  # ``var.assign_add(lr * g)``
    fix: str  # ``var.assign_sub(lr * g)``
    line: int
    step: str  # ``lr``
    step_value: float | None  # the literal, None when ``step`` is a name
    target: str  # ``loss``
    loss_named: bool
    gradients: str  # ``grads`` (the name bound from tape.gradient)
    sources: str  # ``[log_omega, raw_zeta]``
    function: str | None  # the scope's function name, None for the cell's top level
    fed_to: tuple[str, ...]  # names called with the variable in the tape: a model's input?
    # A new tensor bound (``fast = [w + lr * g for ...]``), no variable assigned: a
    # functional update, whose fix keeps that form.
    functional: bool = False
    # ``step`` is a parameter of the function: its default's text (``INNER_LR``, ``0.1``).
    step_default: str | None = None


def _segment(source: str, node: ast.AST) -> str:
    return ast.get_source_segment(source, node) or ""


def _scaled_gradient(node: ast.AST, gradients: set[str], lists: set[str]) -> ast.AST | None:
    """The step ``c`` of ``c * g`` / ``g * c`` with ``g`` a gradient (or ``grads[i]``)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return None
    for step, gradient in ((node.left, node.right), (node.right, node.left)):
        if isinstance(gradient, ast.Name) and gradient.id in gradients:
            return step
        if (
            isinstance(gradient, ast.Subscript)
            and isinstance(gradient.value, ast.Name)
            and gradient.value.id in lists
        ):
            return step
    return None


def _gradient_bindings(
    nodes: list[ast.AST],
) -> tuple[dict[str, tuple[str, str, str]], dict[str, tuple[str, str, str]]]:
    """Names holding one gradient and names holding the list, each with (target, result
    name, sources) of the ``tape.gradient`` that made it."""
    tapes = {name for node in nodes if isinstance(node, ast.With) for name in tape_names(node)}
    singles: dict[str, tuple[str, str, str]] = {}
    lists: dict[str, tuple[str, str, str]] = {}
    for node in nodes:
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.value, ast.Call)
            and any(is_tape_gradient(node.value, tape) for tape in tapes)
            and len(node.value.args) >= 2
            and isinstance(node.value.args[0], ast.Name)
        ):
            continue
        target = node.value.args[0].id
        sources = ast.unparse(node.value.args[1])
        bound = node.targets[0]
        if isinstance(bound, ast.Name):
            lists[bound.id] = (target, bound.id, sources)
        elif isinstance(bound, ast.Tuple | ast.List):
            label = ", ".join(ast.unparse(e) for e in bound.elts)
            for element in bound.elts:
                if isinstance(element, ast.Name):
                    singles[element.id] = (target, label, sources)
    # ``for v, g in zip(variables, grads)``: ``g`` is one gradient of ``grads``.
    for node in nodes:
        if not (
            isinstance(node, ast.For)
            and isinstance(node.iter, ast.Call)
            and call_name(node.iter) == "zip"
            and isinstance(node.target, ast.Tuple)
            and len(node.target.elts) == len(node.iter.args)
        ):
            continue
        for element, iterated in zip(node.target.elts, node.iter.args, strict=True):
            if (
                isinstance(element, ast.Name)
                and isinstance(iterated, ast.Name)
                and iterated.id in lists
            ):
                singles[element.id] = lists[iterated.id]
    return singles, lists


def _inputs_of_calls(nodes: list[ast.AST]) -> dict[str, set[str]]:
    """For each name passed (anywhere in an argument) to a call ``M(...)`` of a plain name
    inside a tape's block, the names ``M`` it is passed to."""
    found: dict[str, set[str]] = {}
    for node in nodes:
        if not (isinstance(node, ast.With) and tape_names(node)):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name):
                for argument in [*inner.args, *(k.value for k in inner.keywords)]:
                    for name in ast.walk(argument):
                        if isinstance(name, ast.Name):
                            found.setdefault(name.id, set()).add(inner.func.id)
    return found


def _computed_by(nodes: list[ast.AST], target: str) -> str | None:
    """The function name of the call that computed ``target`` (``loss = loss_fn()``)."""
    for node in nodes:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == target for t in node.targets)
            and isinstance(node.value, ast.Call)
        ):
            return call_name(node.value)
    return None


def _parameter_defaults(scope: ast.AST) -> dict[str, ast.expr]:
    """The defaults of a function scope's parameters (``lr=INNER_LR``)."""
    arguments = getattr(scope, "args", None)
    if not isinstance(arguments, ast.arguments):
        return {}
    positional = [*arguments.posonlyargs, *arguments.args]
    found: dict[str, ast.expr] = {}
    for parameter, default in zip(
        positional[len(positional) - len(arguments.defaults) :], arguments.defaults, strict=True
    ):
        found[parameter.arg] = default
    for parameter, keyword_default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        if keyword_default is not None:
            found[parameter.arg] = keyword_default
    return found


def _step_default(source: str, step: ast.AST, scope: ast.AST) -> str | None:
    """The default of the parameter ``step`` names, when it is a number or a name."""
    if not isinstance(step, ast.Name):
        return None
    default = _parameter_defaults(scope).get(step.id)
    if default is None:
        return None
    if isinstance(default, ast.Name) or number_literal(default) is not None:
        return _segment(source, default)
    return None


def _zip_pairs(
    generator: ast.comprehension, lists: dict[str, tuple[str, str, str]]
) -> tuple[str, str, str, str] | None:
    """``for w, g in zip(fast, grads)`` with ``grads`` a gradient list: (``w``, ``g``,
    ``fast``, ``grads``)."""
    iterated = generator.iter
    target = generator.target
    if not (
        isinstance(iterated, ast.Call)
        and call_name(iterated) == "zip"
        and len(iterated.args) == 2
        and isinstance(target, ast.Tuple)
        and len(target.elts) == 2
        and all(isinstance(e, ast.Name) for e in target.elts)
    ):
        return None
    (weight, gradient), (weights, gradients) = target.elts, iterated.args
    assert isinstance(weight, ast.Name) and isinstance(gradient, ast.Name)
    weights_name, gradients_name = dotted_name(weights), dotted_name(gradients)
    if weights_name is None or gradients_name is None:
        return None
    if gradients_name in lists and weights_name not in lists:
        return weight.id, gradient.id, weights_name, gradients_name
    if weights_name in lists and gradients_name not in lists:
        return gradient.id, weight.id, gradients_name, weights_name
    return None


def _added_step(
    value: ast.AST, weight: str, gradients: set[str], lists: set[str]
) -> tuple[ast.AST, ast.AST] | None:
    """``(c, c * g)`` of ``weight + c * g`` (either order), or None."""
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
        return None
    for kept, term in ((value.left, value.right), (value.right, value.left)):
        if isinstance(kept, ast.Name) and kept.id == weight:
            step = _scaled_gradient(term, gradients, lists)
            if step is not None:
                return step, term
    return None


def _functional_ascents(
    source: str,
    scope: ast.AST,
    nodes: list[ast.AST],
    singles: dict[str, tuple[str, str, str]],
    lists: dict[str, tuple[str, str, str]],
    inputs: dict[str, set[str]],
) -> list[Ascent]:
    """``fast = [w + lr * g for w, g in zip(fast, grads)]`` and ``new_w = w + lr * g_w``:
    new tensors that add the gradient, as MAML's inner loop writes its step."""
    function = getattr(scope, "name", None)
    found: list[Ascent] = []
    for node in nodes:
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            continue
        bound = node.targets[0].id
        value = node.value
        if isinstance(value, ast.Call) and call_name(value) in ("list", "tuple") and value.args:
            value = value.args[0]
        element: ast.AST
        if isinstance(value, ast.ListComp | ast.GeneratorExp) and len(value.generators) == 1:
            pairs = _zip_pairs(value.generators[0], lists)
            if pairs is None or value.generators[0].ifs:
                continue
            weight, gradient, weights, gradient_list = pairs
            element = value.elt
            added = _added_step(element, weight, {gradient}, set())
            if added is None:
                continue
            made = lists[gradient_list]
            receiver = weights
        elif isinstance(value, ast.BinOp):
            # ``g = tape.gradient(loss, w)`` of one source is one gradient too.
            one = {
                **singles,
                **{name: made for name, made in lists.items() if made[2].isidentifier()},
            }
            element = value
            weight = ""
            for side in (value.left, value.right):
                if isinstance(side, ast.Name) and side.id not in one:
                    weight = side.id
            added = _added_step(element, weight, set(one), set(lists)) if weight else None
            made_by = _made_by(added[1], one, lists) if added is not None else None
            if added is None or made_by is None:
                continue
            made = made_by
            receiver = weight
        else:
            continue
        step, term = added
        if not (isinstance(step, ast.Name) or number_literal(step) is not None):
            continue
        target, gradients, sources = made
        if receiver != sources:
            continue  # the gradient of other tensors added: not read as a step
        if (_words(receiver) | _words(bound) | _words(weight)) & _FUNCTIONAL_INPUT_WORDS:
            continue
        computed = _computed_by(nodes, target)
        target_words = _words(target) | (_words(computed) if computed else set())
        if target_words & _MAXIMISED:
            continue
        statement = _segment(source, node)
        element_text = _segment(source, element)
        if not statement or not element_text or element_text not in statement:
            continue
        fix = statement.replace(element_text, f"{weight} - {_segment(source, term)}", 1)
        found.append(
            Ascent(
                statement=statement,
                fix=fix,
                line=node.lineno,
                step=_segment(source, step),
                step_value=number_literal(step),
                target=target,
                loss_named=bool(target_words & _LOSS_WORDS),
                gradients=gradients,
                sources=sources,
                function=function,
                fed_to=tuple(sorted(inputs.get(receiver, ()))),
                functional=True,
                step_default=_step_default(source, step, scope),
            )
        )
    return found


def _scope_ascents(source: str, scope: ast.AST) -> list[Ascent]:
    nodes = scope_nodes(scope)
    singles, lists = _gradient_bindings(nodes)
    if not singles and not lists:
        return []
    inputs = _inputs_of_calls(nodes)
    function = getattr(scope, "name", None)
    found: list[Ascent] = _functional_ascents(source, scope, nodes, singles, lists, inputs)
    for node in nodes:
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("assign_add", "assign")
            and len(node.args) == 1
            and not node.keywords
        ):
            continue
        receiver = dotted_name(node.func.value)
        if receiver is None:
            continue
        value = node.args[0]
        if node.func.attr == "assign":
            # ``X.assign(X + c * g)``: the added term, with ``X`` itself on the other side.
            if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
                continue
            if dotted_name(value.left) == receiver:
                value = value.right
            elif dotted_name(value.right) == receiver:
                value = value.left
            else:
                continue
        step = _scaled_gradient(value, set(singles), set(lists))
        if step is None:
            continue
        if not (isinstance(step, ast.Name) or number_literal(step) is not None):
            continue
        made = _made_by(value, singles, lists)
        if made is None:
            continue
        target, gradients, sources = made
        receiver_words = _words(receiver)
        if receiver_words & _INPUT_WORDS:
            continue
        target_words = _words(target)
        computed = _computed_by(nodes, target)
        computed_words = _words(computed) if computed else set()
        if (target_words | computed_words) & _MAXIMISED:
            continue
        statement = _segment(source, node)
        if not statement:
            continue
        step_text = _segment(source, step)
        term = _segment(source, value)
        if node.func.attr == "assign_add":
            fix = f"{receiver}.assign_sub({term})"
        else:
            fix = f"{receiver}.assign({receiver} - {term})"
        found.append(
            Ascent(
                statement=statement,
                fix=fix,
                line=node.lineno,
                step=step_text,
                step_value=number_literal(step),
                target=target,
                loss_named=bool((target_words | computed_words) & _LOSS_WORDS),
                gradients=gradients,
                sources=sources,
                function=function,
                fed_to=tuple(sorted(inputs.get(receiver.split(".")[0], ()))),
                step_default=_step_default(source, step, scope),
            )
        )
    return found


def _made_by(
    value: ast.AST,
    singles: dict[str, tuple[str, str, str]],
    lists: dict[str, tuple[str, str, str]],
) -> tuple[str, str, str] | None:
    if not isinstance(value, ast.BinOp):
        return None
    for side in (value.left, value.right):
        if isinstance(side, ast.Name) and side.id in singles:
            return singles[side.id]
        if (
            isinstance(side, ast.Subscript)
            and isinstance(side.value, ast.Name)
            and side.value.id in lists
        ):
            return lists[side.value.id]
    return None


@functools.lru_cache(maxsize=_CACHED_SOURCES)
def _source_ascents(source: str) -> tuple[Ascent, ...]:
    tree = parsed_source(source)
    if tree is None:
        return ()
    found: list[Ascent] = []
    for scope in function_scopes(tree):
        found.extend(_scope_ascents(source, scope))
    return tuple(found)


def _keras_layer(value: Any) -> bool:
    try:
        kinds = type(value).__mro__
    except Exception:
        return False
    return any(
        k.__name__ == "Layer" and k.__module__.startswith(("keras", "tf_keras")) for k in kinds
    )


def _literal(text: str) -> float | None:
    try:
        return number_literal(ast.parse(text, mode="eval").body)
    except Exception:
        return None


def _positive(ascent: Ascent, namespace: Mapping[str, Any]) -> bool:
    if ascent.step_value is not None:
        return ascent.step_value > 0
    value = namespace.get(ascent.step)
    if value is None and ascent.step_default is not None:
        # A parameter of the function: its default (``lr=INNER_LR``), as written.
        default = _literal(ascent.step_default)
        value = default if default is not None else namespace.get(ascent.step_default)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    try:
        return float(value) > 0
    except Exception:
        return False


def _numbers(value: Any) -> list[float] | None:
    if type(value) is not list or not MIN_SAMPLES <= len(value) <= MAX_LIST:
        return None
    out: list[float] = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, numbers.Real):
            return None
        out.append(float(item))
    return out


def _bound_lists(tree: ast.Module, namespace: Mapping[str, Any]) -> list[tuple[str, list[float]]]:
    """Lists of numbers held by the names the cell's top level binds."""
    found: list[tuple[str, list[float]]] = []
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                names = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
                for name in names:
                    if isinstance(name, ast.Name):
                        values = _numbers(namespace.get(name.id))
                        if values is not None:
                            found.append((name.id, values))
    return found


def _rose(values: list[float]) -> str | None:
    first, last = values[0], values[-1]
    if not math.isfinite(first):
        return None
    if not math.isfinite(last):
        return f"went from {first:.4g} to {last}"
    if last > first:
        return f"rose from {first:.4g} to {last:.4g}"
    return None


class AscentCheck:
    """Each update told once (by its statement and function), in the cell that runs it."""

    def __init__(self) -> None:
        self._told: set[tuple[str | None, str]] = set()

    def notes(self, source: str, namespace: Mapping[str, Any]) -> list[Note]:
        if len(source) > MAX_CELL_CHARS:
            return []
        tree = parsed_source(source)
        if tree is None:
            return []
        ascents: list[tuple[Ascent, str | None]] = []
        if ".gradient(" in source:
            # A function defined here is told where it runs: here, or in a later cell.
            called = called_names(source)
            ascents.extend(
                (a, None)
                for a in _source_ascents(source)
                if a.function is None or a.function in called
            )
        if not ascents:
            for name, text in called_function_sources(source, namespace, ".gradient("):
                ascents.extend((a, name) for a in _source_ascents(text))
        if not ascents:
            return []
        lists = _bound_lists(tree, namespace)
        risen = [(name, how) for name, values in lists if (how := _rose(values)) is not None]
        fell = any(_rose(values) is None and values[-1] < values[0] for _, values in lists)
        for ascent, called in ascents:
            key = (ascent.function, ascent.statement)
            if key in self._told or not _positive(ascent, namespace):
                continue
            if any(_keras_layer(namespace.get(m)) for m in ascent.fed_to):
                continue  # an input moved through a model: an adversarial step, meant
            if not risen and (fell or not ascent.loss_named):
                continue
            # The other updates of the same step, told with their fixes in the same entry.
            others = [
                a
                for a, _ in ascents
                if a is not ascent and a.function == ascent.function and a.target == ascent.target
            ]
            self._told.update((a.function, a.statement) for a in [ascent, *others])
            return [reports.note(_text(ascent, others, called, risen), SECTION)]
        return []


def _text(
    ascent: Ascent, others: list[Ascent], called: str | None, risen: list[tuple[str, str]]
) -> str:
    fixes = " and ".join(f"`{a.fix}`" for a in [ascent, *others])
    where = f" in `{ascent.function}`" if ascent.function else ""
    if called and called != ascent.function:
        where += f" (called here through `{called}`)"
    symptom = (
        f": `{risen[0][0]}` {risen[0][1]}"
        if risen
        else ": the loss grows at every step instead of shrinking"
    )
    if ascent.functional:
        return (
            f"Gradient ascent: `{ascent.statement}`{where} adds `{ascent.step}` times the "
            f"gradient of `{ascent.target}` (`{ascent.gradients}` from `tape.gradient("
            f"{ascent.target}, {ascent.sources})`) to the weights. A gradient points where "
            f"the loss increases, so each step moves them uphill{symptom}. Nothing raises. "
            f"Gradient descent steps against the gradient: {fixes}. Keep this functional "
            "form (new tensors, no `assign`), so that an outer tape can still "
            "differentiate through the step."
        )
    return (
        f"Gradient ascent: `{ascent.statement}`{where} adds `{ascent.step}` times the "
        f"gradient of `{ascent.target}` (`{ascent.gradients}` from `tape.gradient("
        f"{ascent.target}, {ascent.sources})`) to each variable in `{ascent.sources}`. "
        "A gradient points where the loss increases, so each step moves them uphill"
        f"{symptom}. Nothing raises. Gradient descent steps against the gradient: "
        f"{fixes}, then start the "
        "variables afresh and train again."
    )


_CHECK = AscentCheck()


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The check of this kernel (the updates told so far: source text only)."""
    return _CHECK.notes(source, namespace)
