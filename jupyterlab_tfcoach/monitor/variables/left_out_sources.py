"""A variable the loss reads inside the tape but that is not among tape.gradient's sources.

``w = tf.Variable(0.5)`` used in the loss computed inside ``with tf.GradientTape()``,
while ``tape.gradient(loss, model.trainable_variables)`` and ``apply_gradients`` only get
the model's variables: TensorFlow asks for no gradient of ``w``, nothing warns, and ``w``
keeps its starting value while the rest trains (a learnt physical constant, a temperature,
a scale). The hook on ``GradientTape.gradient`` reads the names in the tape's ``with``
block (and in the plain functions it calls by name, ``tape_block_source``), resolves the
bare ones in the calling frame, and keeps the ids and names of the trainable float
variables that are not among the sources. After the cell, one is told only when an
optimizer ran, never got it, and no ``tape.gradient`` of the cell had it as a source. A
variable the code sets itself (``w.assign(...)``, a schedule or a counter) is left out:
it is meant not to learn. Only names are read: no value, no repr.

The same for a whole model: ``encoder`` and ``projector`` called inside the tape, the
encoder with ``training=True``, and ``tape.gradient(loss, projector.trainable_variables)``
(the list applied): no gradient reaches the encoder, which keeps its initial weights while
the projector trains on top of it. Told when a Keras model (or layer) the block calls in
training mode has trainable variables none of which is a source, beside a model of the
block whose variables all are, and after the cell no optimizer got any of them and no
``tape.gradient`` had one as a source (the other tape of a GAN step gives them). The fix
names both lists summed (``encoder.trainable_variables + projector.trainable_variables``)
and, for a Keras optimizer already built for the first list (which refuses new variables),
the line that makes it again. Silent: a model called with ``training=False`` or never in
training mode (a feature extractor kept fixed, a target network), a frozen one.
"""

from __future__ import annotations

import ast
import linecache
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.report import VariableChange, variable_change
from jupyterlab_tfcoach.monitor.stored_state import library_attribute, stored
from jupyterlab_tfcoach.monitor.variables.kinds import KERAS_VARIABLE, TF_VARIABLE

