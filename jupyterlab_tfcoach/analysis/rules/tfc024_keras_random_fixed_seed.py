"""TFC024: a ``keras.random`` draw with an integer seed, in code that runs once per step.

Keras 3 draws from ``keras.random`` statelessly when the seed is an integer: the same seed
gives the same numbers on every call (measured with Keras 3.15 and TensorFlow 2.21, eagerly
and in a ``tf.function``). In a layer's ``call``, a ``tf.function``, a function called in a
loop or mapped over a dataset, that is the same "random" noise, mask or shuffle every step.
``tf.random.normal(..., seed=1)`` is different: TensorFlow keeps a state per op, and
successive calls differ (measured the same way), so it is not flagged.

The integer can be written in the call, be a module-level name bound only to integers, the
integer default of a plain function's parameter that no call in the file passes, or a
``self.<attr>`` the class binds only to integers or to an ``__init__`` parameter that the
objects the file makes get an integer for (given, or the default), never anything else.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.positions import Range

CODE = "TFC024"
NAME = "keras-random-fixed-seed"
SEVERITY = Severity.WARNING
SECTION = "reproducibility"

DOCS = """
## What it does
Flags `keras.random.normal`, `uniform`, `truncated_normal`, `dropout`, `shuffle`,
`categorical`, `randint`, `gamma`, `binomial` or `beta` called with `seed=` an integer
(written there, a module-level name bound only to integers, an integer default no call
in the file overrides, or a `self.<attr>` that the objects the file makes hold an integer
in) inside code that runs once per step: a `call`,
`__call__`, `train_step` or `test_step` method, a `tf.function`, or a function the file
calls in a loop or passes to `.map(...)`. `seed=None` and `seed=` a
`keras.random.SeedGenerator` are not flagged, and neither is `tf.random.*` with an integer
seed (TensorFlow's op seeds give a new draw on each call).

In a class whose `__init__` the rule can extend, the fix creates
`self.seed_generator = keras.random.SeedGenerator(<seed>)` at the end of `__init__` and
passes it as the seed.

## Why is this bad?
In Keras 3 an integer seed makes the draw stateless: the same seed, the same numbers, on
every call. Noise added for augmentation is then the same pattern on every batch, dropout
drops the same units every step, a shuffle is the same permutation: the model sees no
randomness at all, and nothing raises. A `SeedGenerator` holds a state that advances on
each draw, so it is reproducible from its seed and still new at every call.

## Example
```python
class Jitter(keras.layers.Layer):
    def __init__(self, scale, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale

    def call(self, x):
        return x + keras.random.normal(keras.ops.shape(x), stddev=self.scale, seed=7)
```

## Use instead
```python
class Jitter(keras.layers.Layer):
    def __init__(self, scale, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale
        self.seed_generator = keras.random.SeedGenerator(7)

    def call(self, x):
        return x + keras.random.normal(
            keras.ops.shape(x), stddev=self.scale, seed=self.seed_generator
        )
```

## Course module
Module 8, *Reproducible runs: seeds and determinism* (`reproducibility`).
"""

_FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef)
_DRAWS = frozenset(
    {
        "normal",
        "uniform",
        "truncated_normal",
        "dropout",
        "shuffle",
        "categorical",
        "randint",
        "gamma",
        "binomial",
        "beta",
    }
)
_PER_STEP_METHODS = frozenset({"call", "__call__", "train_step", "test_step"})
_GENERATOR_ATTR = "seed_generator"


def _is_int(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _parameter_default(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> ast.AST:
    """The default of parameter ``name`` (None if it has none or is not a parameter)."""
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults))
    defaults.extend(arguments.defaults)
    for argument, default in zip(positional, defaults, strict=True):
        if argument.arg == name:
            return default  # type: ignore[return-value]
    for argument, kw_default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        if argument.arg == name:
            return kw_default  # type: ignore[return-value]
    return None  # type: ignore[return-value]


def _parameter_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    arguments = function.args
    return [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]


def _assigned_names(function: ast.AST) -> set[str]:
    return {
        node.id
        for node in ast.walk(function)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
    }


class _File:
    """What the rule reads of the whole file, computed once."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        # Module-level names and every value bound to them there.
        self.module_values: dict[str, list[ast.expr | None]] = {}
        for statement in tree.body:
            for node in ast.walk(statement):
                if isinstance(node, (*_FUNCTION_NODES, ast.ClassDef)):
                    continue
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        value = node.value if isinstance(target, ast.Name) else None
                        for name in ast.walk(target):
                            if isinstance(name, ast.Name):
                                self.module_values.setdefault(name.id, []).append(value)
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.With)):
                    for name in ast.walk(node):
                        if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store):
                            self.module_values.setdefault(name.id, []).append(None)
        # Names of functions called in a loop body or passed to `.map(...)`.
        self.per_step_names: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
                for statement in node.body:
                    for call in ast.walk(statement):
                        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
                            self.per_step_names.add(call.func.id)
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "map"
            ):
                for argument in node.args:
                    if isinstance(argument, ast.Name):
                        self.per_step_names.add(argument.id)
        self.calls_by_name: dict[str, list[ast.Call]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                self.calls_by_name.setdefault(node.func.id, []).append(node)

    def module_int(self, name: str) -> bool:
        values = self.module_values.get(name)
        return bool(values) and all(_is_int(value) for value in values)  # type: ignore[arg-type]

    def passed(
        self, name: str, arguments: ast.arguments, param: str, skip: int = 0
    ) -> list[ast.expr | None] | None:
        """What each call of ``name`` (taking ``arguments``) in the file passes for ``param`` (None:
        nothing, the default applies); ``skip`` leading parameters are not passed (``self``).
        None when a call passes ``*args`` or ``**kwargs``, which can hide it."""
        positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)][skip:]
        values: list[ast.expr | None] = []
        for call in self.calls_by_name.get(name, []):
            if any(isinstance(a, ast.Starred) for a in call.args) or any(
                k.arg is None for k in call.keywords
            ):
                return None
            value = next((k.value for k in call.keywords if k.arg == param), None)
            if value is None and param in positional:
                index = positional.index(param)
                value = call.args[index] if index < len(call.args) else None
            values.append(value)
        return values


