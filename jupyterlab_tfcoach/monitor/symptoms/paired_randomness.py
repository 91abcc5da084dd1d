"""A random transform applied separately to two tensors that must stay aligned.

``def augment(image, mask): image = tf.image.random_flip_left_right(image); mask =
tf.image.random_flip_left_right(mask)`` draws one coin per call: about half the time the
image is flipped and its mask is not, so the pairs the model trains on no longer line up
(a segmentation mask, a box, a second view of the same scene). The same happens with a
Keras random layer called once per tensor (``flip(image)``, ``flip(mask)``: each call
draws again), and with two branches each testing a draw of its own (``if
tf.random.uniform(()) > 0.5: image = ...`` then the same for ``mask``). Nothing raises.

Found after a cell that completed, in the functions it defines (a cell with no ``def`` or
``lambda`` costs two substring tests): a random transform is a call of a ``random_*``
function (``tf.image.random_crop``...; not the ``stateless_random_*`` ones, which give
the same result for the same seed), of a Keras ``Random*`` layer (made inline, held by a
global name, or by an attribute its class's methods assign from a ``Random*(...)``
call), or an ``if`` whose test draws (``tf.random.*``, ``np.random.*``,
``random.random()``) and whose body rebinds a name. Two transforms of the same kind (the
same callee, or two such branches) applied to values that come from two different
parameters of the function (followed through its assignments) are two draws for data
that must move together. A function drawing twice from one parameter (two views of one
image) is not told. The note names the function, the two calls and their lines; fix: one
draw applied to both (for a flip: a coin and ``tf.where``; otherwise both stacked on the
channel axis and transformed once).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import is_library_class
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "tf-data"
MAX_CELL_CHARS = 50_000
# Deterministic twins of the random flips: the fix applies them under one coin.
_FLIPS = {
    "random_flip_left_right": "flip_left_right",
    "random_flip_up_down": "flip_up_down",
}
_DRAW_MODULES = ("random",)


@dataclass
class _Draw:
    kind: str  # the callee as written, or "branch"
    root: str  # the parameter the transformed value comes from
    target: str  # the name the statement rebinds (or the parameter a return transforms)
    statement: ast.stmt
    call: ast.AST  # the transform call, or the if's test
    argument: str = ""  # the transformed value as written


def _is_random_layer(value: Any) -> bool:
    try:
        return any(
            k.__name__.startswith("Random") and is_library_class(k) for k in type(value).__mro__
        )
    except Exception:
        return False


def _random_attributes(tree: ast.Module) -> set[str]:
    """``flip`` of each ``self.flip = layers.RandomFlip(...)`` of the cell's classes."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and (call_name(node.value) or "").startswith("Random")
        ):
            for target in node.targets:
                if isinstance(target, ast.Attribute):
                    found.add(target.attr)
                elif isinstance(target, ast.Name):
                    found.add(target.id)
    return found


def _is_transform(call: ast.Call, namespace: Mapping[str, Any], attributes: set[str]) -> bool:
    func = call.func
    if isinstance(func, ast.Call):  # ``layers.RandomFlip("horizontal")(x)``
        return (call_name(func) or "").startswith("Random")
    name = call_name(call) or ""
    if name.startswith("random_") and isinstance(func, ast.Attribute):
        return True
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        if func.value.id == "self":
            return func.attr in attributes
        return False
    if isinstance(func, ast.Name):
        return func.id in attributes or _is_random_layer(namespace.get(func.id))
    return False


def _draws(test: ast.expr) -> bool:
    """Whether an ``if`` test draws a random number (``tf.random.uniform(()) > 0.5``)."""
    for node in ast.walk(test):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Attribute) and owner.attr in _DRAW_MODULES:
                return True
            if isinstance(owner, ast.Name) and owner.id in _DRAW_MODULES:
                return True
    return False


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _function_draws(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    namespace: Mapping[str, Any],
    attributes: set[str],
    source: str,
) -> list[_Draw]:
    parameters = [a.arg for a in function.args.args if a.arg != "self"]
    roots: dict[str, str] = {p: p for p in parameters}
    found: list[_Draw] = []

    def root_of(node: ast.AST) -> str | None:
        known = {roots[n] for n in _names(node) if n in roots}
        return known.pop() if len(known) == 1 else None

    def add(call: ast.Call, target: str | None, statement: ast.stmt) -> None:
        root = root_of(call.args[0])
        kind = ast.get_source_segment(source, call.func)
        argument = ast.get_source_segment(source, call.args[0])
        if root is not None and kind is not None and argument is not None:
            found.append(_Draw(kind, root, target or root, statement, call, argument))

    def visit(statements: list[ast.stmt]) -> None:
        for statement in statements:
            if isinstance(statement, ast.Return) and isinstance(statement.value, ast.Tuple):
                # ``return flip(image), flip(mask)``
                for item in statement.value.elts:
                    if (
                        isinstance(item, ast.Call)
                        and item.args
                        and _is_transform(item, namespace, attributes)
                    ):
                        add(item, None, statement)
                continue
            if isinstance(statement, ast.If) and _draws(statement.test):
                for inner in statement.body:
                    if isinstance(inner, ast.Assign) and len(inner.targets) == 1:
                        target = inner.targets[0]
                        root = root_of(inner.value)
                        if isinstance(target, ast.Name) and root is not None:
                            found.append(
                                _Draw("branch", root, target.id, statement, statement.test)
                            )
                            break
                continue
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target = statement.targets[0]
                value = statement.value
                if isinstance(target, ast.Name):
                    if (
                        isinstance(value, ast.Call)
                        and value.args
                        and _is_transform(value, namespace, attributes)
                    ):
                        add(value, target.id, statement)
                    root = root_of(value)
                    if root is not None:
                        roots[target.id] = root
                    else:
                        roots.pop(target.id, None)
            for field in ("body", "orelse"):
                inner_statements = getattr(statement, field, None)
                if isinstance(inner_statements, list):
                    visit(inner_statements)

    visit(function.body)
    return found