SECTION = "stopped-learning"
# A bare name that is read, not called and not an attribute: `zeta * du`, `ld(zeta)`.
_READ_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\b(?!\s*[(=]\s*)")
_AUTOGRAPH_READ = re.compile(r"ag__\.ld\((\w+)\)")
_MAX_NAMES = 200
_MAX_FRAMES = 8  # AutoGraph's own calls between the step's frame and tape.gradient
_MAX_SOURCE_CHARS = 200_000
_MAX_REMEMBERED = 64
# A call of a bare name (`encoder(`), not of an attribute (`tf.square(`).
_CALLED_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\(")


@dataclass(frozen=True)
class LeftOut:
    """A variable read in the tape's block and not given to ``tape.gradient``."""

    name: str
    sources: str | None  # the sources argument as written (`net.trainable_variables`)
    line: int


def _sources_text(filename: str, line: int, names: set[str]) -> str | None:
    """The text of the sources argument of ``<tape>.gradient(target, sources)`` on ``line``."""
    return _gradient_texts(filename, line, names)[1]


def _gradient_texts(filename: str, line: int, names: set[str]) -> tuple[str | None, str | None]:
    """The texts of the target and the sources of ``<tape>.gradient(target, sources)`` on
    ``line`` (either None when unknown)."""
    source = "".join(linecache.getlines(filename))
    if not source or len(source) > _MAX_SOURCE_CHARS:
        return None, None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None, None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and node.lineno <= line <= (node.end_lineno or node.lineno)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "converted_call"
            and len(node.args) >= 2
            and isinstance(node.args[0], ast.Attribute)
            and node.args[0].attr == "gradient"
            and isinstance(node.args[1], ast.Tuple)
            and len(node.args[1].elts) >= 2
        ):
            # A tf.function's step as AutoGraph rewrote it: `ag__.ld(x)` stands for `x`.
            texts = []
            for element in node.args[1].elts[:2]:
                text = ast.get_source_segment(source, element) or ""
                text = _AUTOGRAPH_READ.sub(r"\1", text)
                texts.append(" ".join(text.split()) if text and "ag__" not in text else None)
            return texts[0], texts[1]
        if (
            isinstance(node, ast.Call)
            and node.lineno <= line <= (node.end_lineno or node.lineno)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "gradient"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in names
            and len(node.args) >= 2
        ):
            target = ast.get_source_segment(source, node.args[0])
            text = ast.get_source_segment(source, node.args[1])
            return (
                " ".join(target.split()) if target else None,
                " ".join(text.split()) if text else None,
            )
    return None, None


@dataclass(frozen=True)
class LeftOutModel:
    """A Keras model (or layer) run in training mode inside the tape's block, none of whose
    trainable variables was given to ``tape.gradient``, beside models whose were."""

    name: str
    variable_ids: frozenset[int]
    trained: tuple[str, ...]  # the models of the block whose variables were the sources
    target: str | None  # the target as written (`loss`)
    sources: str | None  # the sources as written (`variables`)
    tape: str


# A call of a bare name in the cell (`encoder(`), or in AutoGraph's copy of a tf.function
# (`converted_call(ag__.ld(encoder), `): where the model's arguments begin.
_AUTOGRAPH_CALL = "converted_call(ag__.ld({name}),"


def _arguments(text: str, start: int) -> list[str] | None:
    """The top-level arguments of the call whose ``(`` is at ``text[start - 1]``, as text."""
    depth, parts, current = 0, [], []
    for character in text[start : start + 4_000]:
        if character in "([{":
            depth += 1
        elif character in ")]}":
            if depth == 0:
                parts.append("".join(current))
                return parts
            depth -= 1
        if character == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(character)
    return None


def called_in_training_mode(block: str, name: str) -> bool:
    """Whether ``block`` calls ``name`` with ``training=True`` (as the learner wrote it, or
    as AutoGraph rewrote it: the keywords in ``dict(training=True)``), and never with
    another ``training`` value."""
    calls: list[list[str]] = []
    for match in re.finditer(rf"(?<![\w.]){re.escape(name)}\s*\(", block):
        found = _arguments(block, match.end())
        if found is not None:
            calls.append(found)
    autograph = _AUTOGRAPH_CALL.format(name=name)
    at = block.find(autograph)
    while at >= 0 and len(calls) < 16:
        found = _arguments(block, at + len("converted_call("))
        if found is not None and len(found) >= 3:
            keywords = found[2].strip()
            if keywords.startswith("dict(") and keywords.endswith(")"):
                calls.append(keywords[len("dict(") : -1].split(","))
            else:
                calls.append([])
        at = block.find(autograph, at + 1)
    modes = [
        "".join(part.split()).removeprefix("training=")
        for arguments in calls
        for part in arguments
        if "".join(part.split()).startswith("training=")
    ]
    return bool(modes) and all(mode == "True" for mode in modes)


def _is_keras_layer(value: Any) -> bool:
    try:
        kinds = type(value).__mro__
    except Exception:
        return False
    return any(kind.__name__ == "Layer" and kind.__module__.startswith("keras") for kind in kinds)


def _trainable_ids(model: Any) -> frozenset[int]:
    variables = library_attribute(model, "trainable_variables")
    if type(variables) not in (list, tuple):
        return frozenset()
    return frozenset(id(variable) for variable in variables[:10_000])


class LeftOutSources:
    """Collects, per cell, variables read by a tape's loss but left out of its sources."""

    def __init__(self, kind_of: Callable[[Any], str | None]) -> None:
        self._kind_of = kind_of
        self._found: dict[int, LeftOut] = {}
        self._models: dict[int, LeftOutModel] = {}
        self._given: set[int] = set()  # every source any tape.gradient got in the cell
        self._sites: set[tuple[int, int] | None] = set()  # calling lines looked at this cell
        # (file, line, tape names) -> (names read in the block, names called in it, the
        # block's text, the target's and sources' texts)
        self._blocks: dict[tuple[Any, ...], Any] = {}

    def begin_cell(self) -> None:
        self._found = {}
        self._models = {}
        self._given = set()
        self._sites = set()

    def observe(
        self,
        frame: Any,
        tape: Any,
        flat_sources: list[Any],
        block_of: Callable[[Any, Any], str | None],
        cell_source: str,
    ) -> None:
        given = {id(source) for source in flat_sources}
        if len(self._given) < 10_000:
            self._given |= given
        # A training loop calls tape.gradient from one line thousands of times: the names its
        # block reads are looked at once per calling line and cell (finding the tape's
        # holder scans frames' locals, a cell's globals included: ~250 us a call).
        site = (id(frame.f_code), frame.f_lineno) if frame is not None else None
        if site in self._sites:
            return
        if len(self._sites) < _MAX_REMEMBERED:
            self._sites.add(site)
        tape_names: frozenset[str] = frozenset()
        for _ in range(_MAX_FRAMES):
            if frame is None:
                return
            tape_names = frozenset(n for n, value in frame.f_locals.items() if value is tape)
            if tape_names:
                break  # the code that holds the tape: the cell, or AutoGraph's copy of it
            frame = frame.f_back
        if not tape_names:
            return
        key = (frame.f_code.co_filename, frame.f_lineno, tape_names)
        known = self._blocks.get(key)
        if known is None:
            block = block_of(frame, tape) or ""
            read = tuple(dict.fromkeys(_READ_NAME.findall(block)))[:_MAX_NAMES]
            called = tuple(dict.fromkeys(_CALLED_NAME.findall(block)))[:_MAX_NAMES]
            texts = _gradient_texts(frame.f_code.co_filename, frame.f_lineno, set(tape_names))
            known = (read, called, block, texts)
            if len(self._blocks) < _MAX_REMEMBERED:
                self._blocks[key] = known
        read, called, block, (target_text, text) = known
        local, module = frame.f_locals, frame.f_globals
        self._models_left_out(
            read + called, block, local, module, given, target_text, text, min(tape_names)
        )
        for name in read:
            value = local.get(name, module.get(name))
            if value is None or id(value) in given or id(value) in self._found:
                continue
            if self._kind_of(value) not in (TF_VARIABLE, KERAS_VARIABLE):
                continue
            if library_attribute(value, "trainable", True) is False:
                continue  # made not to learn
            dtype = library_attribute(value, "dtype")
            dtype_name = dtype if type(dtype) is str else library_attribute(dtype, "name", "")
            if type(dtype_name) is not str or not dtype_name.startswith(("float", "bfloat")):
                continue
            if re.search(rf"(?<![\w.]){re.escape(name)}\s*\.\s*assign", cell_source):
                continue  # the code sets it itself: a schedule, a counter, a target
            self._found[id(value)] = LeftOut(name, text, frame.f_lineno)

    def _models_left_out(
        self,
        names: tuple[str, ...],
        block: str,
        local: Any,
        module: Any,
        given: set[int],
        target: str | None,
        sources: str | None,
        tape: str,
    ) -> None:
        """The Keras models the block calls in training mode, none of whose trainable
        variables is a source, when another model of the block trains through them."""
        trained: list[str] = []
        left: list[tuple[str, Any, frozenset[int]]] = []
        for name in names:
            value = local.get(name, module.get(name))
            if value is None or not _is_keras_layer(value):
                continue
            ids = _trainable_ids(value)
            if not ids:
                continue  # frozen (trainable=False) or holding no weights: nothing to train
            if ids <= given:
                trained.append(name)
            elif not ids & given and called_in_training_mode(block, name):
                left.append((name, value, ids))
        if not trained:
            return
        for name, value, ids in left:
            if id(value) not in self._models:
                self._models[id(value)] = LeftOutModel(
                    name, ids, tuple(trained), target, sources, tape
                )

    def entries(
        self, trained: set[int], optimizer: str, explained: set[int], remake: str | None = None
    ) -> list[VariableChange]:
        """Entries for the variables found, after a cell in which an optimizer ran:
        ``trained``: ids of the variables an optimizer got (with or without gradient);
        ``remake``: the line that makes the optimizer anew (``optimizer_remake``)."""
        found, self._found = self._found, {}
        models, self._models = self._models, {}
        entries = []
        for model_id, model in models.items():
            if model.variable_ids & (trained | self._given) or model_id in explained:
                continue
            explained.add(model_id)
            explained |= model.variable_ids
            entries.append(_model_entry(model, optimizer, remake))
        for variable_id, left in found.items():
            if variable_id in trained or variable_id in self._given or variable_id in explained:
                continue
            explained.add(variable_id)
            entries.append(_entry(left, optimizer))
        return entries


def _entry(left: LeftOut, optimizer: str) -> VariableChange:
    name = left.name
    sources = left.sources or "model.trainable_variables"
    if sources.startswith("[") and sources.endswith("]"):
        together = f"{sources[:-1]}, {name}]"
    else:
        together = f"list({sources}) + [{name}]"
    text = (
        f"`{name}` is a trainable tf.Variable that the loss reads inside the GradientTape, but "
        f"it is not among the sources given to tape.gradient (`{sources}`), so no gradient is "
        f"computed for it and {optimizer} never updates it: `{name}` keeps its starting value "
        f"while the others train, and the loss is fitted around a wrong value. Take the "
        f"gradient for it too and apply it with the others: `variables = {together}`, "
        f"`grads = tape.gradient(loss, variables)`, "
        f"`{optimizer}.apply_gradients(zip(grads, variables))`."
    )
    return variable_change(name, "stopped_learning", "trainable", "not a source", text, SECTION)


def _model_entry(model: LeftOutModel, optimizer: str, remake: str | None) -> VariableChange:
    name = model.name
    others = " and ".join(f"`{other}`" for other in model.trained)
    together = " + ".join(f"{m}.trainable_variables" for m in (name, *model.trained))
    target = model.target or "loss"
    given = f" (`{model.sources}`)" if model.sources else ""
    text = (
        f"`{name}` runs inside the GradientTape in training mode and the loss depends on "
        f"its output, but none of its trainable variables is among the sources given to "
        f"`{model.tape}.gradient`{given}: those hold only {others}'s. No gradient is taken "
        f"for `{name}` and {optimizer} never updates it, so `{name}` keeps its initial "
        f"weights while {others} trains on top of them. Nothing raises. Take the gradient "
        f"for both and apply it to both: `variables = {together}`, "
        f"`grads = {model.tape}.gradient({target}, variables)`, "
        f"`{optimizer}.apply_gradients(zip(grads, variables))`"
    )
    if remake is not None:
        # A Keras optimizer refuses variables it was not built with ("Unknown variable").
        text += (
            f", with a new optimizer made before the loop (`{optimizer}` was built for "
            f"{others}'s variables only and refuses others): `{remake}`"
        )
    text += (
        f". (If `{name}` is meant to stay fixed, call it with training=False and set "
        f"`{name}.trainable = False`.)"
    )
    return variable_change(name, "stopped_learning", "trainable", "not a source", text, SECTION)


def left_out_optimizer(namespace: Any, optimizer_ids: set[int]) -> str:
    """The user's name of an optimizer that ran, else "the optimizer"."""
    try:
        for name, value in namespace.items():
            if type(name) is str and not name.startswith("_") and id(value) in optimizer_ids:
                return name
    except Exception:
        pass
    return "the optimizer"


def optimizer_remake(namespace: Any, name: str) -> str | None:
    """``name = keras.optimizers.RMSprop(learning_rate=0.01)``: the optimizer the learner
    named, made anew with its class and its constant learning rate (None for a schedule,
    a class outside ``keras.optimizers`` or a namespace without ``keras``/``tf``)."""
    try:
        value = namespace.get(name)
        cls = type(value)
        keras = namespace.get("keras")
        if type(keras).__name__ == "module" and getattr(keras, "__name__", "") == "keras":
            prefix = "keras.optimizers"
        elif type(namespace.get("tf")).__name__ == "module":
            prefix = "tf.keras.optimizers"
        else:
            return None
        if not cls.__module__.startswith("keras.") or cls.__name__.startswith("_"):
            return None
        held = stored(value, "_learning_rate")
        if held is None or "Schedule" in " ".join(k.__name__ for k in type(held).__mro__):
            return None
        read = library_attribute(held, "numpy")
        rate = float(read()) if callable(read) else None
        if rate is None or not rate > 0:
            return None
        return f"{name} = {prefix}.{cls.__name__}(learning_rate={rate:.3g})"
    except Exception:
        return None
