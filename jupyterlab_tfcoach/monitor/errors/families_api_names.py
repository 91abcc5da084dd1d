"""A TensorFlow or Keras name that does not exist (issue #25): an attribute of a
``tensorflow``/``keras`` module, or of an object of their classes, that Python could not
find. Learners meet it when code written for tf.keras 2 runs on Keras 3 (``reset_states``,
``optimizer.lr``, ``keras.losses.Reduction``, ``layers.experimental.preprocessing``) and
when a name is mistyped (``keras.layers.Dence``, ``tf.reduce_means``).

Read from the failing line: the attribute Python named, the value it was looked up on
(a module, or an object whose class comes from TensorFlow or Keras; a class of the user's
own is left alone), then either a known rename (a small table of what Keras 3 and
TensorFlow 2 call it now) or the closest public names the module or class does have
(``difflib``, over ``vars`` of a module and ``dir`` of a class: no user code runs). The
fix is the statement with the name replaced, when that is one unambiguous edit, in every
place of the statement whose owner is of the same kind (``g_opt.lr, d_opt.lr``: Python
stops at the first, a fix of that one alone fails again at the second). A method missing
on an object ``tf.saved_model.load`` restored is told by ``saved_functions.py``; a call
Keras 3 removed with no new name (``keras.backend.set_value``, an optimizer's ``minimize``)
by ``families_keras3_calls.py``, which writes it the Keras 3 way; Keras 2's backend math
(``K.clip``, ``K.pow``) by ``keras_backend_ops.py``, which writes it with ``keras.ops``.
A right name read on a loop's member of another class (``for layer in model.layers``
reaching the ``InputLayer``) is told first, by ``loop_members.py``: the loop is the cause.
"""

from __future__ import annotations

import ast
import difflib
import re
import sys
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite, rewrite_all
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.families_keras3_calls import removed_call
from jupyterlab_tfcoach.monitor.errors.family_record import (
    GENERAL_SECTION,
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)
from jupyterlab_tfcoach.monitor.errors.keras_backend_ops import backend_math
from jupyterlab_tfcoach.monitor.errors.loop_members import loop_member_lacking
from jupyterlab_tfcoach.monitor.errors.other_library_names import other_library_name
from jupyterlab_tfcoach.monitor.errors.saved_functions import (
    is_restored_object,
    missing_saved_method,
)
from jupyterlab_tfcoach.monitor.stored_state import (
    instance_dict,
    library_attribute,
    module_of_class,
    mro_of_class,
)

_type_name = type.__dict__["__name__"].__get__
KERAS_SECTION = "keras-model-api"
_NO_ATTRIBUTE = re.compile(
    r"(?:module '(?P<module>[\w.]+)'|'(?P<owner>\w+)' object|type object '(?P<cls>\w+)') "
    r"has no attribute '(?P<name>\w+)'"
)
_LIBRARIES = ("tensorflow", "keras", "tf_keras")

# What an attribute of tf.keras 2 (or TensorFlow 1) is called in Keras 3 / TensorFlow 2,
# by the kind of object it was looked up on. ``None``: nothing replaces it one for one
# (the rule says what does).
_RENAMED: dict[tuple[str, str], tuple[str | None, str]] = {
    ("metric", "reset_states"): (
        "reset_state",
        "Keras 3 renamed a metric's `reset_states()` to `reset_state()`",
    ),
    ("optimizer", "lr"): (
        "learning_rate",
        "Keras 3 optimizers dropped the `lr` alias: the rate is `learning_rate` (read it "
        "with `float(...)`, set it with `.assign(...)` or by assigning a number)",
    ),
    ("optimizer", "decay"): (
        None,
        "Keras 3 optimizers have no `decay`: a learning rate that falls over time is a "
        "schedule given as `learning_rate` (`keras.optimizers.schedules.ExponentialDecay"
        "(0.01, decay_steps=1000, decay_rate=0.9)`)",
    ),
    ("keras.layers", "CuDNNLSTM"): (
        "LSTM",
        "Keras 3 has no `CuDNNLSTM`: `LSTM` with its default arguments runs the fast cuDNN "
        "kernel by itself on a GPU",
    ),
    ("keras.layers", "CuDNNGRU"): (
        "GRU",
        "Keras 3 has no `CuDNNGRU`: `GRU` with its default arguments runs the fast cuDNN "
        "kernel by itself on a GPU",
    ),
    ("keras.preprocessing", "text"): (
        None,
        "Keras 3 has no `keras.preprocessing.text` (`Tokenizer`): text becomes token ids "
        "with the `keras.layers.TextVectorization` layer, `adapt`ed on the training text",
    ),
}


