"""TFC012: an input_signature that fixes the batch size.

A fixed leading size in a signature is a mistake when the function serves batches, and
deliberate when it serves one example (a batch-1 export for TFLite or a mobile runtime),
and no batch at all when the function is mapped over a dataset's single examples.
The rule tells them apart by what the file shows about the function (``_Excuses``):
it is handed to an exporter (``tf.lite``, ``tf.saved_model``, ...), directly or as its
concrete function; its body squeezes the leading axis away (``tf.squeeze(x, 0)``,
``x[0]``); or, for a leading 1, its docstring or a comment at its definition says it
takes one example; or it is given to ``Dataset.map`` over elements not batched before
(``_elements`` reads the dataset's chain; not known is not batched). Any of these keeps
the spec silent; a spec shared by several functions
is reported when one of them has none. Exporters are found by name, their arguments
followed through names (``_Exported``): a name that matches only keeps a spec silent,
never reports one.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.arguments import keyword, positional
from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.model import Scope, Site
from jupyterlab_tfcoach.analysis.positions import SourceLines
from jupyterlab_tfcoach.analysis.values import FUNCTION, PY_NUMBER

CODE = "TFC012"
NAME = "fixed-batch-in-signature"
SEVERITY = Severity.HINT
SECTION = "input-signature"

DOCS = """
## What it does
Flags a `tf.TensorSpec` in a `tf.function` `input_signature` whose leading dimension is a
number instead of `None`, when the spec has rank 2 or more. The signature may be written in
place or bound to a name first (`SIG = [tf.TensorSpec(...)]`, then `input_signature=SIG`); the
finding is on the spec itself, where the fix goes.

A rank-1 spec (`tf.TensorSpec([2], tf.int32)`, `tf.TensorSpec((3,))`) is not reported: it is a
single vector whose length is part of its meaning (an image size, RGB means), not a batch of
scalars; only specs of rank 2 or more have a batch axis to free. Nor is a spec whose leading
size is a feature size of another input with a free batch (`TensorSpec([num_tags, num_tags])`
beside `TensorSpec([None, None, num_tags])`): it describes a parameter, such as a transition
matrix, not a batch.

A fixed size is deliberate for a function that serves one example or is exported with a
static shape, so the spec is not reported when the file shows either:

- the function is exported: it, or its concrete function (`f.get_concrete_function()`,
  also through a name), is passed to `tf.lite.TFLiteConverter.from_concrete_functions`,
  `tf.saved_model.save(..., signatures=...)` or another `tf.lite` / `tf.saved_model`
  call, `convert_variables_to_constants_v2`, Keras' `ExportArchive.add_endpoint`, or
  `tf2onnx` / `coremltools` / `tensorflowjs`; or an instance of the class whose method it
  is goes to `tf.saved_model.save` or a converter;
- its body squeezes the leading axis away: `tf.squeeze(x, 0)` (or `axis=0`, `[0]`; plain
  `tf.squeeze(x)` when the size is 1) or indexes it, `x[0]`, on the spec's parameter;
- for a leading size of 1, its docstring or a comment at its definition (the comment
  lines right above the decorator, the header, the `tf.function(...)` call, the spec's
  own line) says so: "batch of 1", "batch size 1", "batch-1", "single example" (or image,
  sample, input, ...), "one example at a time".

A function whose signature describes one element of a `tf.data` pipeline has no batch
axis either: its leading size is the example's own (an image's height, a clip's length).
So the spec is not reported when the function is handed to `Dataset.map` (or `filter`,
`flat_map`), itself or called in the function given there (`ds.map(lambda x, y:
(augment(x), y))`), and the dataset is not batched before it: its elements come from
`from_tensor_slices`, `range`, a file dataset, `unbatch()`, or a dataset whose origin the
file does not show. Mapped after `.batch(n)`, its elements are batches whose last one may
be smaller, and the spec is reported; after `.batch(n, drop_remainder=True)` every batch
has `n` rows, and it is not.

A signature shared by several functions is reported when one of them shows none of these.

## Why is this bad?
The leading dimension is usually the batch. A fixed number means the function only accepts
exactly that batch size: the last, smaller batch of an epoch, or a single example at inference
time, is rejected with a signature mismatch error. `None` accepts any size with one trace.

