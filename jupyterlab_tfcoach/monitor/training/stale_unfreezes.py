"""A layer made trainable after its model's train step was built, then fit again.

Keras 3 builds a model's train step at the first ``fit`` after ``compile`` and keeps it
until the next ``compile``: the step lists the trainable weights as they were then.
``base.trainable = True`` after that fit (fine-tuning a frozen block) changes the flag,
and ``model.trainable_weights`` lists the block again, but the next ``fit`` reuses the old
step: the block's weights do not change, only the head trains, and nothing warns.

``fit_config.py`` measures it (``StaleUnfreezeRecord``: the outermost layer whose flag is
True now and was False when the step fit reuses was built, none of whose weights changed
during that fit). This module names it from the learner's code (``user_code.cell_sources``:
this cell, then the history ``In`` newest first, never run): the statement that set the
flag (``<ref>.trainable = True`` whose reference, a name, an attribute path or
``.get_layer("name")``, holds the layer or a model holding it), the model's ``compile``
before it, the ``fit`` after it, and a learning rate set on the model's optimizer
between the two. The fix is the learner's own ``compile`` statement again, after the
flag and before the fit, with a new optimizer when theirs is a built one held by a name
(Keras refuses a built optimizer new variables) and the learning rate they set since.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import VariableChange, variable_change
from jupyterlab_tfcoach.monitor.stored_state import keras_layers, stored
from jupyterlab_tfcoach.monitor.syntax import held_at, parsed_source, reference_path
from jupyterlab_tfcoach.monitor.training.user_code import cell_place, cell_sources
from jupyterlab_tfcoach.monitor.variables.namespace_diff import generated_layer_name

SECTION = "trainable-weights"
MAX_LAYERS = 500
MAX_SOURCE_CHARS = 100_000
_RATE_ATTRIBUTES = ("learning_rate", "lr")


class _Place:
    """A statement of one cell: its node, its cell's source and execution count."""

    def __init__(self, node: ast.AST, source: str, count: int | None) -> None:
        self.node = node
        self.source = source
        self.count = count

    @property
    def line(self) -> int:
        return int(getattr(self.node, "lineno", 0))

    def where(self) -> str:
        return cell_place(self.count, self.line)

    def text(self) -> str:
        return ast.get_source_segment(self.source, self.node) or ""


def _top_nodes(tree: ast.Module) -> list[ast.AST]:
    """The cell's nodes outside ``def``/``class`` bodies, in source order."""
    found: list[ast.AST] = []
    pending: list[ast.AST] = list(reversed(tree.body))
    while pending:
        node = pending.pop()
        found.append(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        pending.extend(reversed(list(ast.iter_child_nodes(node))))
    return found


def _layer_named(model: Any, name: str) -> Any:
    for layer in keras_layers(model, MAX_LAYERS):
        if stored(layer, "name") == name:
            return layer
    return None


def _held_by(node: ast.AST, namespace: Mapping[str, Any]) -> Any:
    """What ``node`` (``base``, ``net.encoder``, ``net.get_layer("enc")``) holds now,
    read from the namespace and what Keras stores; None when it is anything else."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get_layer"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and type(node.args[0].value) is str
    ):
        owner = _held_by(node.func.value, namespace)
        return _layer_named(owner, node.args[0].value) if owner is not None else None
    found, value = held_at(reference_path(node), dict(namespace))
    return value if found else None


def _sets_flag(node: ast.AST, layer: Any, namespace: Mapping[str, Any]) -> bool:
    """``<ref>.trainable = True`` whose ``<ref>`` holds ``layer`` or a model holding it."""
    if not (
        isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and node.value.value is True
    ):
        return False
    for target in node.targets:
        if not (isinstance(target, ast.Attribute) and target.attr == "trainable"):
            continue
        held = _held_by(target.value, namespace)
        if held is layer or (
            held is not None and any(item is layer for item in keras_layers(held, MAX_LAYERS))
        ):
            return True
    return False


def _method_call(node: ast.AST, model_name: str, method: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == method
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == model_name
    )


def _rate_statement(node: ast.AST, model_name: str, optimizer_names: set[str]) -> bool:
    """``<model>.optimizer.learning_rate = ...`` (or of a name holding that optimizer)."""
    if not isinstance(node, ast.Assign) or len(node.targets) != 1:
        return False
    path = reference_path(node.targets[0])
    if path is None or path[-1] not in _RATE_ATTRIBUTES:
        return False
    return path[:-1] == (model_name, "optimizer") or (len(path) == 2 and path[0] in optimizer_names)


def _byte_offset(source: str, line: int, column: int) -> int:
    lines = source.encode("utf-8").splitlines(keepends=True)
    return sum(len(text) for text in lines[: line - 1]) + column


def _replaced(source: str, outer: ast.AST, inner: ast.AST, text: str) -> str:
    """``outer``'s source with ``inner`` (inside it) written as ``text``."""
    raw = source.encode("utf-8")
    start = _byte_offset(source, outer.lineno, outer.col_offset)  # type: ignore[attr-defined]
    stop = _byte_offset(source, outer.end_lineno, outer.end_col_offset)  # type: ignore[attr-defined]
    inner_start = _byte_offset(source, inner.lineno, inner.col_offset)  # type: ignore[attr-defined]
    inner_stop = _byte_offset(source, inner.end_lineno, inner.end_col_offset)  # type: ignore[attr-defined]
    return (raw[start:inner_start] + text.encode("utf-8") + raw[inner_stop:stop]).decode("utf-8")


def _one_line(call_text: str) -> str:
    """A call written over several lines, on one line (its own spelling kept)."""
    if "\n" not in call_text:
        return call_text
    if "#" in call_text:
        try:
            return ast.unparse(ast.parse(call_text, mode="eval"))
        except SyntaxError:
            return call_text
    text = re.sub(r"\s*\n\s*", " ", call_text)
    text = re.sub(r"([(\[{]) ", r"\1", text)
    return re.sub(r",?\s*([)\]}])", r"\1", text)


def _optimizer_argument(call: ast.Call) -> ast.expr | None:
    keyword = next((k.value for k in call.keywords if k.arg == "optimizer"), None)
    return keyword if keyword is not None else (call.args[0] if call.args else None)


def _assigned_call(
    name: str, sources: list[str], before: _Place | None
) -> tuple[ast.Call, str] | None:
    """The newest ``name = SomeOptimizer(...)`` of the cells, before ``before`` in its cell."""
    for source in sources:
        if name not in source or len(source) > MAX_SOURCE_CHARS:
            continue
        tree = parsed_source(source)
        if tree is None:
            continue
        found = None
        for node in _top_nodes(tree):
            if before is not None and source is before.source and node is before.node:
                break
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == name
                and isinstance(node.value, ast.Call)
            ):
                found = (node.value, source)
        if found is not None:
            return found
    return None


