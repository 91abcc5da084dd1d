"""Silent gradient pitfalls: ``tape.gradient`` returning None for a source.

TensorFlow returns None (no error) for a source the tape did not watch (a
tensor, or a variable with ``trainable=False``) or that the target does not
depend on. A hook on ``GradientTape.gradient`` looks at the result after the
real call returns (it passes arguments and result through untouched) and
leaves a note naming the cell line and why the gradient is None. A source's
``trainable`` and ``dtype`` are read only through TensorFlow's and Keras's own
descriptors (``library_attribute``): a user's subclass overriding them is not run.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.hooks import MethodHooks
from jupyterlab_tfcoach.monitor.locations import CellLocator, caller_frame
from jupyterlab_tfcoach.monitor.report import Note, note
from jupyterlab_tfcoach.monitor.stored_state import library_attribute
from jupyterlab_tfcoach.monitor.tftypes import BACKPROP_MODULE, loaded_class
from jupyterlab_tfcoach.monitor.variables.kinds import (
    KERAS_VARIABLE,
    TENSOR,
    TF_VARIABLE,
    KindClassifier,
)

MAX_NOTES_PER_CELL = 10
# Ops whose gradient is None or zero: a loss computed through them does not train.
_NO_GRADIENT_OPS = re.compile(
    r"\btf\.(?:math\.)?(?:round|argmax|argmin|floor|ceil|sign|equal|greater|less)\b"
    r"|\btf\.cast\([^)]*int"
)
_MAX_SOURCES = 1000
_MAX_REMEMBERED = 10_000


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

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _PendingNote)
            and (self.where, self.why, self.section) == (other.where, other.why, other.section)
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
        # Set by the monitor: the running cell's source, and how to name an object.
        self.cell_source = ""
        self.name_of: Callable[[Any], str | None] | None = None
        self._lock = threading.Lock()
        self._hooks = MethodHooks()

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
                watcher._inspect(sources, result)
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
            notes.append(
                note(f"tape.gradient{item.where} returned None for {shown}: {why}", item.section)
            )
        return notes

    def take_sources_with_gradient(self) -> set[int]:
        """ids of the sources that got a gradient during the cell (for "never applied")."""
        with self._lock:
            found, self._sources_with_gradient = self._sources_with_gradient, set()
        return found

    def _inspect(self, sources: Any, result: Any) -> None:
        if result is not None and type(result) not in (list, tuple, dict):
            # One source with a gradient: the common case, nothing to say.
            if len(self._sources_with_gradient) < _MAX_REMEMBERED:
                self._sources_with_gradient.add(id(sources))
            return
        flat_sources = _flat(sources)
        flat_result = _flat(result)
        if flat_sources is None or flat_result is None or len(flat_sources) != len(flat_result):
            return
        if len(self._sources_with_gradient) < _MAX_REMEMBERED:
            self._sources_with_gradient.update(
                id(s) for s, g in zip(flat_sources, flat_result, strict=True) if g is not None
            )
        if len(flat_sources) > _MAX_SOURCES or all(g is not None for g in flat_result):
            return
        call_site = self._locator.call_site(caller_frame(2))
        where = f" at {call_site}" if call_site else ""
        single = len(flat_sources) == 1
        # Sources with the same cause are told in one note: "returned None for `w`, `b`".
        groups: dict[tuple[str, str], list[tuple[int, Any]]] = {}
        for position, (source, gradient) in enumerate(zip(flat_sources, flat_result, strict=True)):
            if gradient is None:
                groups.setdefault(self._why(source), []).append((position, source))
        for (why, section), members in groups.items():
            labelled = [
                (self._label(source, position, single), id(source)) for position, source in members
            ]
            pending = _PendingNote(where, why, section, labelled)
            with self._lock:
                if len(self._notes) < MAX_NOTES_PER_CELL and pending not in self._notes:
                    self._notes.append(pending)

    def _label(self, source: Any, position: int, single: bool) -> str:
        """`w` when the source is bound to a name in the namespace, else its position."""
        name = self.name_of(source) if self.name_of is not None else None
        if name is not None:
            return f"`{name}`"
        return "its source" if single else f"source #{position}"

    def _why(self, source: Any) -> tuple[str, str]:
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
        return self._not_connected()

    def _not_connected(self) -> tuple[str, str]:
        """The loss does not depend on the source: say the likeliest reason this cell shows."""
        source = self.cell_source
        if ".numpy()" in source or re.search(r"\bnp\.\w", source):
            return (
                "the loss was computed through NumPy (`.numpy()` or `np.` functions), which the "
                "tape cannot follow. Keep every step from the variables to the loss in "
                "TensorFlow ops (`tf.reduce_mean`, `tf.square`, ...) inside the `with` block.",
                "gradient-tape",
            )
        found = _NO_GRADIENT_OPS.search(source)
        if found:
            return (
                f"`{found.group(0)}` has no gradient (it is flat almost everywhere), so nothing "
                "flows back through it. Keep it for metrics or predictions, and compute the "
                "loss from the values before it.",
                "gradient-tape",
            )
        return (
            "the loss does not depend on it inside the tape: it is not used to compute the "
            "loss, or that computation ran outside the `with tf.GradientTape()` block.",
            "gradient-tape",
        )