def _owner_of(node: ast.expr, line: FailingLine, context: ErrorContext) -> tuple[bool, Any]:
    """What ``node`` holds: a module reached through modules (``keras.layers``,
    ``tf.keras.losses``: read from the modules' dicts, so nothing is imported or
    loaded), else ``value_of``'s reading."""
    if isinstance(node, ast.Attribute):
        found, parent = _owner_of(node.value, line, context)
        if found and isinstance(parent, ModuleType):
            child = vars(parent).get(node.attr)
            if child is None and _type_name(type(parent)) == "KerasLazyLoader":
                # ``tf.keras`` before its first use: Keras 3's tf.keras API module.
                loaded = sys.modules.get("keras._tf_keras.keras")
                child = vars(loaded).get(node.attr) if loaded is not None else None
            if isinstance(child, ModuleType):
                return True, child
        if found and not isinstance(parent, ModuleType) and _has_library_base(parent):
            # ``self.model`` in the learner's callback: a property Keras defines on the
            # base class. ``library_attribute`` runs only TensorFlow's or Keras's own
            # descriptor (a property the learner wrote is never evaluated).
            value = library_attribute(parent, node.attr, _ABSENT)
            if value is not _ABSENT:
                return True, value
    return value_of(node, line.frame, context)


_ABSENT: Any = object()


def _has_library_base(owner: Any) -> bool:
    try:
        return any(
            (module_of_class(base) or "").startswith(_LIBRARIES)
            for base in mro_of_class(type(owner))
        )
    except Exception:
        return False


def _owner_kind(owner: Any) -> str | None:
    """``"keras.layers"`` for a module (its name, ``tf.keras``'s spelled as Keras's),
    ``"metric"``/``"optimizer"``/``"object"`` for an object of a TensorFlow or Keras
    class; None for anything else (the user's own classes included)."""
    if isinstance(owner, ModuleType):
        name = str(vars(owner).get("__name__") or "")
        if not name.startswith(_LIBRARIES):
            return None
        return re.sub(r"^keras\._tf_keras\.keras", "keras", re.sub(r"\.src\b", "", name))
    cls = type(owner)
    if not any((module_of_class(base) or "").startswith(_LIBRARIES) for base in mro_of_class(cls)):
        return None  # a class of the user's alone: its attributes are theirs to name
    names = {
        _type_name(base)
        for base in mro_of_class(cls)
        if (module_of_class(base) or "").startswith(_LIBRARIES)
    }
    if "Metric" in names:
        return "metric"
    if "Optimizer" in names:
        return "optimizer"
    return "keras object" if (module_of_class(cls) or "").startswith("keras") else "object"


def _public_names(owner: Any) -> list[str]:
    """The names the module defines, or the class (and the instance's own dict) has."""
    try:
        if isinstance(owner, ModuleType):
            names = list(vars(owner))
        else:
            names = [n for base in mro_of_class(type(owner)) for n in vars(base)]
            own = instance_dict(owner)  # without the object's attribute hooks
            if own is not None:
                names += list(own)
    except Exception:
        return []
    return sorted({n for n in names if type(n) is str and not n.startswith("_")})


def _closest(name: str, names: list[str]) -> list[str]:
    """The public names closest to ``name`` (difflib, at most 3); only the first when it
    is clearly the one meant (``reduce_means``: ``reduce_mean``, not ``reduce_min``)."""
    scored = sorted(
        ((difflib.SequenceMatcher(None, name, n).ratio(), n) for n in names), reverse=True
    )
    close = [(score, n) for score, n in scored[:3] if score >= 0.75]
    if len(close) > 1 and close[0][0] >= 0.9 and close[1][0] <= close[0][0] - 0.08:
        return [close[0][1]]
    return [n for _score, n in close]