def _with_rate(call_text: str, rate: str) -> str:
    """An optimizer's construction ``Adam(1e-3)`` given ``rate`` as its learning rate."""
    try:
        call = ast.parse(call_text, mode="eval").body
    except SyntaxError:
        return call_text
    if not isinstance(call, ast.Call):
        return call_text
    given = next((k.value for k in call.keywords if k.arg == "learning_rate"), None)
    if given is None and call.args:
        given = call.args[0]
    if given is not None:
        return _replaced(call_text, call, given, rate)
    inside = call_text[: call_text.rindex(")")].rstrip()
    separator = "" if inside.endswith("(") else ", "
    return f"{inside}{separator}learning_rate={rate})"


class _Reading:
    """The learner's statements around one stale unfreeze."""

    def __init__(
        self, namespace: Mapping[str, Any], cell_source: str, model: Any, model_name: str
    ) -> None:
        self.namespace = namespace
        self.model = model
        self.model_name = model_name
        sources, counts = cell_sources(namespace, cell_source)
        self.cells = [
            (source, count, tree)
            for source, count in zip(sources, counts, strict=True)
            if len(source) <= MAX_SOURCE_CHARS and (tree := parsed_source(source)) is not None
        ]
        self.sources = [source for source, _, _ in self.cells]

    def flip(self, layer: Any) -> tuple[int, _Place] | None:
        """The newest statement setting the layer's flag, and its cell's index."""
        for index, (source, count, tree) in enumerate(self.cells):
            if "trainable" not in source:
                continue
            found = None
            for node in _top_nodes(tree):
                if _sets_flag(node, layer, self.namespace):
                    found = _Place(node, source, count)
            if found is not None:
                return index, found
        return None

    def compile_before(self, flip: tuple[int, _Place] | None) -> _Place | None:
        """The model's last ``compile`` before the flag was set (in its cell, else in an
        older one); without a flag statement, its newest ``compile``."""
        start = flip[0] if flip is not None else 0
        for index in range(start, len(self.cells)):
            source, count, tree = self.cells[index]
            if f"{self.model_name}.compile" not in source:
                continue
            found = None
            for node in _top_nodes(tree):
                if flip is not None and index == flip[0] and node is flip[1].node:
                    break
                if _method_call(node, self.model_name, "compile"):
                    found = _Place(node, source, count)
            if found is not None:
                return found
        return None

    def fit_after(self, flip: tuple[int, _Place] | None) -> _Place | None:
        """This cell's first ``fit`` of the model after the flag was set."""
        source, count, tree = self.cells[0] if self.cells else ("", None, None)
        if tree is None:
            return None
        seen_flip = flip is None or flip[0] != 0
        for node in _top_nodes(tree):
            if flip is not None and node is flip[1].node:
                seen_flip = True
            elif seen_flip and _method_call(node, self.model_name, "fit"):
                return _Place(node, source, count)
        return None

    def rate_since(self, compiled: _Place | None, fit: _Place | None) -> _Place | None:
        """The last learning rate set on the model's optimizer after its compile and
        before this fit, in this cell."""
        optimizer = stored(self.model, "optimizer")
        names = (
            set()
            if optimizer is None
            else {
                name
                for name, value in list(self.namespace.items())[:5000]
                if value is optimizer and type(name) is str and not name.startswith("_")
            }
        )
        if not self.cells:
            return None
        source, count, tree = self.cells[0]
        after_compile = compiled is None or compiled.source is not source
        found = None
        for node in _top_nodes(tree):
            if fit is not None and node is fit.node:
                break
            if compiled is not None and node is compiled.node:
                after_compile = True
            elif after_compile and _rate_statement(node, self.model_name, names):
                found = _Place(node, source, count)
        return found

    def fix(self, compiled: _Place, rate: _Place | None, keras: str) -> str:
        """The learner's compile statement, with a new optimizer where theirs would refuse
        the new weights, and the learning rate set since."""
        call = compiled.node
        assert isinstance(call, ast.Call)
        text = compiled.text()
        argument = _optimizer_argument(call)
        rate_text = (
            ast.get_source_segment(rate.source, rate.node.value)  # type: ignore[attr-defined]
            if rate is not None
            else None
        )
        optimizer = stored(self.model, "optimizer")
        class_name = getattr(type(optimizer), "__name__", "") if optimizer is not None else ""
        replacement = None
        if isinstance(argument, ast.Name):
            made = _assigned_call(argument.id, self.sources, compiled)
            replacement = (
                ast.get_source_segment(made[1], made[0])
                if made is not None
                else (f"{keras}.optimizers.{class_name}()" if class_name.isidentifier() else None)
            )
        elif isinstance(argument, ast.Call):
            replacement = ast.get_source_segment(compiled.source, argument)
        elif isinstance(argument, ast.Constant) and rate_text and class_name.isidentifier():
            replacement = f"{keras}.optimizers.{class_name}()"
        if replacement is not None and argument is not None:
            if rate_text:
                replacement = _with_rate(_one_line(replacement), rate_text)
            text = _replaced(compiled.source, call, argument, replacement)
        return _one_line(text)


