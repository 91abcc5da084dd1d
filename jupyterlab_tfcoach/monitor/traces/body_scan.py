"""What a traced Python function does to the world outside it, read from its code object.

A ``tf.function`` runs its Python body only while tracing. Two consequences
trip learners up and are visible in the bytecode, without running anything:

* side effects (``global steps_done; steps_done += 1``, ``loss_history.append``,
  ``print``, ``self.log.append``) happen once per trace, not once per call;
* Python values read from globals, closures or ``self`` become constants of the
  graph: a later change does not reach a call that reuses the trace.

The bytecode scan runs once per code object (cached); what it finds is checked
against the live values (exact types only, no user code runs) when a trace
happens, and the plain values read are kept to compare after later calls.
"""

from __future__ import annotations

import dis
import types
import weakref
from collections import deque
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.stored_state import instance_dict

# Methods of Python containers that change them in place.
MUTATORS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "update",
        "add",
        "setdefault",
        "pop",
        "popitem",
        "clear",
        "remove",
        "discard",
        "appendleft",
    }
)
# Code objects that run inline, during the trace, as part of the function's body
# (Python < 3.12 compiles comprehensions into their own code objects). Nested
# ``def``s and lambdas are not scanned: they may be what tf.py_function runs at
# call time.
_INLINE_CODE = frozenset({"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"})
_ATTRIBUTE_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})
_PY_RANDOM_FUNCTIONS = frozenset(
    {"random", "uniform", "gauss", "normalvariate", "randint", "choice", "shuffle", "sample"}
)
_SIMPLE_LOADS = frozenset(
    {
        "LOAD_CONST",
        "LOAD_FAST",
        "LOAD_FAST_BORROW",
        "LOAD_GLOBAL",
        "LOAD_DEREF",
        "LOAD_NAME",
        "LOAD_SMALL_INT",
    }
)
# Python 3.13 fuses and 3.14 renames the plain local load.
_FAST_LOADS = frozenset({"LOAD_FAST", "LOAD_FAST_BORROW", "LOAD_FAST_CHECK"})
_PLAIN_TYPES = (int, float, bool, str)
_CONTAINER_TYPES = (list, dict, set, deque)
MAX_TEXT_VALUE = 60
_MAX_NESTED = 4
_MAX_INSTRUCTIONS = 20_000

GLOBAL = "global"
CLOSURE = "closure"
SELF = "self"

# What an effect does (``Effect.action``).
COUNTER = "counter"  # x += 1 / x -= 1 / x *= ... on an outer name
STORE = "store"  # x = ... on an outer name
MUTATION = "mutation"  # x.append(...) and friends
SUBSCRIPT = "subscript"  # x[key] = ...
PRINT = "print"
RANDOM = "random"  # np.random.normal(...) / random.random(): one number, frozen at trace time


@dataclass(frozen=True)
class Effect:
    """One Python side effect in a function body, as found in its bytecode."""

    action: str
    scope: str  # GLOBAL | CLOSURE | SELF ("print": GLOBAL)
    name: str  # the outer name, or the attribute of self
    detail: str = ""  # the method (append) or the operator (+=)
    operand: str = ""  # ``1`` in ``steps += 1`` when it is a constant

    @property
    def label(self) -> str:
        if self.action == RANDOM:
            return f"{self.name}.{self.detail}"
        return f"self.{self.name}" if self.scope == SELF else self.name


@dataclass(frozen=True)
class CodeFacts:
    """What the bytecode of one function says (plain data, cached per code object)."""

    effects: tuple[Effect, ...]
    reads: tuple[tuple[str, str], ...]  # (scope, name) of values read
    parameters: tuple[str, ...]  # argument names, self excluded when it is a method
    self_name: str | None


_FACTS: weakref.WeakKeyDictionary[types.CodeType, CodeFacts] = weakref.WeakKeyDictionary()


def code_facts(code: types.CodeType) -> CodeFacts:
    """The side effects and outer reads of ``code`` (scanned once per code object)."""
    found = _FACTS.get(code)
    if found is None:
        found = _scan(code)
        try:
            _FACTS[code] = found
        except TypeError:
            pass
    return found