## Example
```python
@tf.function(input_signature=[tf.TensorSpec(shape=[32, 784], dtype=tf.float32)])
def predict(x):
    return model(x)
```

## Use instead
```python
@tf.function(input_signature=[tf.TensorSpec(shape=[None, 784], dtype=tf.float32)])
def predict(x):
    return model(x)
```

With Keras 3, `keras.Input(shape=(784,))` leaves the batch free the same way. A batch-1
export signature says what it is for, and stays silent:

```python
@tf.function(input_signature=[tf.TensorSpec([1, 784], tf.float32)])
def serve(x):
    return model(x)

converter = tf.lite.TFLiteConverter.from_concrete_functions(
    [serve.get_concrete_function()], model
)
```

A per-example function mapped before `.batch` describes one image, and stays silent
(Keras 3: `keras.utils.image_dataset_from_directory(..., batch_size=None)` gives such
single images too):

```python
@tf.function(input_signature=[tf.TensorSpec([28, 28], tf.uint8)])
def to_float(image):
    return tf.cast(image, tf.float32) / 255.0

digits = tf.data.Dataset.from_tensor_slices(images).map(to_float).batch(64)
```

## Course module
Module 2, *Declaring the inputs: input_signature* (`input-signature`).
"""


def _static_int(ctx: RuleContext, node: ast.expr, site: Site) -> int | None:
    """An int literal, or a name bound to one (``BATCH = 32``)."""
    if isinstance(node, ast.Constant):
        value = node.value
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if isinstance(node, ast.Name):
        bound = ctx.value(node, site)
        if bound.kind == PY_NUMBER and isinstance(bound.number, int):
            return bound.number
    return None


_MAX_NAME_HOPS = 4  # SIG = BASE_SIG = [...]: how many names to follow to the specs


def _specs(
    ctx: RuleContext, node: ast.AST, site: Site, hops: int = 0
) -> Iterator[tuple[ast.Call, Site]]:
    """The ``tf.TensorSpec(...)`` calls an input_signature is built from, each with the
    site (scope and path) its names are read in: written in place, inside nested lists,
    tuples and dicts, or behind names bound to them (``SIG = [...]``)."""
    if isinstance(node, ast.Call):
        if ctx.imports.resolve(node.func) == "tf.TensorSpec":
            yield node, site
            return
        for argument in (*node.args, *(item.value for item in node.keywords)):
            yield from _specs(ctx, argument, site, hops)
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        for element in node.elts:
            yield from _specs(ctx, element, site, hops)
    elif isinstance(node, ast.Dict):
        for value in node.values:
            yield from _specs(ctx, value, site, hops)
    elif isinstance(node, ast.Starred):
        yield from _specs(ctx, node.value, site, hops)
    elif isinstance(node, ast.Name) and hops < _MAX_NAME_HOPS:
        resolution = ctx.bindings.names.resolve(
            site.scope, node.id, (node.lineno, node.col_offset), site.path
        )
        if resolution is None:
            return
        for binding in resolution.bindings:
            if binding.kind == "assign" and binding.value is not None:
                bound_site = Site(binding.value, binding.value_scope, binding.path)
                yield from _specs(ctx, binding.value, bound_site, hops + 1)


def _feature_sizes(specs: list[tuple[ast.Call, Site]]) -> set[str]:
    """The sizes after the batch axis of the specs whose batch is free (``None``), as
    source-independent dumps (``num_tags`` in ``TensorSpec([None, None, num_tags])``)."""
    sizes: set[str] = set()
    for spec, _ in specs:
        shape = positional(spec, 0) or keyword(spec, "shape")
        if (
            isinstance(shape, (ast.List, ast.Tuple))
            and len(shape.elts) >= 2
            and isinstance(shape.elts[0], ast.Constant)
            and shape.elts[0].value is None
        ):
            sizes.update(
                ast.dump(size)
                for size in shape.elts[1:]
                if not (isinstance(size, ast.Constant) and size.value is None)
            )
    return sizes


# Calls that export or convert what they get, by their canonical TensorFlow name.
_EXPORTING_PREFIXES = (
    "tf.lite.",
    "tf.compat.v1.lite.",
    "tf.saved_model.",
    "tf.python.framework.convert_to_constants.",
    "tf.keras.export.",
)
# Converters outside TensorFlow, by the module their first name is imported from.
_EXPORTING_MODULES = frozenset({"coremltools", "tensorflowjs", "tf2onnx"})
# The call names exporters are called by (``tf.saved_model.save``, ``from_concrete_functions``
# ...): only calls by these names are looked at.
_EXPORT_CALL_NAMES = (
    "add_endpoint",
    "convert",
    "convert_variables_to_constants_v2",
    "from_concrete_functions",
    "from_function",
    "from_keras_model",
    "save",
    "save_keras_model",
)
_MAX_EXPORT_HOPS = 3  # concrete = f.get_concrete_function(); sigs = {"x": concrete}; ...
# What a docstring or comment says when a function takes one example at a time.
_ONE_EXAMPLE = re.compile(
    r"\bbatch(?:[ _-]?size)?(?:\s*(?:of|=|:|is)\s*|[ _-])(?:1|one)\b"
    r"|\bsingle[ -](?:example|image|sample|input|instance|item|record|observation|frame"
    r"|sentence|sequence|row)s?\b"
    r"|\bone (?:example|image|sample|input|instance|item|record|observation|frame|sentence"
    r"|sequence|row) at a time\b",
    re.IGNORECASE,
)
_COMMENT_LINES_ABOVE = 3  # a comment block right above the decorator, at most this long


def _imported_root(ctx: RuleContext, name: ast.Name, site: Site) -> str | None:
    """The top-level module a name is imported from (``ct`` -> ``coremltools``)."""
    resolution = ctx.bindings.names.resolve(
        site.scope, name.id, (name.lineno, name.col_offset), site.path
    )
    if resolution is None or not resolution.bindings:
        return None
    roots: set[str] = set()
    for binding in resolution.bindings:
        statement = binding.node
        if binding.kind != "import" or not isinstance(statement, (ast.Import, ast.ImportFrom)):
            return None
        if isinstance(statement, ast.ImportFrom):
            if statement.module:
                roots.add(statement.module.split(".", 1)[0])
            continue
        for alias in statement.names:
            if (alias.asname or alias.name.split(".", 1)[0]) == name.id:
                roots.add(alias.name.split(".", 1)[0])
    return roots.pop() if len(roots) == 1 else None


def _exports(ctx: RuleContext, site: Site) -> bool:
    """Whether a call exports or converts what it is given."""
    func = site.node.func  # type: ignore[attr-defined]
    canonical = ctx.imports.resolve(func)
    if canonical is not None:
        return canonical.startswith(_EXPORTING_PREFIXES)
    if isinstance(func, ast.Attribute) and func.attr == "add_endpoint":
        return True  # Keras' ``ExportArchive``
    root = func
    while isinstance(root, ast.Attribute):
        root = root.value
    return isinstance(root, ast.Name) and _imported_root(ctx, root, site) in _EXPORTING_MODULES


class _Exported:
    """What the file hands to exporters: the names and attribute names in their arguments
    (followed through names bound to such expressions, ``concrete =
    serve.get_concrete_function()``), the classes of the instances among them, and the
    nodes of the arguments themselves."""

    def __init__(self, ctx: RuleContext) -> None:
        self.ctx = ctx
        self.names: set[str] = set()
        self.classes: set[Scope] = set()
        self.nodes: set[int] = set()
        self._followed: set[int] = set()  # bindings already followed
        for site in (site for name in _EXPORT_CALL_NAMES for site in ctx.calls_named(name)):
            if _exports(ctx, site):
                call = site.node
                assert isinstance(call, ast.Call)
                for argument in (*call.args, *(item.value for item in call.keywords)):
                    self._collect(argument, site, 0)

    def _collect(self, expression: ast.expr, site: Site, hops: int) -> None:
        names = self.ctx.bindings.names
        for node in ast.walk(expression):
            self.nodes.add(id(node))
            if isinstance(node, ast.Attribute):
                self.names.add(node.attr)
            elif isinstance(node, ast.Name):
                self.names.add(node.id)
                class_scope = names.instance_class(site.scope, node, site.path)
                if class_scope is not None:
                    self.classes.add(class_scope)
                if hops >= _MAX_EXPORT_HOPS:
                    continue
                resolution = names.resolve(
                    site.scope, node.id, (node.lineno, node.col_offset), site.path
                )
                for binding in resolution.bindings if resolution is not None else ():
                    if id(binding) in self._followed:
                        continue
                    self._followed.add(id(binding))
                    if binding.kind in ("assign", "unpack") and binding.value is not None:
                        bound_site = Site(binding.value, binding.value_scope, binding.path)
                        self._collect(binding.value, bound_site, hops + 1)


class _Excuses:
    """Why a fixed leading size is deliberate for one tf.function (see the module
    docstring): computed per ``tf.function`` call, the exporters' arguments once a file."""

    def __init__(self, ctx: RuleContext) -> None:
        self.ctx = ctx
        self._exported: _Exported | None = None
        self._defs: dict[int, ast.AST] | None = None
        self._defined_in: dict[int, Scope] | None = None
        self._mappings: list[_Mapping] | None = None

    def _wrapped_def(self, call: ast.Call) -> ast.AST | None:
        """The ``def`` a ``tf.function(...)`` call (a decorator, or ``tf.function(f,
        ...)``) makes a tf.function of."""
        if self._defs is None:
            self._defs = {
                id(value.creator): node
                for node, value in self.ctx.bindings.traced.tf_function_defs().items()
                if value.creator is not None
            }
        return self._defs.get(id(call))

    def _assigned_names(self, call: ast.Call) -> set[str]:
        """``serve = tf.function(f, ...)`` / ``self.serve = tf.function(...)``: ``serve``.
        (Looked for only for such calls, not for decorators: few files have any.)"""
        model = self.ctx.model
        names = {binding.name for binding in model.call_assignments if binding.value is call}
        for scope in model.scopes:
            if scope.kind == "class":
                for attribute, bindings in scope.attr_bindings.items():
                    if any(binding.value is call for binding in bindings):
                        names.add(attribute)
        return names

    def _defining_scope(self, definition: ast.AST) -> Scope | None:
        """The scope a ``def`` statement is in (a class for a method)."""
        if self._defined_in is None:
            self._defined_in = {id(site.node): site.scope for site in self.ctx.model.defs}
        return self._defined_in.get(id(definition))

    def excused(self, call: ast.Call, spec: ast.Call, position: int | None, size: int) -> bool:
        definition = self._wrapped_def(call)
        if self._is_exported(call, definition):
            return True
        if self._mapped_per_element(call, definition):
            return True
        if definition is None:
            return False
        if size == 1 and self._says_one_example(call, spec, definition):
            return True
        parameter = self._parameter(definition, position)
        return parameter is not None and _squeezes_leading_axis(
            self.ctx, definition, parameter, size
        )

    def _is_exported(self, call: ast.Call, definition: ast.AST | None) -> bool:
        if self._exported is None:
            self._exported = _Exported(self.ctx)
        exported = self._exported
        if not exported.nodes:
            return False  # nothing exported in this file
        if id(call) in exported.nodes:
            return True  # ``from_concrete_functions([tf.function(f, ...).get_concrete...])``
        if self._handles(call, definition) & exported.names:
            return True
        scope = self._defining_scope(definition) if definition is not None else None
        return scope is not None and scope in exported.classes

    def _handles(self, call: ast.Call, definition: ast.AST | None) -> set[str]:
        """The names the tf.function is called or passed by: the decorated ``def``'s name,
        or the names ``tf.function(f, ...)`` is assigned to."""
        decorates = definition is not None and call in getattr(definition, "decorator_list", ())
        handles = set() if decorates else self._assigned_names(call)
        if definition is not None:
            handles.add(getattr(definition, "name", ""))
        handles.discard("")
        return handles

    def _mapped_per_element(self, call: ast.Call, definition: ast.AST | None) -> bool:
        """Whether the tf.function is handed to ``Dataset.map`` (or ``filter`` /
        ``flat_map``), itself or called in the function given there, and every such
        dataset's elements are single examples (or batches of one fixed size, or not
        known): its signature then describes one element, whose leading axis is no batch.
        A map over batches of any size (``.batch(32)`` before it) keeps the spec
        reported."""
        if self._mappings is None:
            self._mappings = [_Mapping(self.ctx, site) for site in self._mapping_sites()]
        if not self._mappings:
            return False
        handles = self._handles(call, definition)
        uses = [m for m in self._mappings if m.mapped is call or m.names & handles]
        return bool(uses) and all(m.elements() != _BATCHES for m in uses)

    def _mapping_sites(self) -> list[Site]:
        """The ``x.map(f)`` / ``filter`` / ``flat_map`` calls of the file, with a function."""
        found = []
        for site in self.ctx.calls_named(*_PER_ELEMENT_METHODS):
            mapping = site.node
            assert isinstance(mapping, ast.Call)
            if isinstance(mapping.func, ast.Attribute) and _mapped(mapping) is not None:
                found.append(site)
        return found

    def _parameter(self, definition: ast.AST, position: int | None) -> str | None:
        """The parameter the spec at ``position`` of the signature describes."""
        if position is None or not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        parameters = [*definition.args.posonlyargs, *definition.args.args]
        scope = self._defining_scope(definition)
        if scope is not None and scope.kind == "class":
            is_static = any(
                isinstance(d, ast.Name) and d.id == "staticmethod"
                for d in definition.decorator_list
            )
            if not is_static:
                parameters = parameters[1:]  # ``self``: the signature describes the others
        return parameters[position].arg if position < len(parameters) else None

    def _says_one_example(self, call: ast.Call, spec: ast.Call, definition: ast.AST) -> bool:
        docstring = (
            ast.get_docstring(definition)
            if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef))
            else None
        )
        if docstring and _ONE_EXAMPLE.search(docstring):
            return True
        lines = self.ctx.source
        decorators = getattr(definition, "decorator_list", [])
        body = getattr(definition, "body", [])
        header_start = min([definition.lineno, *(d.lineno for d in decorators)])  # type: ignore[attr-defined]
        header_end = body[0].lineno if body else definition.lineno  # type: ignore[attr-defined]
        numbers = {
            *_with_comments_above(lines, header_start, header_end),
            *_with_comments_above(lines, call.lineno, call.end_lineno or call.lineno),
            *range(spec.lineno, (spec.end_lineno or spec.lineno) + 1),
        }
        return any(_ONE_EXAMPLE.search(_comment(lines.line_text(n))) for n in numbers)


