"""Short cards on TensorFlow API names: what the name is, the pitfall to remember,
and the course section that teaches it.

Cards are keyed by canonical name: ``tf.<public name>`` for API objects
(``tf.function``, the spelling of ``analysis.imports``) and ``<Class>.<method>``
for methods called on objects a program binds (``GradientTape.gradient`` for
``tape.gradient``). ``summary`` and ``pitfall`` are one paragraph each, with
Markdown inline code and emphasis only, like the course text; adapters render
them (the language server's hover turns them into a Markdown card).

This module imports only the standard library.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

_PREFIX = "tf."


@dataclass(frozen=True)
class ApiCard:
    name: str  # canonical: "tf.function" or "GradientTape.gradient"
    summary: str  # what it is
    pitfall: str  # the mistake to avoid
    section_id: str  # the course section that teaches it

    @property
    def public_name(self) -> str:
        """The name in TensorFlow's API docs: ``tf.GradientTape.gradient``."""
        return self.name if self.name.startswith(_PREFIX) else _PREFIX + self.name


_CARDS = (
    ApiCard(
        "tf.function",
        "Compiles a Python function into a TensorFlow graph. The Python body runs only "
        "while *tracing*; later calls with compatible inputs reuse the graph.",
        "Python side effects (`print`, `list.append`, counters) run once per trace, not "
        "once per call, and every new Python number passed as an argument triggers a retrace.",
        "tracing",
    ),
    ApiCard(
        "tf.Variable",
        "A mutable tensor that keeps its state between calls; optimizers update it and "
        "`GradientTape` watches it automatically when trainable.",
        "`w = w - lr * g` rebinds the name to a plain tensor and the variable silently "
        "stops training; update in place with `w.assign_sub(lr * g)`.",
        "variables",
    ),
    ApiCard(
        "tf.constant",
        "An immutable tensor built from a Python value; the dtype is inferred "
        "(`int32` for integers, `float32` for floats).",
        "It cannot change in place, and a tape does not watch it: `tape.gradient` with "
        "respect to a constant is `None` unless you call `tape.watch` on it first.",
        "tensors-immutable",
    ),
    ApiCard(
        "tf.GradientTape",
        "Records the operations run inside its `with` block so that gradients can be "
        "computed afterwards with `tape.gradient(target, sources)`.",
        "A tape computes gradients once: a second `gradient` call raises unless it was "
        "created with `persistent=True` (then `del tape` when done). Only trainable "
        "variables are watched automatically.",
        "gradient-tape",
    ),
    ApiCard(
        "tf.cast",
        "Converts a tensor to another dtype, e.g. `tf.cast(x, tf.float32)`.",
        "TensorFlow never promotes dtypes implicitly: `int32 + float32` raises. Cast "
        "explicitly, and remember that casting floats to integers truncates.",
        "dtype-casting",
    ),
    ApiCard(
        "tf.print",
        "Prints tensor values when the operation *runs*, inside graphs too.",
        "Python `print` inside a `tf.function` runs only while tracing and shows "
        "symbolic tensors; use `tf.print` to see values on every call.",
        "side-effects",
    ),
    ApiCard(
        "tf.TensorSpec",
        "Describes the shape and dtype of a tensor argument, e.g. in a `tf.function`'s "
        "`input_signature`.",
        "Use `None` for the batch dimension (`tf.TensorSpec([None, 28], tf.float32)`): a "
        "fixed leading size rejects every other batch size, including the last partial batch.",
        "input-signature",
    ),
    ApiCard(
        "GradientTape.gradient",
        "Computes the gradients of `target` with respect to `sources` from the operations "
        "this tape recorded.",
        "A non-persistent tape is released after the first call, so a second `gradient` "
        "raises. Sources that are not trainable variables need `tape.watch`, else their "
        "gradient is `None`.",
        "gradient-tape",
    ),
    ApiCard(
        "GradientTape.watch",
        "Asks the tape to record operations on a tensor that is not a trainable variable "
        "(a constant, an input).",
        "Call it inside the `with` block *before* the computation that uses the tensor; "
        "watching afterwards records nothing.",
        "tape-watch",
    ),
    ApiCard(
        "Variable.assign",
        "Writes a new value into the variable in place; it stays the same trainable object.",
        "Prefer it to `v = new_value`, which only rebinds the Python name to a tensor.",
        "rebinding-variables",
    ),
    ApiCard(
        "Variable.assign_add",
        "Adds to the variable in place: `v.assign_add(delta)`.",
        "Prefer it to `v = v + delta` or `v += delta`: both can leave a plain tensor where "
        "the variable was, so it stops training. On a `tf.Variable` `+=` raises a "
        "RuntimeError; on a Keras 3 variable (a layer weight) it rebinds silently.",
        "rebinding-variables",
    ),
    ApiCard(
        "Variable.assign_sub",
        "Subtracts from the variable in place: `w.assign_sub(lr * g)`.",
        "Prefer it to `w = w - lr * g` or `w -= lr * g`: both can leave a plain tensor where "
        "the variable was, so it stops training. On a `tf.Variable` `-=` raises a "
        "RuntimeError; on a Keras 3 variable (a layer weight) it rebinds silently. The "
        "step must have the variable's shape: for a single number use `w.assign(w - step)`.",
        "rebinding-variables",
    ),
)

API_CARDS: Mapping[str, ApiCard] = MappingProxyType({card.name: card for card in _CARDS})


def _methods() -> dict[str, frozenset[str]]:
    found: dict[str, set[str]] = {}
    for name in API_CARDS:
        if not name.startswith(_PREFIX):
            cls, _, method = name.partition(".")
            found.setdefault(cls, set()).add(method)
    return {cls: frozenset(methods) for cls, methods in found.items()}


_METHODS = _methods()


def methods_of(kind: str) -> frozenset[str]:
    """The methods with a card on objects of a class: ``"Variable"`` -> ``assign``, ..."""
    return _METHODS.get(kind, frozenset())


def api_card(name: str | None) -> ApiCard | None:
    """The card for a canonical name; methods may also be spelled through the public
    class (``tf.GradientTape.gradient``). None when there is no card."""
    if not name:
        return None
    card = API_CARDS.get(name)
    if card is None and name.startswith(_PREFIX):
        cls, _, method = name[len(_PREFIX) :].rpartition(".")
        if method in methods_of(cls):
            card = API_CARDS.get(f"{cls}.{method}")
    return card


__all__ = ["API_CARDS", "ApiCard", "api_card", "methods_of"]
