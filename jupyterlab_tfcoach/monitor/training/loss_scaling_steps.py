"""A custom step under a ``LossScaleOptimizer`` that differentiates the unscaled loss, or
clips the gradients while they are still scaled.

Keras 3's ``LossScaleOptimizer`` wants the gradients of the scaled loss
(``scaled = opt.scale_loss(loss)`` under the tape, ``tape.gradient(scaled, ...)``), and
its ``apply_gradients`` divides them by the loss scale (``2 ** 15`` at the start) before
the inner optimizer runs. Two slips give a step that runs and hardly trains:

- ``tape.gradient(loss, ...)`` of the unscaled loss while the scaled one is computed and
  never read: divided by the scale, every update is about 32768 times too small (and
  small float16 gradients lose the protection scaling gives them);
- ``tf.clip_by_global_norm(grads, c)`` (or ``clip_by_norm`` / ``clip_by_value``) of the
  gradients of the scaled loss before ``opt.apply_gradients``: their norm is the scale
  times the real one, so the clip always bites, and the update that reaches the weights,
  divided afterwards, is about ``c / scale``.

After a completed cell holding ``scale_loss`` (a substring test otherwise), read with
``ast`` per function the cell defines (and its top level): ``S = O.scale_loss(L)`` with
``O`` a name holding a Keras ``LossScaleOptimizer`` after the cell. The first slip: a
``T.gradient(L, ...)`` in the same function, ``S`` read nowhere. The second: ``G =
T.gradient(S, ...)``, then a clip call reading ``G``, then ``O.apply_gradients(...)`` in
the same function. The note names the function, the lines and the optimizer; the fix is
the gradient line of the scaled loss, or, for the clip, the inner optimizer's
``global_clipnorm`` (Keras clips after unscaling) and the clip line deleted.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict
from jupyterlab_tfcoach.monitor.syntax import parsed_source

SECTION = "mixed-precision"
MAX_CELL_CHARS = 50_000
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef)
_CLIPS = frozenset({"clip_by_global_norm", "clip_by_norm", "clip_by_value"})


def _loss_scale_optimizer(value: Any) -> bool:
    try:
        return any(
            k.__name__ == "LossScaleOptimizer" and str(k.__module__).startswith("keras")
            for k in type(value).__mro__
        )
    except Exception:
        return False


def _initial_scale(value: Any) -> str:
    own = instance_dict(value) or {}
    scale = own.get("initial_scale")
    if type(scale) in (int, float) and 1 < scale < 1e12:
        return f"{scale:g}"
    return "2 ** 15"


def _statements(scope: ast.AST) -> list[ast.stmt]:
    """The scope's statements in source order, without those of nested definitions."""
    found: list[ast.stmt] = []

    def visit(body: list[ast.stmt]) -> None:
        for statement in body:
            found.append(statement)
            if isinstance(statement, (*_SCOPES, ast.ClassDef)):
                continue
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(statement, name, None)
                if type(inner) is list:
                    visit([s for s in inner if isinstance(s, ast.stmt)])
            for handler in getattr(statement, "handlers", []) or []:
                visit(handler.body)

    visit(list(getattr(scope, "body", [])))
    return found


def _simple(statement: ast.stmt) -> list[ast.AST]:
    """A statement's own nodes (a compound statement's header only)."""
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        return [item.context_expr for item in statement.items]
    if isinstance(statement, (ast.For, ast.AsyncFor)):
        return [statement.target, statement.iter]
    if isinstance(statement, (ast.If, ast.While)):
        return [statement.test]
    if isinstance(statement, (*_SCOPES, ast.ClassDef)):
        return []
    return [statement]


def _method_call(node: ast.AST, method: str) -> ast.Call | None:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == method
        and isinstance(node.func.value, ast.Name)
    ):
        return node
    return None


def _single_target(statement: ast.stmt) -> str | None:
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    ):
        return statement.targets[0].id
    return None


def _reads(nodes: list[ast.AST], name: str) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
        for node in nodes
        for n in ast.walk(node)
    )


