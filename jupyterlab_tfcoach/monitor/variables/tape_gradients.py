"""Silent gradient pitfalls: ``tape.gradient`` returning None for a source.

TensorFlow returns None (no error) for a source the tape did not watch (a
tensor, or a variable with ``trainable=False``) or that the target does not
depend on. A hook on ``GradientTape.gradient`` looks at the result after the
real call returns (it passes arguments and result through untouched) and
leaves a note naming the cell line and why the gradient is None. A source's
``trainable`` and ``dtype`` are read only through TensorFlow's and Keras's own
descriptors (``library_attribute``): a user's subclass overriding them is not run.
A loss "computed through NumPy" is said only when the tape's own ``with`` block (read from
the calling code, ``tape_block_source``) has a NumPy step.

The same hook (only one hook per method is possible) gives every call to
``training_symptoms.TrainingSymptoms``, which looks for silent custom-loop bugs by their
symptom (nothing trained, a loss that is not a scalar, variables recreated at every step).
"""

from __future__ import annotations

import ast
import linecache
import re
import sys
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.errors.function_reads import (
    names_in_source_order,
    reads_through_calls,
)
from jupyterlab_tfcoach.monitor.hooks import MethodHooks
from jupyterlab_tfcoach.monitor.locations import CellLocator, caller_frame
from jupyterlab_tfcoach.monitor.report import Note, note
from jupyterlab_tfcoach.monitor.stored_state import library_attribute
from jupyterlab_tfcoach.monitor.syntax import function_definition
from jupyterlab_tfcoach.monitor.tftypes import BACKPROP_MODULE, loaded_class
from jupyterlab_tfcoach.monitor.variables.kinds import (
    KERAS_VARIABLE,
    TENSOR,
    TF_VARIABLE,
    KindClassifier,
)
from jupyterlab_tfcoach.monitor.variables.left_out_sources import LeftOutSources
from jupyterlab_tfcoach.monitor.variables.training_symptoms import TrainingSymptoms
from jupyterlab_tfcoach.monitor.word_gates import word_gate