def _mapped(mapping: ast.Call) -> ast.expr | None:
    """The function ``ds.map(...)`` (``filter``, ``flat_map``) is given."""
    return positional(mapping, 0) or keyword(mapping, "map_func") or keyword(mapping, "predicate")


class _Mapping:
    """One ``ds.map(f)`` (or ``filter`` / ``flat_map``) call: the function it gets, the
    names that function is or calls (``preprocess`` in ``ds.map(preprocess)``,
    ``ds.map(lambda x, y: (preprocess(x), y))``, or in the body of a ``def prepare`` of the
    file given as ``ds.map(prepare)``), and, asked for, what the dataset's elements are."""

    def __init__(self, ctx: RuleContext, site: Site) -> None:
        self.ctx = ctx
        self.site = site
        mapping = site.node
        assert isinstance(mapping, ast.Call) and isinstance(mapping.func, ast.Attribute)
        self.dataset = mapping.func.value
        self.mapped = _mapped(mapping)
        self._elements: str | None = None
        names: set[str] = set()
        body: ast.AST | None = self.mapped if isinstance(self.mapped, ast.Lambda) else None
        if isinstance(self.mapped, ast.Name):
            names.add(self.mapped.id)
            value = ctx.value(self.mapped, site)
            if value.kind == FUNCTION and value.node is not None:
                body = value.node
        elif isinstance(self.mapped, ast.Attribute):
            names.add(self.mapped.attr)  # ``ds.map(self._preprocess)``: a method by name
        if body is not None:
            names.update(
                node.func.id
                for node in ast.walk(body)
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            )
        self.names = frozenset(names)

    def elements(self) -> str:
        if self._elements is None:
            self._elements = _elements(self.ctx, self.dataset, self.site, 0)
        return self._elements


