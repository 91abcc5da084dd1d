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
"""

from __future__ import annotations

import ast
import linecache
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.report import VariableChange, variable_change
from jupyterlab_tfcoach.monitor.stored_state import library_attribute
from jupyterlab_tfcoach.monitor.variables.kinds import KERAS_VARIABLE, TF_VARIABLE

SECTION = "stopped-learning"
# A bare name that is read, not called and not an attribute: `zeta * du`, `ld(zeta)`.
_READ_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\b(?!\s*[(=]\s*)")
_AUTOGRAPH_READ = re.compile(r"ag__\.ld\((\w+)\)")
_MAX_NAMES = 200
_MAX_FRAMES = 8  # AutoGraph's own calls between the step's frame and tape.gradient
_MAX_SOURCE_CHARS = 200_000
_MAX_REMEMBERED = 64


@dataclass(frozen=True)
class LeftOut:
    """A variable read in the tape's block and not given to ``tape.gradient``."""

    name: str
    sources: str | None  # the sources argument as written (`net.trainable_variables`)
    line: int


def _sources_text(filename: str, line: int, names: set[str]) -> str | None:
    """The text of the sources argument of ``<tape>.gradient(target, sources)`` on ``line``."""
    source = "".join(linecache.getlines(filename))
    if not source or len(source) > _MAX_SOURCE_CHARS:
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
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
            text = ast.get_source_segment(source, node.args[1].elts[1]) or ""
            text = _AUTOGRAPH_READ.sub(r"\1", text)
            return " ".join(text.split()) if text and "ag__" not in text else None
        if (
            isinstance(node, ast.Call)
            and node.lineno <= line <= (node.end_lineno or node.lineno)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "gradient"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in names
            and len(node.args) >= 2
        ):
            text = ast.get_source_segment(source, node.args[1])
            return " ".join(text.split()) if text else None
    return None


class LeftOutSources:
    """Collects, per cell, variables read by a tape's loss but left out of its sources."""

    def __init__(self, kind_of: Callable[[Any], str | None]) -> None:
        self._kind_of = kind_of
        self._found: dict[int, LeftOut] = {}
        self._given: set[int] = set()  # every source any tape.gradient got in the cell
        self._sites: set[tuple[int, int] | None] = set()  # calling lines looked at this cell
        # (file, line, tape names) -> (names read in the block, sources text)
        self._blocks: dict[tuple[Any, ...], tuple[tuple[str, ...], str | None]] = {}

    def begin_cell(self) -> None:
        self._found = {}
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
            block = block_of(frame, tape)
            read = tuple(dict.fromkeys(_READ_NAME.findall(block or "")))[:_MAX_NAMES]
            text = _sources_text(frame.f_code.co_filename, frame.f_lineno, set(tape_names))
            known = (read, text)
            if len(self._blocks) < _MAX_REMEMBERED:
                self._blocks[key] = known
        read, text = known
        local, module = frame.f_locals, frame.f_globals
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

    def entries(
        self, trained: set[int], optimizer: str, explained: set[int]
    ) -> list[VariableChange]:
        """Entries for the variables found, after a cell in which an optimizer ran:
        ``trained``: ids of the variables an optimizer got (with or without gradient)."""
        found, self._found = self._found, {}
        entries = []
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


def left_out_optimizer(namespace: Any, optimizer_ids: set[int]) -> str:
    """The user's name of an optimizer that ran, else "the optimizer"."""
    try:
        for name, value in namespace.items():
            if type(name) is str and not name.startswith("_") and id(value) in optimizer_ids:
                return name
    except Exception:
        pass
    return "the optimizer"
