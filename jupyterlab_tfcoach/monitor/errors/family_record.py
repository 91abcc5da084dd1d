"""What one error family is: a small record in the catalogue ``families.FAMILIES``.

Every family has one shape, so that adding a family is adding one record:

- ``name``: what it is about, as ``docs/report.md`` lists it;
- recognising it: ``exception_type`` (when the family is about one) and ``messages``,
  the text TensorFlow or Keras raise for it (``Message``: a regex, and for a graph
  message that names its op, the ops it is about); the first message that matches
  recognises the error;
- ``read``: a function that reads the operands it needs from the failing line and
  writes the rule that was broken and the fix in the user's names (a ``Finding``), or
  gives None when the line does not fit the family after all;
- ``section``: the course section its rule links to (a reading names another one only
  for a case another section teaches);
- ``without_library``: claimed even when the traceback never reached TensorFlow or Keras.

A family with no ``messages`` is recognised by its reading alone (what was written
against what the callee declares). The helpers the families' readers share (shapes
written in messages, the value of an operand, the spelling of ``tf``) live here too.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import CellFrame, ErrorContext, ParsedError
from jupyterlab_tfcoach.monitor.errors.failing_line import (
    FailingLine,
    Operand,
    describe,
    value_of,
)

# Reading shapes and dtypes first: the section every unrecognised error links to.
GENERAL_SECTION = "shape-dtype-device"


@dataclass(frozen=True)
class Finding:
    """What a family's reading knows: the rule that was broken and the fix (or None).
    ``section`` is None for the family's own course section."""

    rule: str
    fix: str | None
    section: str | None = None


@dataclass(frozen=True)
class Message:
    """A message TensorFlow or Keras raise for a family. A graph message that names its
    op (``... = MatMul[...]``, the regex's ``op`` group) belongs to the family only for
    the ``ops`` listed, or for any op but those in ``other_than``."""

    pattern: re.Pattern[str]
    ops: tuple[str, ...] = ()
    other_than: tuple[str, ...] = ()

    def match(self, text: str) -> re.Match[str] | None:
        found = self.pattern.search(text)
        if found is None or not (self.ops or self.other_than):
            return found
        op = found.groupdict().get("op")
        if self.ops and op not in self.ops:
            return None
        if op in self.other_than:
            return None
        return found


@dataclass(frozen=True)
class Recognised:
    """An error a family recognised: the parsed error (its ``message`` the whole text)
    and the match of the family's message that recognised it."""

    parsed: ParsedError
    match: re.Match[str] | None

    def group(self, name: str) -> str | Any:
        """A group of the message's match, None for an optional group that did not take
        part (families with messages only)."""
        if self.match is None:
            raise LookupError(name)
        return self.match.group(name)

    def matched(self, pattern: re.Pattern[str]) -> bool:
        """Whether this message of the family (of several) recognised the error."""
        return self.match is not None and self.match.re is pattern


Reader = Callable[[Recognised, FailingLine, ErrorContext], Finding | None]


@dataclass(frozen=True)
class ErrorFamily:
    """One family of the catalogue (see the module's docstring)."""

    name: str
    messages: tuple[Message, ...]
    read: Reader
    section: str
    exception_type: str | None = None
    without_library: bool = False

    def recognise(self, parsed: ParsedError) -> Recognised | None:
        if self.exception_type is not None and parsed.type != self.exception_type:
            return None
        if not self.messages:
            return Recognised(parsed, None)
        for message in self.messages:
            match = message.match(parsed.message)
            if match is not None:
                return Recognised(parsed, match)
        return None

    def explain(
        self, parsed: ParsedError, line: FailingLine, context: ErrorContext
    ) -> Finding | None:
        """The family's finding for this error, or None when it is not this family's."""
        recognised = self.recognise(parsed)
        return self.read(recognised, line, context) if recognised is not None else None