def _methods(cls: ast.ClassDef) -> dict[str, ast.FunctionDef]:
    return {node.name: node for node in cls.body if isinstance(node, ast.FunctionDef)}


def _self_name(method: ast.FunctionDef) -> str | None:
    positional = [*method.args.posonlyargs, *method.args.args]
    return positional[0].arg if positional else None


def _attr_values(cls: ast.ClassDef, attr: str) -> list[tuple[ast.FunctionDef, ast.expr | None]]:
    """Every value the class's methods bind to ``self.<attr>`` (None: not a plain ``=``)."""
    found: list[tuple[ast.FunctionDef, ast.expr | None]] = []
    for method in _methods(cls).values():
        self_name = _self_name(method)
        for node in ast.walk(method):
            targets: list[ast.expr] = []
            value: ast.expr | None = None
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets, value = [node.target], None
            for target in targets:
                for part in ast.walk(target):
                    if (
                        isinstance(part, ast.Attribute)
                        and part.attr == attr
                        and isinstance(part.value, ast.Name)
                        and part.value.id == self_name
                        and isinstance(part.ctx, ast.Store)
                    ):
                        found.append((method, value if part is target else None))
    return found


def check(ctx: RuleContext) -> Iterator[Finding]:
    if "random" not in ctx.source.text:
        return
    tree = ctx.model.tree
    file = _File(tree)
    classes = {
        id(method): node
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        for method in node.body
        if isinstance(method, ast.FunctionDef)
    }
    for function in ast.walk(tree):
        if not isinstance(function, _FUNCTION_NODES):
            continue
        cls = classes.get(id(function))
        per_step = (
            (cls is not None and function.name in _PER_STEP_METHODS)
            or (cls is None and function.name in file.per_step_names)
            or _is_tf_function(ctx, function)
        )
        if not per_step:
            continue
        for node in _own_calls(function):
            seed = next((k.value for k in node.keywords if k.arg == "seed"), None)
            if seed is None or not _is_keras_draw(ctx, node):
                continue
            origin = _int_origin(file, function, cls, seed)
            if origin is None:
                continue
            yield _finding(ctx, node, seed, origin, function, cls)