# Dataset methods whose function gets the dataset's elements, one at a time.
_PER_ELEMENT_METHODS = ("map", "filter", "flat_map")
# What a dataset's elements are (``_elements``).
_BATCHES = "batches"  # batches of any size: the last one may be smaller
_FIXED_BATCHES = "fixed batches"  # ``batch(n, drop_remainder=True)``: all of size n
_EXAMPLES = "examples"  # single examples
_UNKNOWN = "unknown"
_BATCHING_METHODS = frozenset({"batch", "padded_batch", "ragged_batch"})
_MAX_DATASET_HOPS = 4  # ds = raw.map(...); raw = tf.data...: how many names to follow


def _elements(ctx: RuleContext, node: ast.expr, site: Site, hops: int) -> str:
    """What the elements of the dataset ``node`` are, from its chain of methods back to
    where it is made: the last ``batch`` / ``unbatch`` before the end decides; a ``tf.data``
    source (``from_tensor_slices``, ``range``, a file dataset) gives single examples,
    ``from_tensors`` one whole value (not known), a Keras ``*_dataset_from_directory``
    batches (unless ``batch_size=None``)."""
    while isinstance(node, ast.Call):
        func = node.func
        canonical = ctx.imports.resolve(func)
        if canonical is not None:
            if canonical.startswith("tf.keras.utils."):
                batch_size = keyword(node, "batch_size")
                unbatched = isinstance(batch_size, ast.Constant) and batch_size.value is None
                return _EXAMPLES if unbatched else _BATCHES
            if canonical.startswith("tf.data.") and not canonical.endswith("from_tensors"):
                return _EXAMPLES
            return _UNKNOWN
        if not isinstance(func, ast.Attribute):
            return _UNKNOWN
        if func.attr in _BATCHING_METHODS:
            drop = keyword(node, "drop_remainder") or positional(node, 1)
            fixed = isinstance(drop, ast.Constant) and drop.value is True
            return _FIXED_BATCHES if fixed else _BATCHES
        if func.attr == "unbatch":
            return _EXAMPLES
        node = func.value  # ``shuffle``, ``map``, ``cache``, ``prefetch``: elements unchanged
    if not isinstance(node, ast.Name) or hops >= _MAX_DATASET_HOPS:
        return _UNKNOWN
    resolution = ctx.bindings.names.resolve(
        site.scope, node.id, (node.lineno, node.col_offset), site.path
    )
    bindings = resolution.bindings if resolution is not None else ()
    found = {
        _elements(ctx, b.value, Site(b.value, b.value_scope, b.path), hops + 1)
        if b.kind == "assign" and b.value is not None
        else _UNKNOWN
        for b in bindings
    }
    if _BATCHES in found:
        return _BATCHES  # batched on some path: a batch-sized signature is wrong there
    return found.pop() if len(found) == 1 else _UNKNOWN