MAX_NOTES_PER_CELL = 10
# Ops whose gradient is None or zero: a loss computed through them does not train.
_NO_GRADIENT_OPS = word_gate(
    r"\btf\.(?:math\.)?(?:round|argmax|argmin|floor|ceil|sign|equal|greater|less)\b"
    r"|\btf\.cast\([^)]*int"
)
_MAX_SOURCES = 1000
_MAX_REMEMBERED = 10_000
# A NumPy step written in the tape's block: `.numpy()` on a tensor, or a call `np.f(...)`.
_NUMPY_STEP = word_gate(r"\.numpy\(\s*\)|\b(?:np|numpy)\.[\w.]+\(")
# A model's ``predict`` in the tape's block: it runs outside the tape, returns NumPy.
_PREDICT_STEP = word_gate(r"\.predict(?:_on_batch)?\(")
_MAX_SOURCE_CHARS = 200_000
_MAX_HELPERS = 8
# A call of a bare name (`my_loss(`), not of an attribute (`tf.square(`).
_CALLED_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\(")
_JACOBIAN_CALL = word_gate(r"\.(batch_jacobian|jacobian)\s*\(")
# The reason given when the code shows nothing more precise (the cell's error may say more).
NOT_CONNECTED = "the loss does not depend on it inside the tape"


def tape_block_source(
    frame: Any, tape: Any, cache: dict[tuple[Any, ...], str | None] | None = None
) -> str | None:
    """The source of the ``with ... as <tape>:`` block that recorded ``tape``, in the file
    (cell or module) of ``frame``, the code that called ``tape.gradient``; None when it
    cannot be found. The tape's name is the local bound to this very object (an identity
    test: no user object is read), its block the last one before the calling line.
    Read only when a gradient is None; ``cache`` keeps a loop from parsing every step."""
    if frame is None:
        return None
    try:
        names = {name for name, value in frame.f_locals.items() if value is tape}
        if not names:
            return None
        key = (frame.f_code.co_filename, frame.f_lineno, frozenset(names))
        if cache is not None and key in cache:
            return cache[key]
        found_source = _block_source(frame.f_code.co_filename, frame.f_lineno, names)
        if found_source is not None:
            found_source = _with_called_functions(found_source, frame)
        if cache is not None and len(cache) < 64:
            cache[key] = found_source
        return found_source
    except Exception:
        return None


def _block_source(filename: str, line: int, names: set[str]) -> str | None:
    try:
        source = "".join(linecache.getlines(filename))
        if not source or len(source) > _MAX_SOURCE_CHARS:
            return None
        tree = ast.parse(source)
        found: ast.With | None = None
        for node in ast.walk(tree):
            if not isinstance(node, ast.With) or node.lineno > line:
                continue
            if any(
                isinstance(item.optional_vars, ast.Name) and item.optional_vars.id in names
                for item in node.items
            ) and (found is None or node.lineno > found.lineno):
                found = node
        return ast.get_source_segment(source, found) if found is not None else None
    except Exception:
        return None


@dataclass(frozen=True)
class TargetOutsideBlock:
    """``tape.gradient(target, ...)`` where ``target`` was last assigned outside the tape's
    ``with`` block: the tape recorded none of its computation."""

    target: str
    line: int  # the assignment's line
    statement: str
    tape: str
    with_line: int
    after: bool  # assigned after the block ended (else before it began)
    opening: str  # the block's first line as written: "with tf.GradientTape() as tape:"
    # When the target itself is computed inside the block: the target, and ``target``
    # above is the value it reads that was computed before the block from the sources.
    loss: str | None = None
    # (the learner's function called in that statement, the sources it reads).
    through: tuple[str, list[str]] | None = None
    reads: frozenset[str] = frozenset()  # the source names that statement reads


def target_outside_block(frame: Any, tape: Any) -> TargetOutsideBlock | None:
    """Read from the calling code: the call ``<tape>.gradient(<name>, ...)`` on the frame's
    line, the ``with ... as <tape>:`` block before it, and the last assignment of ``<name>``
    before the call. Only names and line numbers are read, never a value."""
    try:
        if frame is None:
            return None
        names = {name for name, value in frame.f_locals.items() if value is tape}
        if not names:
            return None
        line = frame.f_lineno
        source = "".join(linecache.getlines(frame.f_code.co_filename))
        if not source or len(source) > _MAX_SOURCE_CHARS:
            return None
        tree = ast.parse(source)
        block: ast.With | None = None
        target: str | None = None
        tape_name = ""
        opened_by: ast.withitem | None = None
        sources: ast.expr | None = None
        for node in ast.walk(tree):
            if isinstance(node, ast.With) and node.lineno <= line:
                for item in node.items:
                    bound = item.optional_vars
                    if isinstance(bound, ast.Name) and bound.id in names:
                        if block is None or node.lineno > block.lineno:
                            block, tape_name, opened_by = node, bound.id, item
            elif (
                isinstance(node, ast.Call)
                and node.lineno <= line <= (node.end_lineno or node.lineno)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("gradient", "jacobian")
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in names
                and node.args
                and isinstance(node.args[0], ast.Name)
            ):
                target = node.args[0].id
                sources = node.args[1] if len(node.args) > 1 else None
        if block is None or target is None:
            return None
        assignment: ast.stmt | None = None
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                continue
            if node.lineno >= line:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound_names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            if target in bound_names and (assignment is None or node.lineno > assignment.lineno):
                assignment = node
        if assignment is None:
            return None
        end = block.end_lineno or block.lineno
        made = ast.get_source_segment(source, opened_by.context_expr) if opened_by else None
        opening = f"with {' '.join((made or '...').split())} as {tape_name}:"
        loss: str | None = None
        through: tuple[str, list[str]] | None = None
        reads: frozenset[str] = frozenset()
        if block.lineno <= assignment.lineno <= end:
            if sources is None:
                return None
            found = _input_before_block(tree, block, target, sources, frame)
            if found is None:
                return None
            loss, (target, assignment, through) = target, found
            value = getattr(assignment, "value", None)
            reads = frozenset(through[1]) if through is not None else frozenset()
            if value is not None:
                reads |= _loaded(value)
        statement = ast.get_source_segment(source, assignment) or target
        return TargetOutsideBlock(
            target,
            assignment.lineno,
            " ".join(statement.split()),
            tape_name,
            block.lineno,
            assignment.lineno > end,
            opening,
            loss,
            through,
            reads,
        )
    except Exception:
        return None


def _stored(node: ast.AST) -> set[str]:
    return {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def _loaded(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _input_before_block(
    tree: ast.Module, block: ast.With, target: str, sources: ast.expr, frame: Any
) -> tuple[str, ast.stmt, tuple[str, list[str]] | None] | None:
    """A name the target is computed from inside ``block`` (through the block's own
    assignments) that was assigned before the block from the sources: directly
    (``pred = x @ w``) or through a call of the learner's function that reads them
    (``omega, zeta = params()``, ``function_reads.py``). (the name, its assignment, the
    function and the sources it reads when through a call)."""
    source_names = _loaded(sources)
    inside = [
        node
        for child in block.body
        for node in ast.walk(child)
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign)
    ]
    inside_ids = {id(node) for node in ast.walk(block)}

    def lookup(name: str) -> tuple[bool, Any]:
        for names in (frame.f_locals, frame.f_globals):
            if name in names:
                return True, names[name]
        return False, None

    wanted, seen = [target], set()
    while wanted:
        name = wanted.pop()
        if name in seen or name in source_names:
            continue
        seen.add(name)
        bound = [node for node in inside if name in _stored(node)]
        if bound:
            for node in bound:
                if node.value is not None:
                    # First written, first followed: a set's order changes with the hash
                    # seed, and so would the name the note tells.
                    wanted.extend(reversed(names_in_source_order(node.value)))
            continue
        earlier = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign)
            and id(node) not in inside_ids
            and node.lineno < block.lineno
            and name in _stored(node)
        ]
        if not earlier:
            continue
        assignment = max(earlier, key=lambda node: node.lineno)
        value = assignment.value
        if value is None:
            continue
        if _loaded(value) & source_names:
            return name, assignment, None
        through = reads_through_calls(value, source_names, lookup)
        if through is not None:
            return name, assignment, through
    return None