def _scope_note(
    function: str | None, scope: ast.AST, namespace: Mapping[str, Any], lines: list[str]
) -> Note | None:
    statements = _statements(scope)
    where = f"`{function}`" if function else "This cell"
    for index, statement in enumerate(statements):
        scaled_name = _single_target(statement)
        call = _method_call(getattr(statement, "value", None), "scale_loss")
        if scaled_name is None or call is None or len(call.args) != 1:
            continue
        loss = call.args[0]
        owner = call.func.value.id  # type: ignore[attr-defined]
        optimizer = namespace.get(owner)
        if not isinstance(loss, ast.Name) or not _loss_scale_optimizer(optimizer):
            continue
        scale = _initial_scale(optimizer)
        others = [part for s in statements if s is not statement for part in _simple(s)]
        scaled_line = lines[statement.lineno - 1].strip()
        if not _reads(others, scaled_name):
            for later in statements[index + 1 :]:
                for node in _simple(later):
                    for found in ast.walk(node):
                        gradient = _method_call(found, "gradient")
                        if (
                            gradient is not None
                            and gradient.args
                            and isinstance(gradient.args[0], ast.Name)
                            and gradient.args[0].id == loss.id
                            and later.lineno == later.end_lineno
                        ):
                            return _unscaled_note(
                                where,
                                owner,
                                scaled_name,
                                loss.id,
                                scaled_line,
                                statement.lineno,
                                later,
                                gradient,
                                lines,
                                scale,
                            )
            continue
        clipped = _clipped_note(
            where, owner, scaled_name, statements[index + 1 :], lines, scale, scope, namespace
        )
        if clipped is not None:
            return clipped
    return None


def _unscaled_note(
    where: str,
    owner: str,
    scaled: str,
    loss: str,
    scaled_line: str,
    scaled_at: int,
    later: ast.stmt,
    gradient: ast.Call,
    lines: list[str],
    scale: str,
) -> Note:
    written = lines[later.lineno - 1]
    start, end = gradient.args[0].col_offset, gradient.args[0].end_col_offset or 0
    fixed = (written[:start] + scaled + written[end:]).strip()
    text = (
        f"{where} scales the loss (`{scaled_line}`, line {scaled_at}) but takes the "
        f"gradients of the unscaled `{loss}` (line {later.lineno}), and `{scaled}` is never "
        f"read. `{owner}` is a LossScaleOptimizer: its `apply_gradients` divides the "
        f"gradients by the loss scale ({scale} at the start), so every update is that many "
        f"times too small and the model barely trains (small float16 gradients also lose "
        f"the protection scaling gives them). Nothing raises. Differentiate the scaled loss: "
        f"write line {later.lineno} as `{fixed}`."
    )
    return reports.note(text, SECTION)


def _clipped_note(
    where: str,
    owner: str,
    scaled: str,
    statements: list[ast.stmt],
    lines: list[str],
    scale: str,
    scope: ast.AST,
    namespace: Mapping[str, Any],
) -> Note | None:
    gradients: str | None = None
    clip: ast.stmt | None = None
    clip_call: ast.Call | None = None
    for statement in statements:
        nodes = _simple(statement)
        if gradients is None:
            target = _single_target(statement)
            value = getattr(statement, "value", None)
            gradient = _method_call(value, "gradient") if value is not None else None
            if (
                target is not None
                and gradient is not None
                and gradient.args
                and isinstance(gradient.args[0], ast.Name)
                and gradient.args[0].id == scaled
            ):
                gradients = target
            continue
        if clip is None:
            for node in nodes:
                for found in ast.walk(node):
                    if (
                        isinstance(found, ast.Call)
                        and isinstance(found.func, ast.Attribute)
                        and found.func.attr in _CLIPS
                        and _reads([statement], gradients)
                    ):
                        clip, clip_call = statement, found
                        break
                if clip is not None:
                    break
            continue
        for node in nodes:
            for found in ast.walk(node):
                applied = _method_call(found, "apply_gradients")
                if applied is not None and applied.func.value.id == owner:  # type: ignore[attr-defined]
                    return _clip_note(
                        where,
                        owner,
                        clip,
                        clip_call,  # type: ignore[arg-type]
                        lines,
                        scale,
                        scope,
                        namespace,
                    )
    return None