def _is_augmented(instructions: list[dis.Instruction], index: int) -> tuple[str, str]:
    """The in-place operator (``+=``) computed just before a store and its constant
    operand (``"1"``, or ``""`` when it is not a constant); ``("", "")`` if none."""
    for back in range(index - 1, max(index - 4, -1), -1):
        instruction = instructions[back]
        name = instruction.opname
        operator = ""
        if name == "BINARY_OP" and str(instruction.argrepr).endswith("="):
            operator = str(instruction.argrepr)
        elif name.startswith("INPLACE_"):  # Python < 3.11
            operator = {"INPLACE_ADD": "+=", "INPLACE_SUBTRACT": "-="}.get(name, "op=")
        if operator:
            operand = instructions[back - 1] if back >= 1 else None
            value = operand.argval if operand is not None else None
            constant = (
                operand is not None
                and operand.opname in ("LOAD_CONST", "LOAD_SMALL_INT")
                and type(value) in (int, float)
            )
            return operator, repr(value) if constant else ""
        if name not in ("SWAP", "COPY", "ROT_TWO", "DUP_TOP", "NOP", "CACHE"):
            break
    return "", ""


def _scan(code: types.CodeType) -> CodeFacts:
    argument_count = code.co_argcount + code.co_kwonlyargcount
    parameters = tuple(code.co_varnames[:argument_count])
    self_name = parameters[0] if parameters and parameters[0] in ("self", "cls") else None
    effects: list[Effect] = []
    reads: list[tuple[str, str]] = []
    _scan_into(code, frozenset(code.co_freevars), self_name, effects, reads, 0)
    once = _once_flags(code, self_name)
    if once:
        # ``if not self.built: <create variables>; self.built = True`` is how a traced
        # function creates its variables once: the flag is meant to change once.
        effects = [e for e in effects if e.action != STORE or (e.scope, e.name) not in once]
    written = {(effect.scope, effect.name) for effect in effects}
    unique_effects = tuple(dict.fromkeys(effects))
    unique_reads = tuple(read for read in dict.fromkeys(reads) if read not in written)
    return CodeFacts(
        effects=unique_effects,
        reads=unique_reads,
        parameters=parameters[1:] if self_name else parameters,
        self_name=self_name,
    )


# Between a condition's value and its jump: negation, truth tests, ``is None`` and the like
# (and the prefix of a jump over a long body).
_CONDITION_STEPS = frozenset(
    {"UNARY_NOT", "TO_BOOL", "IS_OP", "COMPARE_OP", "LOAD_CONST", "NOP", "CACHE", "EXTENDED_ARG"}
)


def _once_flags(code: types.CodeType, self_name: str | None) -> set[tuple[str, str]]:
    """Outer names and attributes of ``self`` that a condition tests and that the body sets
    to a constant: ``if not self.built: <create variables>; self.built = True``. Such a flag
    means "do this once"; set while tracing, it keeps that meaning across traces."""
    instructions = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    instructions = instructions[:_MAX_INSTRUCTIONS]
    freevars = frozenset(code.co_freevars)
    tested: set[tuple[str, str]] = set()
    constant: set[tuple[str, str]] = set()
    for index, instruction in enumerate(instructions):
        op = instruction.opname
        if "JUMP" in op and "_IF_" in op:
            back = index - 1
            while back >= 0 and instructions[back].opname in _CONDITION_STEPS:
                back -= 1
            if back < 0:
                continue
            load = instructions[back]
            outer = _outer(load, freevars)
            if outer is not None:
                tested.add(outer)
            elif (
                load.opname == "LOAD_ATTR"
                and self_name is not None
                and back >= 1
                and instructions[back - 1].opname in _FAST_LOADS
                and instructions[back - 1].argval == self_name
            ):
                tested.add((SELF, str(load.argval)))
        elif op == "STORE_ATTR" and self_name is not None and index >= 2:
            owner, value = instructions[index - 1], instructions[index - 2]
            if (
                owner.opname in _FAST_LOADS
                and owner.argval == self_name
                and value.opname in _CONSTANT_LOADS
            ):
                constant.add((SELF, str(instruction.argval)))
        elif op in ("STORE_GLOBAL", "STORE_DEREF") and index >= 1:
            if instructions[index - 1].opname in _CONSTANT_LOADS:
                scope = GLOBAL if op == "STORE_GLOBAL" else CLOSURE
                constant.add((scope, str(instruction.argval)))
    return tested & constant


_CONSTANT_LOADS = frozenset({"LOAD_CONST", "LOAD_SMALL_INT"})


def _outer(instruction: dis.Instruction, freevars: frozenset[str]) -> tuple[str, str] | None:
    """``(scope, name)`` when the instruction loads a global or a closure variable."""
    if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
        return GLOBAL, str(instruction.argval)
    if instruction.opname == "LOAD_DEREF" and instruction.argval in freevars:
        return CLOSURE, str(instruction.argval)
    return None