def _with_called_functions(block: str, frame: Any) -> str:
    """The block, then the source of each plain Python function it calls by name (one
    level: ``loss = my_loss(y, pred)``), so a NumPy step or a no-gradient op inside a
    helper of the user's is seen too. Functions are found in the frame's locals and
    globals by a dict read and a type test; their source is read from their code object's
    file (``linecache``), never by running them."""
    called = set(_CALLED_NAME.findall(block))
    parts = [block]
    for name in sorted(called)[:_MAX_HELPERS]:
        function = frame.f_locals.get(name, frame.f_globals.get(name))
        if type(function) is not types.FunctionType:
            continue
        helper = _function_source(function.__code__)
        if helper is not None:
            parts.append(helper)
    return "\n".join(parts)


def _function_source(code: types.CodeType) -> str | None:
    found = function_definition(code, _MAX_SOURCE_CHARS)
    return ast.get_source_segment(*found) if found is not None else None


def _flat(structure: Any) -> list[Any] | None:
    """Leaves of a list/tuple/dict nest (the shapes tape.gradient accepts)."""
    kind = type(structure)
    if kind in (list, tuple):
        leaves: list[Any] = []
        for item in structure:
            inner = _flat(item)
            if inner is None:
                return None
            leaves.extend(inner)
        return leaves
    if kind is dict:
        leaves = []
        for key in sorted(structure, key=str):
            inner = _flat(structure[key])
            if inner is None:
                return None
            leaves.extend(inner)
        return leaves
    return [structure]