def unfreeze_entry(
    model: Any,
    layer: Any,
    weights: int,
    namespace: Mapping[str, Any],
    cell_source: str,
) -> VariableChange | None:
    """The entry for one ``StaleUnfreezeRecord`` in the learner's names (None when the
    model has no name in the namespace: the fix could not be written)."""
    model_name = name_bound_to(id(model), namespace)
    if model_name is None:
        return None
    layer_name = name_bound_to(id(layer), namespace)
    if layer_name is None or generated_layer_name(layer):
        keras_name = stored(layer, "name")
        if type(keras_name) is str and not generated_layer_name(layer):
            layer_name = f"{model_name}.get_layer({keras_name!r})"
        elif layer_name is None:
            return None
    keras = "keras"
    for name, spelled in (("keras", "keras"), ("tf", "tf.keras")):
        if isinstance(namespace.get(name), ModuleType):
            keras = spelled
            break
    reading = _Reading(namespace, cell_source, model, model_name)
    flip = reading.flip(layer)
    compiled = reading.compile_before(flip)
    fit = reading.fit_after(flip)
    rate = reading.rate_since(compiled, fit)
    flag = (
        f"`{flip[1].text()}` ({flip[1].where()})"
        if flip is not None
        else f"`{layer_name}.trainable` was set to True"
    )
    built = (
        f"`{model_name}` was compiled (`{_one_line(compiled.text())}`, {compiled.where()}) and fit"
        if compiled is not None
        else f"`{model_name}` was compiled and fit"
    )
    ran = f"the fit at {fit.where()}" if fit is not None else "this fit"
    plural = "s" if weights != 1 else ""
    text = (
        f"{flag} came after {built}, and {ran} reused the train step Keras built at the "
        f"first fit after that compile, while `{layer_name}` was frozen: that step updates "
        f"only the weights that were trainable then, so none of `{layer_name}`'s {weights} "
        f"weight{plural} changed and only the rest of `{model_name}` trained. Nothing warns: "
        f"`{model_name}.trainable_weights` lists them again, but the step is only rebuilt by "
        "compile()."
    )
    if compiled is not None:
        where = f"after {flip[1].where()}" if flip is not None else "after setting trainable"
        rate_note = (
            f" (with the learning rate set at {rate.where()}: a new compile starts a new optimizer)"
            if rate is not None
            else ""
        )
        text += (
            f" Fix: compile again {where} and before fit{rate_note}: "
            f"`{reading.fix(compiled, rate, keras)}`."
        )
    else:
        text += (
            f" Fix: call `{model_name}.compile(...)` again, with a new optimizer, after "
            "setting trainable and before fit."
        )
    return variable_change(f"{layer_name}.trainable", "trainable_flag", False, True, text, SECTION)