def _attribute_node(line: FailingLine, name: str) -> ast.Attribute | None:
    for part in line.frame.header():
        for node in ast.walk(part):
            if isinstance(node, ast.Attribute) and node.attr == name:
                return node
    return None


def _reduction(line: FailingLine, node: ast.Attribute) -> Finding | None:
    """``keras.losses.Reduction.SUM`` -> ``"sum"``: Keras 3 takes the reduction as a
    string."""
    parents = [
        found
        for part in line.frame.header()
        for found in ast.walk(part)
        if isinstance(found, ast.Attribute) and found.value is node
    ]
    rule = (
        'Keras 3 has no `Reduction` enum: a loss takes its reduction as a string, `"sum"`, '
        '`"sum_over_batch_size"` (the default), `"mean"` or `"none"`'
    )
    statement = line.statement
    if len(parents) != 1 or statement is None:
        return Finding(rule + ".", None, section=KERAS_SECTION)
    member = parents[0].attr.lower()
    if member not in ("sum", "sum_over_batch_size", "none", "mean", "auto"):
        return Finding(rule + ".", None, section=KERAS_SECTION)
    member = "sum_over_batch_size" if member == "auto" else member
    fixed = rewrite(line.frame, statement, parents[0], f'"{member}"')
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix, section=KERAS_SECTION)


def _experimental(line: FailingLine, node: ast.Attribute) -> Finding | None:
    """``keras.layers.experimental.preprocessing.Normalization`` -> ``keras.layers
    .Normalization``: the preprocessing layers left ``experimental`` in TF 2.6."""
    rule = (
        "The preprocessing layers are no longer under `experimental.preprocessing`: "
        "`Normalization`, `TextVectorization`, `StringLookup`, `Rescaling`, `RandomFlip` "
        "and the others are in `keras.layers` itself"
    )
    outer = [
        found
        for part in line.frame.header()
        for found in ast.walk(part)
        if isinstance(found, ast.Attribute)
        and isinstance(found.value, ast.Attribute)
        and found.value.attr == "preprocessing"
        and found.value.value is node
    ]
    statement = line.statement
    base = line.frame.segment(node.value) or ""
    if len(outer) != 1 or statement is None or not base or "\n" in base:
        return Finding(rule + ".", None, section=KERAS_SECTION)
    fixed = rewrite(line.frame, statement, outer[0], f"{base}.{outer[0].attr}")
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix, section=KERAS_SECTION)


def _section_of(kind: str, meant: str | None) -> str | None:
    """Keras's names link to the Keras section (the family's); a TensorFlow name to the
    section of the hover card of the name meant, when it has one, else the general one."""
    if "keras" in kind or kind in ("metric", "optimizer"):
        return None  # the family's: Keras's model API
    try:
        from jupyterlab_tfcoach.course.api_cards import api_card

        card = api_card(f"tf.{meant}") if meant and kind == "tensorflow" else None
    except Exception:
        card = None
    return card.section_id if card is not None else GENERAL_SECTION