def _pair(draws: list[_Draw]) -> tuple[_Draw, _Draw] | None:
    for i, first in enumerate(draws):
        for second in draws[i + 1 :]:
            if first.kind == second.kind and first.root != second.root:
                return first, second
    return None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if ("def " not in source and "lambda" not in source) or len(source) > MAX_CELL_CHARS:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    attributes: set[str] | None = None
    owners = {
        id(item): f"{node.name}."
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        for item in node.body
    }
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if len([a for a in node.args.args if a.arg != "self"]) < 2:
            continue
        if attributes is None:
            attributes = _random_attributes(tree)
        pair = _pair(_function_draws(node, namespace, attributes, source))
        if pair is not None:
            text = _text(owners.get(id(node), "") + node.name, *pair, source)
            if text is not None:
                return [reports.note(text, SECTION)]
    return []


def _text(function: str, first: _Draw, second: _Draw, source: str) -> str | None:
    one = ast.get_source_segment(source, first.statement)
    two = ast.get_source_segment(source, second.statement)
    if one is None or two is None:
        return None
    if first.kind == "branch":
        test = ast.get_source_segment(source, first.call)
        what = f"tests a random draw of its own (`{test}`)"
        how = "each `if` draws again"
    else:
        what = f"calls `{first.kind}` on its own"
        how = "each call draws its own random numbers"
    a, b = first.target, second.target
    where = f"line {first.statement.lineno}: `{one.splitlines()[0]}`"
    if first.statement is second.statement:
        where = f"line {first.statement.lineno}"
    else:
        where += f"; line {second.statement.lineno}: `{two.splitlines()[0]}`"
    text = (
        f"`{function}` transforms `{a}` and `{b}` separately ({where}): each {what}, and {how}, "
        f"so `{a}` and `{b}` often get different transforms (one flipped, the other not) "
        f"and the pairs the model learns from no longer line up. Nothing raises. Draw once "
        f"and apply the same transform to both"
    )
    flip = _FLIPS.get(first.kind.rsplit(".", 1)[-1]) if first.kind != "branch" else None
    if flip is not None:
        module = first.kind.rsplit(".", 1)[0]
        text += (
            f": replace the two lines by `coin = tf.random.uniform(()) > 0.5`, "
            f"`{a} = tf.where(coin, {module}.{flip}({a}), {a})` and "
            f"`{b} = tf.where(coin, {module}.{flip}({b}), {b})`."
        )
    elif first.kind == "branch":
        test = ast.get_source_segment(source, first.call)
        text += f": draw the coin once before both, `coin = {test}`, and test `if coin:` twice."
    elif isinstance(first.statement, ast.Assign) and isinstance(second.statement, ast.Assign):
        u, v = first.argument, second.argument
        text += (
            f": stack them on the channel axis and transform once, replacing the two lines "
            f"by `both = {first.kind}(tf.concat([{u}, tf.cast({v}, {u}.dtype)], axis=-1))` "
            f"and `{a}, {b} = both[..., :{u}.shape[-1]], tf.cast(both[..., {u}.shape[-1]:], "
            f"{v}.dtype)`."
        )
    else:
        u, v = first.argument, second.argument
        text += (
            f": stack them on the channel axis and transform once, `both = "
            f"{first.kind}(tf.concat([{u}, tf.cast({v}, {u}.dtype)], axis=-1))`, and return "
            f"`both[..., :{u}.shape[-1]], tf.cast(both[..., {u}.shape[-1]:], {v}.dtype)`."
        )
    return text
