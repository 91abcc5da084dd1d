"""The lookup layer that made the ids an Embedding refused (issue #25).

``emb(tags_lookup(tf.constant(tags)))`` with ``emb = layers.Embedding(n_tags, 8)`` and
``n_tags`` the count of distinct tags: a ``StringLookup``/``IntegerLookup`` keeps index 0
(``num_oov_indices`` of them, a mask token one more) for values outside its vocabulary and
numbers its terms after it, so its largest index is the number of terms, one past an
Embedding sized by them. The layer that made the ids is read from the failing line: the
ids are a call of the layer there (``emb(lookup(x))``), or a name whose newest assignment
is such a call (``codes = lookup(x)`` then ``emb(codes)``). The size the Embedding needs is
that layer's own ``vocabulary_size()``, every index it can give, named in the fix; a
constant elsewhere in the notebook that happens to hold the same number (another lookup's
size) is not the right name for it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import CellFrame, ErrorContext, code
from jupyterlab_tfcoach.monitor.errors.origins import newest_assignment
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, is_library_class

LOOKUP_LAYERS = ("StringLookup", "IntegerLookup")
# Module 7 teaches a lookup's vocabulary: each term once, index 0 for unseen values.
LOOKUP_SECTION = "preprocessing-adapt"


@dataclass(frozen=True)
class IdsLookup:
    """A lookup layer the ids came from: the learner's name for it, its class, how many
    indices it gives (``vocabulary_size()``) and how many of them its terms take."""

    name: str
    cls: str
    size: int
    reserved: int

    @property
    def terms(self) -> int:
        return self.size - self.reserved

    def sentence(self, refused: int) -> str:
        """Why the index refused is one of the layer's own."""
        slots = (
            "index 0 is its slot for values outside the vocabulary (`[UNK]`)"
            if self.reserved == 1
            else f"indices 0 to {self.reserved - 1} are its reserved slots (out-of-vocabulary "
            "values and the mask token)"
        )
        return (
            f". The ids come from {code(self.name)}, a {self.cls}: {slots}, and its "
            f"{self.terms} terms take indices {self.reserved} to {self.size - 1}, so it gives "
            f"{self.size} different indices ({code(f'{self.name}.vocabulary_size()')}), one "
            f"more than its terms when one slot is reserved; index {refused} is one of them"
        )


def _lookup_layer(value: Any) -> tuple[str, int, int] | None:
    """(class name, ``vocabulary_size()``, reserved indices) of a Keras lookup layer."""
    cls = type(value)
    if cls.__name__ not in LOOKUP_LAYERS or not is_library_class(cls):
        return None
    stored = instance_dict(value) or {}
    oov = stored.get("num_oov_indices")
    mask = stored.get("mask_token")
    try:
        size = value.vocabulary_size()
    except Exception:
        return None
    if type(size) is not int or type(oov) is not int:
        return None
    return cls.__name__, size, oov + (0 if mask is None else 1)


def _layer_call(node: ast.expr, frame: CellFrame, context: ErrorContext) -> IdsLookup | None:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return None
    found, layer = context.resolve(node.func, frame)
    read = _lookup_layer(layer) if found else None
    if read is None:
        return None
    cls, size, reserved = read
    return IdsLookup(node.func.id, cls, size, reserved)


def ids_lookup(
    ids: ast.expr | None, frame: CellFrame, context: ErrorContext, refused: int
) -> IdsLookup | None:
    """The lookup layer whose output the ids are, when it gives the index refused."""
    if ids is None:
        return None
    made = _layer_call(ids, frame, context)
    if made is None and isinstance(ids, ast.Name):
        assigned = newest_assignment(ids.id, frame, context)
        if assigned is not None and isinstance(assigned.assignment, ast.Assign):
            made = _layer_call(assigned.assignment.value, frame, context)
    if made is None or not 0 <= refused < made.size:
        return None
    return made


def names_size_of(name: str, lookup: IdsLookup, frame: CellFrame, context: ErrorContext) -> bool:
    """Whether the constant ``name`` was assigned from this lookup's own size
    (``n_codes = codes.vocabulary_size()``): then it is the learner's name for that size."""
    assigned = newest_assignment(name, frame, context)
    return assigned is not None and f"{lookup.name}.vocabulary_size()" in assigned.statement