def _read_missing_name(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    name = error.group("name")
    node = _attribute_node(line, name)
    if node is None:
        return None
    found, owner = _owner_of(node.value, line, context)
    if not found:
        return None
    # A right name read on the loop's member of another class (`model.layers` reaching
    # the InputLayer): the loop is the cause, whoever defined the classes.
    mixed = loop_member_lacking(line, node, owner, name, context)
    if mixed is not None:
        return mixed
    kind = _owner_kind(owner)
    if kind is None:
        return None
    if is_restored_object(owner):
        rule, fix, section = missing_saved_method(line, node, owner, context)
        return Finding(rule, fix, section=section)
    written = line.frame.segment(node) or name
    if kind == "keras.losses" and name == "Reduction":
        return _reduction(line, node)
    if kind.startswith("keras.layers") and name == "experimental":
        return _experimental(line, node)
    if kind == "keras.backend":
        # Keras 2's backend math (`K.clip`, `K.pow`): keras.ops has it.
        moved = backend_math(line, node, owner, context)
        if moved is not None:
            return moved
    removed = removed_call(kind, node, line, context)
    if removed is not None:
        return removed
    statement = line.statement
    known = _RENAMED.get((kind, name))
    if known is not None:
        new, rule = known
        fix = None
        if new is not None and statement is not None:
            fixed = _renamed_everywhere(line, statement, node, kind, new, context)
            fix = code(fixed) if fixed and "\n" not in fixed else None
            renamed_too: list[str] = []
            rule += _used_again(
                line,
                lambda other: (
                    isinstance(other, ast.Attribute) and (other.attr == name and other is not node)
                ),
                f"`.{new}`",
                lambda other_statement, other: (
                    _renamed_everywhere(line, other_statement, other, kind, new, context)
                    if isinstance(other, ast.Attribute)
                    else None
                ),
                renamed_too,
            )
            fix = with_other_lines(fix, renamed_too)
        return Finding(rule + ".", fix, section=KERAS_SECTION)
    unbuilt = _made_by_build(owner, name, node, line)
    if unbuilt is not None:
        return unbuilt
    if kind == "keras object":
        # PyTorch's name for what Keras keeps under its own (`bn.running_mean`).
        other = other_library_name(line, node, owner, context)
        if other is not None:
            return other
    nested = _in_submodules(owner, name)
    if nested:
        return _found_in_submodule(line, node, kind, name, nested, context)
    close = _closest(name, _public_names(owner))
    # A name with no close TensorFlow spelling that NumPy has: NumPy's, not a typo.
    numpy_name = None if close else numpy_only_name(line, node, kind, name, context)
    if numpy_name is not None:
        return numpy_name
    what = (
        f"The module `{kind}`"
        if isinstance(owner, ModuleType)
        else f"A `{_type_name(type(owner))}` object"
    )
    section = _section_of(kind, close[0] if len(close) == 1 else None)
    if not close:
        rule = (
            f"{what} has no `{name}` ({code(written)} : the name is not in this version's "
            "API; check the spelling and the version the tutorial was written for)"
        )
        return Finding(rule + ".", None, section=section)
    listed = ", ".join(f"`{c}`" for c in close)
    closest = (
        f"its closest name is {listed}"
        if len(close) == 1
        else f"the closest names it has: {listed}"
    )
    rule = f"{what} has no `{name}`; {closest}"
    fix = None
    if len(close) == 1 and statement is not None:
        fixed = _renamed_everywhere(line, statement, node, kind, close[0], context)
        fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix, section=section)


# TensorFlow's modules -> the NumPy module a name missing there is looked for in.
_NUMPY_TWINS = {"": "", "math": "", "linalg": "linalg", "random": "random"}
# NumPy names whose TensorFlow computation is known (what to write instead, in words).
_TF_WAYS = {
    "cond": (
        "in TensorFlow it is the largest singular value over the smallest "
        "(`s = tf.linalg.svd(A, compute_uv=False)`, then `s[0] / s[-1]`)"
    ),
    "nanmean": (
        "in TensorFlow, average the values that are not NaN "
        "(`tf.boolean_mask(x, ~tf.math.is_nan(x))`, then `tf.reduce_mean`)"
    ),
    "mean": "TensorFlow's is `tf.reduce_mean`",
    "sum": "TensorFlow's is `tf.reduce_sum`",
}