# ------------------------------------------------------------------ shared reading
def shape_list(text: str) -> tuple[int | None, ...] | None:
    """``3,4`` or ``?, 4`` (a shape as a message writes it) -> ``(3, 4)``, ``(None, 4)``."""
    dims: list[int | None] = []
    for part in text.replace("?", "None").split(","):
        part = part.strip()
        if not part:
            continue
        if part == "None":
            dims.append(None)
        elif part.lstrip("-").isdigit():
            dims.append(int(part))
        else:
            return None
    return tuple(dims)


def operand_of(
    node: ast.expr, line: FailingLine, context: ErrorContext, frame: CellFrame | None = None
) -> Operand | None:
    """What the expression ``node`` (on the failing line, or in ``frame``) holds."""
    frame = frame or line.frame
    source = frame.segment(node)
    if not source:
        return None
    known = line.operand(source)
    if known is not None:
        return known
    try:
        found, value = value_of(node, frame, context)
        return describe(source, value) if found else None
    except Exception:
        return None


def tf_alias(context: ErrorContext) -> str:
    """How the user's code spells TensorFlow (``tf``), for fixes in their names."""
    return context.module_alias("tensorflow", "tf")


def segment_of(line: FailingLine, node: ast.AST | None) -> str:
    """The source of ``node`` on the failing line, or ""."""
    return (line.frame.segment(node) if node is not None else None) or ""


# ------------------------------------------------------------------ who raised it
_LIBRARY_MODULES = ("tensorflow", "keras", "tf_keras")
_MAX_TRACEBACK = 500


def raised_through_library(context: ErrorContext, parsed: ParsedError) -> bool:
    """Whether TensorFlow or Keras raised the error or passed it on."""
    if parsed.inside_tf_function:
        return True
    exception = context.exception
    module = getattr(type(exception), "__module__", "")
    if type(module) is str and module.startswith(_LIBRARY_MODULES):
        return True
    traceback = exception.__traceback__
    for _ in range(_MAX_TRACEBACK):
        if traceback is None:
            return False
        namespace = traceback.tb_frame.f_globals
        name = namespace.get("__name__") if type(namespace) is dict else None
        if type(name) is str and name.partition(".")[0] in _LIBRARY_MODULES:
            return True
        traceback = traceback.tb_next
    return False


def raised_through_numpy(context: ErrorContext) -> bool:
    """Whether NumPy raised the error in a function the learner's line called
    (``np.quantile(scores, 451.0)``): its traceback passes through NumPy's own modules."""
    exception = context.exception
    module = getattr(type(exception), "__module__", "")
    if type(module) is str and module.partition(".")[0] == "numpy":
        return True
    traceback = exception.__traceback__
    for _ in range(_MAX_TRACEBACK):
        if traceback is None:
            return False
        namespace = traceback.tb_frame.f_globals
        name = namespace.get("__name__") if type(namespace) is dict else None
        if type(name) is str and name.partition(".")[0] == "numpy":
            return True
        traceback = traceback.tb_next
    return False


def called_numpy(line: FailingLine, context: ErrorContext) -> bool:
    """Whether the failing instruction is a call of a NumPy function written from a name
    holding the numpy module or a submodule (``np.bincount(ids)``, ``np.add.at(...)``):
    NumPy's functions written in C leave no NumPy frame in the traceback."""
    call = line.call
    if not isinstance(call, ast.Call) or not line.frame.at_position(call):
        return False
    root = call.func
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return False
    found, module = context.lookup(root.id, line.frame)
    if not found or not isinstance(module, ModuleType):
        return False
    name = vars(module).get("__name__")
    return type(name) is str and name.partition(".")[0] == "numpy"


def raised_by_keras(context: ErrorContext) -> bool:
    """Whether the innermost library frame of the traceback is Keras's."""
    traceback = context.exception.__traceback__
    innermost: str | None = None
    for _ in range(_MAX_TRACEBACK):
        if traceback is None:
            break
        namespace = traceback.tb_frame.f_globals
        name = namespace.get("__name__") if type(namespace) is dict else None
        if type(name) is str and name.partition(".")[0] in _LIBRARY_MODULES:
            innermost = name
        traceback = traceback.tb_next
    return innermost is not None and innermost.partition(".")[0] == "keras"