def _limit(
    limit: ast.expr, scope: ast.AST, namespace: Mapping[str, Any], lines: list[str]
) -> str | None:
    """The clip's limit as the optimizer can be given it: a number written there, a
    parameter's default number, or a global name holding a number."""
    if isinstance(limit, ast.Constant) and type(limit.value) in (int, float):
        return ast.get_source_segment("\n".join(lines), limit)
    if not isinstance(limit, ast.Name):
        return None
    arguments = getattr(scope, "args", None)
    if isinstance(arguments, ast.arguments):
        positional = [*arguments.posonlyargs, *arguments.args]
        defaults: list[tuple[ast.arg, ast.expr | None]] = list(
            zip(
                positional[len(positional) - len(arguments.defaults) :],
                arguments.defaults,
                strict=True,
            )
        )
        defaults += list(zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True))
        for parameter, default in defaults:
            if parameter.arg == limit.id:
                if isinstance(default, ast.Constant) and type(default.value) in (int, float):
                    return ast.get_source_segment("\n".join(lines), default)
                return None
        if any(parameter.arg == limit.id for parameter in positional):
            return None
    if type(namespace.get(limit.id)) in (int, float):
        return limit.id
    return None


def _with_clip(owner: str, keyword: str, limit: str | None, source: str) -> str | None:
    """``owner = LossScaleOptimizer(SGD(...))`` at the cell's top level, the inner
    optimizer's call given ``keyword=limit`` (one line, by ``ast.unparse``)."""
    tree = parsed_source(source)
    if tree is None or not limit:
        return None
    for statement in reversed(tree.body):
        if _single_target(statement) != owner or not isinstance(statement, ast.Assign):
            continue
        wrapper = statement.value
        if not isinstance(wrapper, ast.Call):
            return None
        inner = wrapper.args[0] if wrapper.args else None
        inner = inner or next(
            (k.value for k in wrapper.keywords if k.arg == "inner_optimizer"), None
        )
        if not isinstance(inner, ast.Call) or any(
            k.arg in ("clipnorm", "clipvalue", "global_clipnorm") for k in inner.keywords
        ):
            return None
        added = ast.keyword(arg=keyword, value=ast.Name(id=limit, ctx=ast.Load()))
        inner.keywords.append(added)
        try:
            fixed = f"{owner} = {ast.unparse(wrapper)}"
        except Exception:
            return None
        finally:
            inner.keywords.remove(added)
        return fixed if len(fixed) <= 200 else None
    return None


def _clip_note(
    where: str,
    owner: str,
    clip: ast.stmt,
    call: ast.Call,
    lines: list[str],
    scale: str,
    scope: ast.AST,
    namespace: Mapping[str, Any],
) -> Note:
    clip_line = lines[clip.lineno - 1].strip()
    limit = call.args[1] if len(call.args) > 1 else None
    limit_text = _limit(limit, scope, namespace, lines) if limit is not None else None
    name = call.func.attr  # type: ignore[attr-defined]
    keyword = {"clip_by_global_norm": "global_clipnorm", "clip_by_norm": "clipnorm"}.get(name)
    made = _with_clip(owner, keyword, limit_text, "\n".join(lines)) if keyword else None
    if keyword and limit_text and "\n" not in limit_text:
        way = (
            f"give the optimizer `{owner}` wraps `{keyword}={limit_text}` (Keras clips after "
            f"`{owner}` has unscaled the gradients) and delete line {clip.lineno}"
        )
        if made is not None:
            way += f": `{made}`"
    else:
        way = (
            f"clip after unscaling: give the optimizer `{owner}` wraps a clip argument "
            f"(`global_clipnorm`, `clipnorm`, `clipvalue`) and delete line {clip.lineno}"
        )
    text = (
        f"{where} clips the gradients of the scaled loss (`{clip_line}`, line {clip.lineno}) "
        f"before `{owner}.apply_gradients` unscales them. They are still multiplied by the "
        f"loss scale ({scale} at the start), so the clip always bites, and after the "
        f"division the update that reaches the weights is about the limit divided by the "
        f"scale: the model hardly moves. Nothing raises. To clip the real gradients, {way}."
    )
    return reports.note(text, SECTION)


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if "scale_loss" not in source or len(source) > MAX_CELL_CHARS:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    lines = source.splitlines()
    scopes: list[tuple[str | None, ast.AST]] = [(None, tree)]
    scopes += [(n.name, n) for n in ast.walk(tree) if isinstance(n, _SCOPES)]
    for function, scope in scopes:
        found = _scope_note(function, scope, namespace, lines)
        if found is not None:
            return [found]
    return []