def numpy_only_name(
    line: FailingLine, node: ast.Attribute, kind: str, name: str, context: ErrorContext
) -> Finding | None:
    """``tf.linalg.cond``, ``tf.math.nanmean``, ``tf.percentile``: a name TensorFlow does not
    have but the matching NumPy module does. Said as NumPy's; the TensorFlow way only for
    the few names it is known for; the fix, outside a traced function, calls NumPy on the
    eager values (NumPy reads an eager tensor as an array)."""
    if not kind.startswith("tensorflow"):
        return None
    place = kind.removeprefix("tensorflow").removeprefix("._api.v2").lstrip(".")
    twin = _NUMPY_TWINS.get(place)
    numpy = sys.modules.get("numpy")
    if twin is None or numpy is None or name.startswith("_"):
        return None
    # NumPy warns when a deprecated name is read: the monitor prints nothing.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = getattr(numpy, twin, None) if twin else numpy
        if module is None or not callable(getattr(module, name, None)):
            return None
    np = context.module_alias("numpy", "np")
    numpy_written = f"{np}.{twin + '.' if twin else ''}{name}"
    written = line.frame.segment(node) or name
    rule = (
        f"{code(numpy_written)} is NumPy's: TensorFlow has no {code(written)}, whatever its version"
    )
    way = _TF_WAYS.get(name)
    if way is not None:
        rule += f"; {way}"
    statement = line.statement
    # Inside a function the values may be symbolic (a tf.function, a loss): no NumPy fix.
    if "(in `" in line.where or statement is None:
        return Finding(rule + ".", None, section="numpy-in-graphs")
    rule += ". Outside a tf.function, NumPy reads an eager tensor as an array"
    fixed = rewrite(line.frame, statement, node, numpy_written)
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix, section="numpy-in-graphs")


# Submodules that hold old or duplicate copies of names: a name found only there is not
# the one to point a learner at.
_SKIPPED_SUBMODULES = frozenset({"compat", "v1", "v2", "experimental", "src", "backend"})
_MAX_SUBMODULES = 200


def _in_submodules(owner: Any, name: str) -> list[tuple[str, Any]]:
    """The public submodules of the library module ``owner`` that define ``name``
    (``tf`` has no ``reduce_std``; ``tf.math`` has it): ``[(submodule, value)]``, sorted.
    Reads ``vars`` of modules already imported; nothing is imported or called."""
    if not isinstance(owner, ModuleType):
        return []
    found: list[tuple[str, Any]] = []
    try:
        items = sorted(vars(owner).items())[: _MAX_SUBMODULES * 10]
        for sub_name, sub in items:
            if (
                type(sub_name) is not str
                or sub_name.startswith("_")
                or sub_name in _SKIPPED_SUBMODULES
                or not isinstance(sub, ModuleType)
            ):
                continue
            if not str(vars(sub).get("__name__") or "").startswith(_LIBRARIES):
                continue
            inner = vars(sub)
            if name in inner:
                found.append((sub_name, inner[name]))
    except Exception:
        return []
    return found


def _found_in_submodule(
    line: FailingLine,
    node: ast.Attribute,
    kind: str,
    name: str,
    nested: list[tuple[str, Any]],
    context: ErrorContext,
) -> Finding:
    """The name lives one level down (``tf.math.reduce_std``): the fix spells that path.
    Several submodules holding the same object (``tf.math.softplus`` is ``tf.nn.softplus``)
    are one answer; different objects under one name are listed, with no fix."""
    places = [f"`{kind}.{sub}.{name}`" for sub, _value in nested]
    same = len({id(value) for _sub, value in nested}) == 1
    where = places[0] if len(places) == 1 else " and ".join((", ".join(places[:-1]), places[-1]))
    rule = (
        f"The module `{kind}` has no `{name}` at its top level: the name lives in a "
        f"submodule, {where}"
    )
    if len(places) > 1:
        rule += " (the same function)" if same else " (different objects: pick the one meant)"
    section = _section_of(kind, f"{nested[0][0]}.{name}" if same else None)
    statement = line.statement
    fix = None
    if same and statement is not None:
        fixed = _renamed_everywhere(line, statement, node, kind, f"{nested[0][0]}.{name}", context)
        fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix, section=section)


def _made_by_build(owner: Any, name: str, node: ast.Attribute, line: FailingLine) -> Finding | None:
    """A layer of the learner's class whose ``build`` assigns ``self.<name>``, read before
    Keras built it (``built`` still False): the name is missing because ``build`` has not
    run yet, not because the API lacks it. Read from the class's source (``ast``)."""
    if library_attribute(owner, "built", True) is not False:
        return None
    for cls in mro_of_class(type(owner)):
        if (module_of_class(cls) or "").startswith(_LIBRARIES):
            break
        build = vars(cls).get("build")
        if build is None:
            continue
        if not _assigns_self(build, name):
            return None
        holder = line.frame.segment(node.value) or "the layer"
        layer = f"`{holder}`" if "\n" not in holder else "the layer"
        rule = (
            f"{layer} has no `{name}` yet: `{_type_name(cls)}.build` makes it "
            f"(`self.{name} = ...`), and Keras runs `build` only when the layer is first "
            f"called on data. Call {layer} on a batch of inputs first (or use it in a model "
            f"and build that model), then read `{name}`"
        )
        return Finding(rule + ".", None, section=KERAS_SECTION)
    return None