def _with_comments_above(lines: SourceLines, first: int, last: int) -> range:
    """Lines ``first`` to ``last`` and the comment lines right above them (at most
    ``_COMMENT_LINES_ABOVE``)."""
    above = first - 1
    while above >= 1 and first - above <= _COMMENT_LINES_ABOVE:
        if not lines.line_text(above).lstrip().startswith("#"):
            break
        above -= 1
    return range(above + 1, last + 1)


def _comment(line: str) -> str:
    """The text after the line's ``#`` (a ``#`` in a string may start it too: the text
    then only keeps a spec silent that a word of it describes)."""
    start = line.find("#")
    return line[start + 1 :] if start >= 0 else ""


def _squeezes_leading_axis(
    ctx: RuleContext, definition: ast.AST, parameter: str, size: int
) -> bool:
    """Whether the function's body drops the leading axis of ``parameter``:
    ``tf.squeeze(x, 0)`` / ``axis=0`` / ``[0]`` (plain ``tf.squeeze(x)`` for a size of 1),
    or ``x[0]`` / ``x[0, ...]``."""
    lines = ctx.source.lines
    first: int = definition.lineno  # type: ignore[attr-defined]
    last: int = definition.end_lineno or first  # type: ignore[attr-defined]
    text = "\n".join(lines[first - 1 : last])
    if "squeeze" not in text and f"{parameter}[" not in text:
        return False  # a cheap test first: most bodies do neither
    for node in ast.walk(definition):
        if isinstance(node, ast.Subscript):
            if isinstance(node.value, ast.Name) and node.value.id == parameter:
                index = (
                    node.slice.elts[0]
                    if isinstance(node.slice, ast.Tuple) and node.slice.elts
                    else node.slice
                )
                if _is_zero(index):
                    return True
        elif isinstance(node, ast.Call) and node.args:
            squeezed = node.args[0]
            if not (isinstance(squeezed, ast.Name) and squeezed.id == parameter):
                continue
            if ctx.imports.resolve(node.func) not in ("tf.squeeze", "tf.keras.ops.squeeze"):
                continue
            axis = positional(node, 1) or keyword(node, "axis")
            if axis is None:
                return size == 1
            axes = axis.elts if isinstance(axis, (ast.List, ast.Tuple)) else [axis]
            if any(_is_zero(a) for a in axes):
                return True
    return False