@dataclass(frozen=True)
class _PendingNote:
    where: str
    why: str
    section: str
    members: list[tuple[str, int]]  # (label, id of the source)
    # The tape method the learner's line calls: batch_jacobian runs gradient inside and
    # gives zeros, not None, where a gradient is missing.
    call: str = "gradient"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _PendingNote)
            and (self.where, self.why, self.section, self.call)
            == (other.where, other.why, other.section, other.call)
            and [label for label, _ in self.members] == [label for label, _ in other.members]
        )

    __hash__ = None  # type: ignore[assignment]


class GradientWatcher:
    def __init__(self, locator: CellLocator, classifier: KindClassifier) -> None:
        self._locator = locator
        self.classifier = classifier
        # Formatted when taken: sources the report already explains are left out then.
        self._notes: list[_PendingNote] = []
        self._sources_with_gradient: set[int] = set()
        # Tape blocks already read this cell (a loop with a None gradient at every step).
        self._block_sources: dict[tuple[Any, ...], str | None] = {}
        # Set by the monitor: the running cell's source, and how to name an object.
        self.cell_source = ""
        self.name_of: Callable[[Any], str | None] | None = None
        self._lock = threading.Lock()
        self._hooks = MethodHooks()
        self.symptoms = TrainingSymptoms(lambda value: self.classifier.kind_of(value))
        self.left_out = LeftOutSources(lambda value: self.classifier.kind_of(value))

    def install(self) -> list[Note]:
        tape_class = loaded_class(BACKPROP_MODULE, "GradientTape")
        if tape_class is None or not self._hooks.install(
            tape_class, "gradient", self._gradient_hook
        ):
            return [note("tfcoach cannot hook GradientTape.gradient here: no gradient notes.")]
        return []

    def _gradient_hook(self, original: Any) -> Any:
        watcher = self

        def gradient_hook(tape: Any, target: Any, sources: Any, *args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True  # IPython leaves this frame out of user tracebacks
            result = original(tape, target, sources, *args, **kwargs)
            try:
                flat_sources = watcher._inspect(sources, result, tape)
                watcher.symptoms.observe(target, flat_sources, sys._getframe(1), result)
                watcher.left_out.observe(
                    sys._getframe(1),
                    tape,
                    flat_sources,
                    lambda frame, tape: tape_block_source(frame, tape, watcher._block_sources),
                    watcher.cell_source,
                )
            except Exception:
                pass
            return result

        return gradient_hook

    def uninstall(self) -> None:
        self._hooks.restore()

    def take_notes(self, explained: set[int] | frozenset[int] = frozenset()) -> list[Note]:
        """This cell's notes, less those about tensors in ``explained`` (ids)."""
        with self._lock:
            pending, self._notes = self._notes, []
        notes = []
        for item in pending:
            members = [label for label, source in item.members if source not in explained]
            if not members:
                continue  # every source is a variable the report says was replaced
            shown = ", ".join(members[:5]) + (
                f" and {len(members) - 5} more" if len(members) > 5 else ""
            )
            why = item.why
            if members[0].startswith("`") and "tape.watch(x)" in why:
                why = why.replace("tape.watch(x)", f"tape.watch({members[0].strip('`')})")
            returned = "zeros (no gradient path)" if item.call == "batch_jacobian" else "None"
            notes.append(
                note(
                    f"tape.{item.call}{item.where} returned {returned} for {shown}: {why}",
                    item.section,
                )
            )
        return notes

    def begin_cell(self) -> None:
        """Forget the last cell's notes and evidence (from ``pre_run_cell``)."""
        self.take_notes()
        self.take_sources_with_gradient()
        self._block_sources = {}
        self.symptoms.begin_cell()
        self.left_out.begin_cell()

    def take_symptom_notes(self, rebinding_reported: bool) -> list[Note]:
        """This cell's training symptoms (``training_symptoms``); call before
        ``take_notes``: a cell whose gradients were None is told by those notes."""
        with self._lock:
            gradient_notes_pending = bool(self._notes)
        try:
            return self.symptoms.notes(
                self.cell_source,
                self._where,
                self.name_of if self.name_of is not None else lambda value: None,
                rebinding_reported,
                gradient_notes_pending,
            )
        except Exception:
            return []  # a symptom left untold rather than a report that fails

    def _where(self, filename: str, line: int) -> tuple[str, bool]:
        """``line 7`` in the running cell (compiled last), else ``Cell In[3], line 7``."""
        files = self._locator.cell_files()
        number = files.get(filename)
        if number is not None and number == max(files.values()):
            return f"line {line}", True
        return self._locator.describe(filename, line), False

    def take_sources_with_gradient(self) -> set[int]:
        """ids of the sources that got a gradient during the cell (for "never applied")."""
        with self._lock:
            found, self._sources_with_gradient = self._sources_with_gradient, set()
        return found

    def _inspect(self, sources: Any, result: Any, tape: Any) -> list[Any]:
        """Note the sources whose gradient is None; the sources as a flat list."""
        if result is not None and type(result) not in (list, tuple, dict):
            # One source with a gradient: the common case, nothing to say.
            if len(self._sources_with_gradient) < _MAX_REMEMBERED:
                self._sources_with_gradient.add(id(sources))
            return [sources]
        flat_sources = _flat(sources)
        flat_result = _flat(result)
        if flat_sources is None:
            return []
        if flat_result is None or len(flat_sources) != len(flat_result):
            return flat_sources
        if len(self._sources_with_gradient) < _MAX_REMEMBERED:
            self._sources_with_gradient.update(
                id(s) for s, g in zip(flat_sources, flat_result, strict=True) if g is not None
            )
        if len(flat_sources) > _MAX_SOURCES or all(g is not None for g in flat_result):
            return flat_sources
        frame = caller_frame(2)
        call_site = self._locator.call_site(frame)
        where = f" at {call_site}" if call_site else ""
        call = self._tape_method(frame)
        block = tape_block_source(frame, tape, self._block_sources)
        outside = target_outside_block(frame, tape) if block is not None else None
        single = len(flat_sources) == 1
        # Sources with the same cause are told in one note: "returned None for `w`, `b`".
        groups: dict[tuple[str, str], list[tuple[int, Any]]] = {}
        for position, (source, gradient) in enumerate(zip(flat_sources, flat_result, strict=True)):
            if gradient is None:
                why = self._why(source, block)
                if (
                    outside is not None
                    and why[0].startswith(NOT_CONNECTED)
                    and self._explains(outside, source)
                ):
                    why = self._outside(outside, why[1])
                groups.setdefault(why, []).append((position, source))
        for (why, section), members in groups.items():
            labelled = [
                (self._label(source, position, single), id(source)) for position, source in members
            ]
            pending = _PendingNote(where, why, section, labelled, call)
            with self._lock:
                if len(self._notes) < MAX_NOTES_PER_CELL and pending not in self._notes:
                    self._notes.append(pending)
        return flat_sources

    def _tape_method(self, frame: Any) -> str:
        """``jacobian`` or ``batch_jacobian`` when the learner's outermost cell line calls
        it (each runs ``gradient`` inside), else ``gradient``."""
        files = self._locator.cell_files()
        outermost: tuple[str, int] | None = None
        while frame is not None:
            if frame.f_code.co_filename in files:
                outermost = (frame.f_code.co_filename, frame.f_lineno)
            frame = frame.f_back
        if outermost is None:
            return "gradient"
        found = _JACOBIAN_CALL.search(linecache.getline(*outermost))
        return found.group(1) if found else "gradient"

    def _label(self, source: Any, position: int, single: bool) -> str:
        """`w` when the source is bound to a name in the namespace, else its position."""
        name = self.name_of(source) if self.name_of is not None else None
        if name is not None:
            return f"`{name}`"
        return "its source" if single else f"source #{position}"

    def _why(self, source: Any, block: str | None) -> tuple[str, str]:
        """Why the gradient is None, and the course section that teaches it."""
        kind = self.classifier.kind_of(source)
        if kind == TENSOR:
            return (
                "it is a tensor, not a variable, and a GradientTape only watches trainable "
                "variables. Call tape.watch(x) inside the `with` block (or use a tf.Variable).",
                "tape-watch",
            )
        if kind in (TF_VARIABLE, KERAS_VARIABLE):
            trainable = library_attribute(source, "trainable", True)
            dtype = library_attribute(source, "dtype")
            # A tf.DType has a name; a Keras variable's dtype is already one ("float32").
            dtype_name = dtype if type(dtype) is str else library_attribute(dtype, "name", "")
            if type(dtype_name) is not str:
                dtype_name = ""
            if trainable is False:
                return (
                    "it is a variable created with trainable=False, which the tape does not "
                    "watch. If it should learn, create it with `trainable=True`; if it should "
                    "stay fixed, leave it out of the sources given to tape.gradient.",
                    "tape-watch",
                )
            if dtype_name.startswith(("int", "uint", "bool")):
                return (
                    f"it is a {dtype_name} variable; only floating-point values have gradients. "
                    "Create it with a float dtype.",
                    "gradient-tape",
                )
        return self._not_connected(block)

    def _explains(self, found: TargetOutsideBlock, source: Any) -> bool:
        """A value computed before the block explains a named source's None gradient only
        when that statement reads the source (a source known by no name: assumed)."""
        if found.loss is None:
            return True
        name = self.name_of(source) if self.name_of is not None else None
        return name is None or name in found.reads

    @staticmethod
    def _outside(found: TargetOutsideBlock, section: str) -> tuple[str, str]:
        """The target was computed outside the tape's block: name the line and the move."""
        when = "after the block ended" if found.after else "before the block began"
        if found.loss is not None:
            reads = ""
            if found.through is not None:
                function, variables = found.through
                reads = f", and `{function}` reads {', '.join(f'`{v}`' for v in variables)}"
            return (
                f"{NOT_CONNECTED}: `{found.loss}` is computed inside the block from "
                f"`{found.target}`, but `{found.target}` is computed at line {found.line} "
                f"(`{found.statement}`{reads}), before the block began (`{found.opening}` at "
                f"line {found.with_line}), so `{found.tape}` recorded none of how the "
                f"variables made it. Move that line inside the `with` block of `{found.tape}` "
                f"(indent it under line {found.with_line}, before the loss).",
                section,
            )
        return (
            f"{NOT_CONNECTED}: `{found.target}` is computed at line {found.line} "
            f"(`{found.statement}`), {when} (`{found.opening}` at line "
            f"{found.with_line}), so `{found.tape}` recorded none of that computation. Move "
            f"that line inside the `with` block of `{found.tape}` (indent it under line "
            f"{found.with_line}).",
            section,
        )

    def _not_connected(self, block: str | None) -> tuple[str, str]:
        """The loss does not depend on the source: say the likeliest reason the code shows.
        NumPy only when the tape's own block (``block``) has a NumPy step: NumPy elsewhere
        in the cell (building the data) takes nothing away from the tape."""
        if block is not None and _PREDICT_STEP.search(block):
            return (
                "the loss went through a model's `predict`, which runs the model outside the "
                "tape and returns NumPy arrays the tape cannot follow. Call the model directly "
                "inside the `with` block (`model(x, training=False)` runs it as `predict` "
                "does).",
                "gradient-tape",
            )
        if block is not None and _NUMPY_STEP.search(block):
            return (
                "the loss was computed through NumPy (`.numpy()` or `np.` functions), which the "
                "tape cannot follow. Keep every step from the variables to the loss in "
                "TensorFlow ops (`tf.reduce_mean`, `tf.square`, ...) inside the `with` block.",
                "gradient-tape",
            )
        found = _NO_GRADIENT_OPS.search(block if block is not None else self.cell_source)
        if found:
            return (
                f"`{found.group(0)}` has no gradient (it is flat almost everywhere), so nothing "
                "flows back through it. Keep it for metrics or predictions, and compute the "
                "loss from the values before it.",
                "gradient-tape",
            )
        return (
            f"{NOT_CONNECTED}: it is not used to compute the "
            "loss, or that computation ran outside the `with tf.GradientTape()` block.",
            "gradient-tape",
        )