def _assigns_self(function: Any, name: str) -> bool:
    """Whether ``function`` (a plain ``def`` in the cells) assigns ``self.<name>``."""
    import inspect
    import textwrap
    import types

    if type(function) is not types.FunctionType:
        return False
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except Exception:
        return False
    for each in ast.walk(tree):
        targets = (
            each.targets
            if isinstance(each, ast.Assign)
            else [each.target]
            if isinstance(each, ast.AnnAssign)
            else []
        )
        for target in targets:
            if (
                isinstance(target, ast.Attribute)
                and target.attr == name
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            ):
                return True
    return False


def _renamed_everywhere(
    line: FailingLine,
    statement: ast.stmt,
    node: ast.Attribute,
    kind: str,
    new: str,
    context: ErrorContext,
) -> str | None:
    """The failing statement with every ``<owner>.<name>`` whose owner is of the same
    kind as the one Python stopped at renamed (``g_opt.lr, d_opt.lr``: Python stops at
    the first, the fix that renames it alone fails again at the second)."""
    places: list[tuple[ast.AST, str]] = []
    for found in ast.walk(statement):
        if not (isinstance(found, ast.Attribute) and found.attr == node.attr):
            continue
        owner_source = line.frame.segment(found.value)
        if not owner_source:
            return None  # a place not read: no fix rather than one that fails again
        if found is not node:
            known, owner = _owner_of(found.value, line, context)
            if not known or _owner_kind(owner) != kind:
                continue
        places.append((found, f"{owner_source}.{new}"))
    return rewrite_all(line.frame, statement, places) if places else None


MISSING_NAME = ErrorFamily(
    "a TensorFlow or Keras name that does not exist",
    messages=(Message(_NO_ATTRIBUTE),),
    read=_read_missing_name,
    section=KERAS_SECTION,
    exception_type="AttributeError",
    # Python raises it at the attribute, before any TensorFlow or Keras code runs.
    without_library=True,
)


# ------------------------------------------------------------------ Keras 2 argument order
_NOT_A_SHAPE = re.compile(r"Cannot convert '(?P<value>[^']*)' to a shape")
# tf.keras 2's ``add_weight(name, shape, dtype, initializer, ...)``: Keras 3 takes
# ``shape`` first, so the name written first is read as a shape.
_KERAS2_ADD_WEIGHT = ("name", "shape", "dtype", "initializer")


def _read_keras2_order(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    del context  # read from the call as written
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "add_weight"
        and call.args
        and len(call.args) <= len(_KERAS2_ADD_WEIGHT)
        and isinstance(call.args[0], ast.Constant)
        and call.args[0].value == error.group("value")
        and not any(isinstance(a, ast.Starred) for a in call.args)
    ):
        return None
    rule = (
        "Keras 3's `add_weight` takes `shape` first (`add_weight(shape=None, "
        "initializer=None, dtype=None, trainable=True, ..., name=None)`); tf.keras 2 took "
        f"the name first, so {code(repr(call.args[0].value))} was read as a shape. Pass the "
        "arguments by keyword (a weight with no shape is a scalar)"
    )
    statement = line.statement
    fixed = _by_keyword(line, statement, call) if statement is not None else None
    if fixed is None:
        return Finding(rule + ".", None, section=_WEIGHTS_SECTION)
    fix = code(fixed) if "\n" not in fixed else None
    fixed_too: list[str] = []
    rule += _used_again(
        line,
        lambda other: (
            isinstance(other, ast.Call)
            and other is not call
            and isinstance(other.func, ast.Attribute)
            and other.func.attr == "add_weight"
            and bool(other.args)
            and isinstance(other.args[0], ast.Constant)
            and type(other.args[0].value) is str
        ),
        "the arguments by keyword",
        lambda other_statement, other: (
            _by_keyword(line, other_statement, other) if isinstance(other, ast.Call) else None
        ),
        fixed_too,
    )
    return Finding(rule + ".", with_other_lines(fix, fixed_too), section=_WEIGHTS_SECTION)