def _is_zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0 and not isinstance(node.value, bool)


def _signature_positions(ctx: RuleContext, signature: ast.AST, site: Site) -> dict[int, int]:
    """``id(spec)`` -> its argument's position, for the specs that are the signature's
    top-level elements (written in place or named), in a list or tuple written in place
    or bound to a name."""
    elements: list[ast.expr] = []
    element_site = site
    if isinstance(signature, (ast.List, ast.Tuple)):
        elements = list(signature.elts)
    elif isinstance(signature, ast.Name):
        resolution = ctx.bindings.names.resolve(
            site.scope, signature.id, (signature.lineno, signature.col_offset), site.path
        )
        bindings = resolution.bindings if resolution is not None else ()
        if len(bindings) == 1 and isinstance(bindings[0].value, (ast.List, ast.Tuple)):
            binding = bindings[0]
            elements = list(binding.value.elts)  # type: ignore[union-attr]
            element_site = Site(binding.value, binding.value_scope, binding.path)  # type: ignore[arg-type]
    positions: dict[int, int] = {}
    for index, element in enumerate(elements):
        if isinstance(element, ast.Starred):
            break  # positions after ``*rest`` are not known
        found = list(_specs(ctx, element, element_site))
        if len(found) == 1:
            positions[id(found[0][0])] = index
    return positions