def _own_calls(function: ast.AST) -> Iterator[ast.Call]:
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call):
            yield node
        if not isinstance(node, (*_FUNCTION_NODES, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def _is_tf_function(ctx: RuleContext, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if ctx.imports.resolve(target) == "tf.function":
            return True
    return False


def _is_keras_draw(ctx: RuleContext, call: ast.Call) -> bool:
    name = ctx.imports.resolve(call.func)
    if name is None or not name.startswith("tf.keras.random."):
        return False
    return name.rsplit(".", 1)[-1] in _DRAWS


def _made_with_int(file: _File, cls: ast.ClassDef, init: ast.FunctionDef, param: str) -> bool:
    """True when an object the file makes gets an integer for ``__init__``'s ``param``,
    and no object gets anything else but the default (a generator, a name, None)."""
    passed = file.passed(cls.name, init.args, param, skip=1)
    if passed is None:
        return False
    default_is_int = _is_int(_parameter_default(init, param))
    for value in passed:
        if value is not None and not _is_int(value):
            return False
    return any(_is_int(value) for value in passed) or (default_is_int and bool(passed))


def _int_origin(
    file: _File,
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    cls: ast.ClassDef | None,
    seed: ast.expr,
) -> str | None:
    """Where the integer seed comes from (for the message), or None if it may not be one."""
    if _is_int(seed):
        return "literal"
    if isinstance(seed, ast.Name):
        if seed.id in _parameter_names(function):
            # Only a plain function every call of which leaves the integer default alone:
            # a method's callers, or one passing the seed, may vary it.
            passed = None if cls is not None else file.passed(function.name, function.args, seed.id)
            if (
                not passed
                or any(value is not None for value in passed)
                or not _is_int(_parameter_default(function, seed.id))
            ):
                return None
            return "parameter"
        if seed.id in _assigned_names(function):
            return None
        return "module" if file.module_int(seed.id) else None
    if not (
        cls is not None
        and isinstance(seed, ast.Attribute)
        and isinstance(seed.value, ast.Name)
        and isinstance(function, ast.FunctionDef)
        and seed.value.id == _self_name(function)
    ):
        return None
    values = _attr_values(cls, seed.attr)
    if not values:
        return None
    init = _methods(cls).get("__init__")
    for method, value in values:
        if _is_int(value):
            continue
        if (
            isinstance(value, ast.Name)
            and method is init
            and value.id in _parameter_names(method)
            and value.id not in (_assigned_names(method) - {value.id})
            and _made_with_int(file, cls, method, value.id)
        ):
            continue
        return None
    return "attribute"


def _finding(
    ctx: RuleContext,
    call: ast.Call,
    seed: ast.expr,
    origin: str,
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    cls: ast.ClassDef | None,
) -> Finding:
    draw = ctx.text(call.func)
    seed_text = ctx.text(seed)
    generator = ctx.tf_ref("tf.keras.random.SeedGenerator") or "keras.random.SeedGenerator"
    where = {
        "literal": f"`seed={seed_text}`",
        "parameter": f"`seed={seed_text}` (an integer by default)",
        "module": f"`seed={seed_text}` (an integer)",
        "attribute": f"`seed={seed_text}` (an integer the object is made with)",
    }[origin]
    owner = f"{cls.name}." if cls is not None else ""
    once = "in `__init__`" if cls is not None else f"outside `{function.name}`"
    fix = None if origin == "parameter" else _generator_fix(ctx, seed, function, cls, generator)
    return ctx.finding(
        CODE,
        seed,
        f"`{draw}(...)` with {where} draws the same numbers on every call of "
        f"`{owner}{function.name}`: in Keras 3 an integer seed makes the draw stateless, so every "
        f"step gets the same noise. Create `{generator}({seed_text})` once ({once}) and pass "
        f"it as `seed=`: it advances on each draw",
        fix=fix,
    )


def _generator_fix(
    ctx: RuleContext,
    seed: ast.expr,
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    cls: ast.ClassDef | None,
    generator: str,
) -> Fix | None:
    """Make the generator at the end of ``__init__`` and draw from it; None when the class
    has no ``__init__`` to extend or already has an attribute of that name."""
    if cls is None or not isinstance(function, ast.FunctionDef):
        return None
    init = _methods(cls).get("__init__")
    if init is None or not init.body or init.body[0].lineno == init.lineno:
        return None  # no __init__, or a one-line one: no indented body to extend
    init_self, call_self = _self_name(init), _self_name(function)
    if init_self is None or call_self is None or _attr_values(cls, _GENERATOR_ATTR):
        return None
    if isinstance(seed, ast.Attribute):
        seed_source = f"{init_self}.{seed.attr}"
    elif isinstance(seed, ast.Name) and (
        seed.id in _parameter_names(init) or seed.id in _assigned_names(init)
    ):
        return None  # __init__ has a name of its own spelled like the module-level seed
    else:
        seed_source = ctx.text(seed)
    indent = " " * init.body[0].col_offset
    last_line = init.body[-1].end_lineno or init.body[-1].lineno
    end = len(ctx.source.line_text(last_line).rstrip("\r\n")) + 1
    made = f"\n{indent}{init_self}.{_GENERATOR_ATTR} = {generator}({seed_source})"
    return Fix(
        f"Draw from a `{generator}` made once in `__init__`",
        (
            ctx.replace(Range(last_line, end, last_line, end), made),
            ctx.replace(seed, f"{call_self}.{_GENERATOR_ATTR}"),
        ),
    )