def _by_keyword(line: FailingLine, statement: ast.stmt, call: ast.Call) -> str | None:
    """``statement`` with the ``add_weight`` call's positional arguments given by keyword
    in tf.keras 2's order (name, shape, dtype, initializer)."""
    if len(call.args) > len(_KERAS2_ADD_WEIGHT) or any(
        isinstance(a, ast.Starred) for a in call.args
    ):
        return None
    parts: list[str] = []
    for keyword_name, argument in zip(_KERAS2_ADD_WEIGHT, call.args, strict=False):
        source = line.frame.segment(argument)
        if not source:
            return None
        parts.append(f"{keyword_name}={source}")
    for keyword in call.keywords:
        source = line.frame.segment(keyword)
        if not source:
            return None
        parts.append(source)
    func = line.frame.segment(call.func)
    return rewrite(line.frame, statement, call, f"{func}({', '.join(parts)})") if func else None


_MAX_AGAIN = 3
_MAX_LINE = 120


def _used_again(
    line: FailingLine,
    same: Callable[[ast.AST], bool],
    change: str,
    fixer: Callable[[ast.stmt, ast.AST], str | None] | None = None,
    fixed_too: list[str] | None = None,
) -> str:
    """The cell's other places written the same way (``gap_metric.reset_states()`` after
    ``tp_metric.reset_states()``): the next error otherwise, once this line is fixed.
    With ``fixer`` (the statement and the node -> the statement fixed), each such line's
    fix goes into ``fixed_too`` (``line 5: `...```), to be printed with the fix."""
    tree = line.frame.tree()
    if tree is None:
        return ""
    others = sorted(
        (node for node in ast.walk(tree) if same(node)),
        key=lambda node: (node.lineno, node.col_offset),  # type: ignore[attr-defined]
    )
    lines = line.frame.source().splitlines()
    shown = []
    for node in others[:_MAX_AGAIN]:
        number = node.lineno  # type: ignore[attr-defined]
        if number == line.frame.position.line or number > len(lines):
            continue
        # The whole line when short (it names what the call sets), else the call.
        written = lines[number - 1].strip()
        if len(written) > _MAX_LINE or "`" in written:
            written = line.frame.segment(node) or ""
        if written and "\n" not in written:
            shown.append(f"{code(written)} (line {number})")
            statement = _statement_on(tree, node)
            fixed = fixer(statement, node) if fixer is not None and statement else None
            if fixed_too is not None and fixed and "\n" not in fixed:
                fixed_too.append(f"on line {number} {code(fixed)}")
    if not shown:
        return ""
    return f"; this cell writes it again: {', '.join(shown)}, which needs {change} too"


def _statement_on(tree: ast.Module, node: ast.AST) -> ast.stmt | None:
    """The innermost simple statement holding ``node``."""
    found: ast.stmt | None = None
    for statement in ast.walk(tree):
        if (
            isinstance(statement, ast.stmt)
            and not isinstance(statement, (ast.FunctionDef, ast.ClassDef, ast.If, ast.For))
            and not isinstance(statement, (ast.While, ast.With, ast.Try, ast.AsyncFunctionDef))
            and any(inner is node for inner in ast.walk(statement))
        ):
            found = statement
    return found


def with_other_lines(fix: str | None, fixed_too: list[str]) -> str | None:
    """The fix, after the same fix of the cell's other lines (the fix of the failing line
    stays the last code of the entry)."""
    if fix is None or not fixed_too:
        return fix
    return f"{', '.join(fixed_too)}, and {fix}"


_WEIGHTS_SECTION = "keras-weights-in-build"

KERAS2_ARGUMENT_ORDER = ErrorFamily(
    "arguments in tf.keras 2's order",
    messages=(Message(_NOT_A_SHAPE),),
    read=_read_keras2_order,
    section=_WEIGHTS_SECTION,
)