def _scan_into(
    code: types.CodeType,
    freevars: frozenset[str],
    self_name: str | None,
    effects: list[Effect],
    reads: list[tuple[str, str]],
    depth: int,
) -> None:
    instructions = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    instructions = instructions[:_MAX_INSTRUCTIONS]
    count = len(instructions)
    for index, instruction in enumerate(instructions):
        op = instruction.opname
        following = instructions[index + 1] if index + 1 < count else None
        outer = _outer(instruction, freevars)
        if outer is not None:
            scope, name = outer
            if scope == GLOBAL and name == "print":
                effects.append(Effect(PRINT, GLOBAL, "print"))
            elif (
                scope == GLOBAL
                and following is not None
                and following.opname in _ATTRIBUTE_LOADS
                and (random_call := _random_call(name, instructions, index)) is not None
            ):
                effects.append(Effect(RANDOM, GLOBAL, name, random_call))
            elif (
                following is not None
                and following.opname in _ATTRIBUTE_LOADS
                and following.argval in MUTATORS
            ):
                effects.append(Effect(MUTATION, scope, name, str(following.argval)))
            else:
                reads.append(outer)
        elif op in ("STORE_GLOBAL", "STORE_DEREF") and (
            op == "STORE_GLOBAL" or instruction.argval in freevars
        ):
            scope = GLOBAL if op == "STORE_GLOBAL" else CLOSURE
            operator, operand = _is_augmented(instructions, index)
            effects.append(
                Effect(
                    COUNTER if operator else STORE,
                    scope,
                    str(instruction.argval),
                    operator,
                    operand,
                )
            )
        elif op == "STORE_SUBSCR" and index >= 2:
            # ``target[key] = value`` pushes value, target, key: with a one-instruction
            # key the target is loaded right before it.
            key = instructions[index - 1]
            if key.opname in _SIMPLE_LOADS:
                target = instructions[index - 2]
                outer_target = _outer(target, freevars)
                if outer_target is not None:
                    effects.append(Effect(SUBSCRIPT, outer_target[0], outer_target[1]))
                elif (
                    self_name is not None
                    and target.opname == "LOAD_ATTR"
                    and index >= 3
                    and instructions[index - 3].opname in _FAST_LOADS
                    and instructions[index - 3].argval == self_name
                ):
                    effects.append(Effect(SUBSCRIPT, SELF, str(target.argval)))
        elif (
            op in _FAST_LOADS
            and self_name is not None
            and instruction.argval == self_name
            and following is not None
            and following.opname == "LOAD_ATTR"
        ):
            attribute = str(following.argval)
            after = instructions[index + 2] if index + 2 < count else None
            if after is not None and after.opname in _ATTRIBUTE_LOADS and after.argval in MUTATORS:
                effects.append(Effect(MUTATION, SELF, attribute, str(after.argval)))
            else:
                reads.append((SELF, attribute))
        elif op == "STORE_ATTR" and self_name is not None and index >= 1:
            previous = instructions[index - 1]
            operator, operand = _is_augmented(instructions, index)
            if previous.opname in _FAST_LOADS and previous.argval == self_name:
                effects.append(Effect(STORE, SELF, str(instruction.argval)))
            elif operator and _self_attribute_loaded(instructions, index, self_name):
                effects.append(Effect(COUNTER, SELF, str(instruction.argval), operator, operand))
        elif op == "LOAD_CONST" and depth < _MAX_NESTED:
            nested = instruction.argval
            if type(nested) is types.CodeType and nested.co_name in _INLINE_CODE:
                # A comprehension's free variables are the enclosing function's.
                _scan_into(nested, freevars, None, effects, reads, depth + 1)


def _random_call(name: str, instructions: list[dis.Instruction], index: int) -> str | None:
    """``random.normal`` for ``<name>.random.normal`` (NumPy) or ``random`` for
    ``<name>.random`` (the random module): which module it really is is checked live."""
    first = instructions[index + 1]
    second = instructions[index + 2] if index + 2 < len(instructions) else None
    if (
        first.argval == "random"
        and second is not None
        and second.opname in _ATTRIBUTE_LOADS
        and type(second.argval) is str
    ):
        return f"random.{second.argval}"
    if type(first.argval) is str and first.argval in _PY_RANDOM_FUNCTIONS:
        return str(first.argval)
    return None