def check(ctx: RuleContext) -> Iterator[Finding]:
    # A named signature shared by several functions: one finding, unless every function
    # using it has an excuse. ``id(leading)`` -> (leading node, size, excused so far).
    candidates: dict[int, tuple[ast.expr, int, bool]] = {}
    excuses: _Excuses | None = None
    for site in ctx.calls_to("tf.function"):
        call = site.node
        assert isinstance(call, ast.Call)
        signature = keyword(call, "input_signature") or positional(call, 1)
        if signature is None:
            continue
        specs = list(_specs(ctx, signature, site))
        feature_sizes = _feature_sizes(specs)
        positions: dict[int, int] | None = None
        for spec, spec_site in specs:
            shape = positional(spec, 0) or keyword(spec, "shape")
            # Rank 1: one vector whose length means something (see DOCS), no batch axis.
            if not isinstance(shape, (ast.List, ast.Tuple)) or len(shape.elts) < 2:
                continue
            leading = shape.elts[0]
            if ast.dump(leading) in feature_sizes:
                # Sized like another input's features (a CRF's ``[num_tags, num_tags]``
                # beside ``[None, None, num_tags]``): a parameter, not a batch.
                continue
            size = _static_int(ctx, leading, spec_site)
            if size is None:
                continue
            if excuses is None:
                excuses = _Excuses(ctx)
            if positions is None:
                positions = _signature_positions(ctx, signature, site)
            excused = excuses.excused(call, spec, positions.get(id(spec)), size)
            key = id(leading)
            if key in candidates:
                known = candidates[key]
                candidates[key] = (known[0], known[1], known[2] and excused)
            else:
                candidates[key] = (leading, size, excused)
    for leading, size, excused in candidates.values():
        if excused:
            continue
        shown = str(size) if isinstance(leading, ast.Constant) else f"`{leading.id}` = {size}"  # type: ignore[attr-defined]
        yield ctx.finding(
            CODE,
            leading,
            f"input_signature fixes the leading (batch) dimension to {shown}; "
            "use None so any batch size fits one trace",
            Fix("Use `None` for the batch dimension", (ctx.replace(leading, "None"),)),
        )