def _self_attribute_loaded(instructions: list[dis.Instruction], index: int, self_name: str) -> bool:
    """``self.count += 1``: ``LOAD_FAST self; COPY; LOAD_ATTR count; ...; STORE_ATTR count``."""
    name = instructions[index].argval
    for back in range(index - 1, max(index - 12, 0), -1):
        instruction = instructions[back]
        if instruction.opname == "LOAD_ATTR" and instruction.argval == name:
            for start in range(back - 1, max(back - 3, -1), -1):
                candidate = instructions[start]
                if candidate.opname in _FAST_LOADS:
                    return bool(candidate.argval == self_name)
            return False
    return False


# ---------------------------------------------------------------- live values
class Scope:
    """Where a traced function's outer names live: its globals, closure and ``self``.

    Only the function (weak) and the instance (weak) are kept; the values are
    looked up when needed.
    """

    def __init__(self, function: types.FunctionType, instance: Any | None) -> None:
        self._function = weakref.ref(function)
        self._instance: weakref.ReferenceType[Any] | None = None
        if instance is not None:
            try:
                self._instance = weakref.ref(instance)
            except TypeError:
                self._instance = None

    @property
    def function(self) -> types.FunctionType | None:
        return self._function()

    @property
    def instance(self) -> Any | None:
        return self._instance() if self._instance is not None else None

    def lookup(self, scope: str, name: str) -> tuple[bool, Any]:
        """``(found, value)`` of one outer name; never runs user code."""
        function = self._function()
        if function is None:
            return False, None
        if scope == GLOBAL:
            namespace = function.__globals__
            if type(namespace) is dict and name in namespace:
                return True, namespace[name]
            return False, None
        if scope == CLOSURE:
            code = function.__code__
            closure = function.__closure__ or ()
            try:
                cell = closure[code.co_freevars.index(name)]
                return True, cell.cell_contents
            except (ValueError, IndexError):
                return False, None
        instance = self._instance() if self._instance is not None else None
        if instance is None:
            return False, None
        attributes = instance_dict(instance)
        if attributes is None or name not in attributes:
            return False, None
        return True, attributes[name]


def is_plain(value: Any) -> bool:
    return type(value) in _PLAIN_TYPES


def is_container(value: Any) -> bool:
    # issubclass on the type: tf.Module and Keras wrap lists (ListWrapper, TrackedList)
    # in list subclasses; isinstance could consult a hostile __class__.
    return issubclass(type(value), _CONTAINER_TYPES)


def live_effects(facts: CodeFacts, scope: Scope) -> list[Effect]:
    """The effects of ``facts`` that really touch outer Python state right now."""
    found: list[Effect] = []
    for effect in facts.effects:
        if effect.scope == SELF and facts.self_name is None:
            continue
        if effect.action == RANDOM:
            # Only the real NumPy / random modules: a user object named np is not.
            present, value = scope.lookup(GLOBAL, effect.name)
            module_name = (
                getattr(value, "__name__", None) if type(value) is types.ModuleType else None
            )
            if present and (
                (module_name == "numpy" and effect.detail.startswith("random."))
                or (module_name == "random" and not effect.detail.startswith("random."))
            ):
                found.append(effect)
            continue
        if effect.action == PRINT:
            # ``print`` defined in the user's globals is not the builtin.
            present, _ = scope.lookup(GLOBAL, "print")
            if not present:
                found.append(effect)
            continue
        present, value = scope.lookup(effect.scope, effect.name)
        if not present:
            continue
        if effect.action in (MUTATION, SUBSCRIPT):
            if is_container(value):
                found.append(effect)
        elif effect.action == COUNTER:
            if effect.scope != SELF or is_plain(value):
                found.append(effect)
        elif is_plain(value):  # STORE of a plain value (a Python flag or number)
            found.append(effect)
    return found


def plain_snapshot(facts: CodeFacts, scope: Scope) -> dict[tuple[str, str], Any]:
    """The plain (int/float/bool/str) values the function reads from outside, now."""
    values: dict[tuple[str, str], Any] = {}
    for read in facts.reads:
        if read[0] == SELF and facts.self_name is None:
            continue
        present, value = scope.lookup(*read)
        if present and is_plain(value) and (type(value) is not str or len(value) <= 200):
            values[read] = value
    return values


def same_value(old: Any, new: Any) -> bool:
    """Plain values compared as the graph would see them (1 and 1.0 are the same)."""
    if type(old) is type(new):
        return bool(old == new)
    numbers = (int, float)
    if type(old) in numbers and type(new) in numbers:
        return bool(float(old) == float(new))
    return False


def value_text(value: Any) -> str:
    text = repr(value) if is_plain(value) else f"a {type(value).__name__}"
    return text if len(text) <= MAX_TEXT_VALUE else text[: MAX_TEXT_VALUE - 1] + "…"
