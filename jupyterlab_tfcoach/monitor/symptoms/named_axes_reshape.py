"""A reshape whose target, written in the input's own axis names, moves values across axes.

``b, h, w, c = x.shape`` names the axes of ``x``; ``tf.reshape(x, (b, c, h * w))`` then
asks for the channels before the positions, and ``tf.reshape(x, (b, h * r, w * r, c //
(r * r)))`` for channel blocks moved into the height and width (a hand-made pixel
shuffle). A reshape keeps the values in memory order and only cuts them again, so an
axis of its result holds the values that follow each other in that order: it can merge
neighbouring axes or split one, never move a piece of one axis next to another. The
shapes come out as written, nothing raises, and the values sit where the names say they
do not (a Gram matrix of mixed channels, an upsampled image made of shifted strips).

Read from the source alone, in each body (the cell's and each function's): an assignment
unpacking a tensor's axes into names (``x.shape``, ``x.shape.as_list()``,
``tf.shape(x)``, ``tf.unstack(tf.shape(x))``, ``np.shape(x)``, ``keras.ops.shape(x)``),
then, before ``x`` is bound again, ``<module>.reshape(x, (...))`` whose sizes are products
and quotients of those names, other names and whole numbers, their product the input's
axes. A factor that is not an axis (``r``) comes from the one axis the target divides by
it (``c // (r * r)``). The target's axes, read in order, must draw from the input's axes
in their order; when they do not, the reshape is told. The fix keeps the learner's target
and moves the pieces first: the axes split where a factor is taken from them
(``tf.reshape(x, (b, h, w, r, r, c // (r * r)))``), a transpose into the target's order,
then the reshape as written. Parsed once per cell source (the reshape checker's cache).
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass

from jupyterlab_tfcoach.monitor.syntax import parsed_source, source_segment, walk_nodes

_SHAPE_CALLS = frozenset({"shape", "get_shape"})
_MAX_AXES = 8
_MAX_ALIAS_DEPTH = 4


@dataclass(frozen=True)
class NamedAxesReshape:
    """A reshape of a tensor into sizes written in its own axis names, out of their order."""

    statement: str
    fixed: str  # the statement with the reshape's input split and transposed first
    tensor: str
    axes: tuple[str, ...]
    target: str
    drawn: tuple[str, ...]  # what each target axis draws from, in the target's order
    line: int
    function: str | None
    split: bool


def _unpacked_tensor(value: ast.expr) -> str | None:
    """The name whose shape ``value`` reads, for the forms that list every axis."""
    node = value
    if isinstance(node, ast.Call) and not node.args and isinstance(node.func, ast.Attribute):
        if node.func.attr == "as_list":
            node = node.func.value
        elif node.func.attr == "get_shape" and isinstance(node.func.value, ast.Name):
            return node.func.value.id
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return node.value.id if isinstance(node.value, ast.Name) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "unstack" and len(node.args) == 1 and not node.keywords:
            return _unpacked_tensor(node.args[0])
        if node.func.attr in _SHAPE_CALLS and len(node.args) == 1:
            argument = node.args[0]
            return argument.id if isinstance(argument, ast.Name) else None
    return None


Factors = list[tuple[str, int]]


def _factors(node: ast.expr, aliases: dict[str, ast.expr], depth: int = 0) -> Factors | None:
    """``node`` as a product of atoms with exponents, left to right; None for anything
    that is not a product or quotient of names and whole numbers."""
    if isinstance(node, ast.Name):
        alias = aliases.get(node.id)
        if alias is not None and depth < _MAX_ALIAS_DEPTH:
            return _factors(alias, aliases, depth + 1)
        return [(node.id, 1)]
    if isinstance(node, ast.Constant) and type(node.value) is int and node.value > 0:
        return [] if node.value == 1 else [(str(node.value), 1)]
    if isinstance(node, ast.BinOp):
        left = _factors(node.left, aliases, depth)
        if isinstance(node.op, ast.Pow):
            power = node.right
            if left is None or not (
                isinstance(power, ast.Constant) and type(power.value) is int and power.value > 0
            ):
                return None
            return [(atom, exponent * power.value) for atom, exponent in left]
        right = _factors(node.right, aliases, depth)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.Mult):
            return left + right
        if isinstance(node.op, ast.FloorDiv | ast.Div):
            return left + [(atom, -exponent) for atom, exponent in right]
    return None


def _net(factors: Factors) -> dict[str, int]:
    net: dict[str, int] = {}
    for atom, exponent in factors:
        net[atom] = net.get(atom, 0) + exponent
    return {atom: exponent for atom, exponent in net.items() if exponent}


def _read(
    axes: tuple[str, ...], elements: list[ast.expr], aliases: dict[str, ast.expr], source: str
) -> tuple[list[list[tuple[int, int]]], list[list[str]]] | None:
    """For each target axis, its pieces as (input axis, piece number within that axis) in
    written order; and for each input axis, its pieces' texts in memory order (one piece
    when the axis is not split). None when the target is not a regrouping of the axes."""
    nets: list[dict[str, int]] = []
    ordered: list[Factors] = []
    for element in elements:
        factors = _factors(element, aliases)
        if factors is None:
            return None
        nets.append(_net(factors))
        ordered.append([(atom, e) for atom, e in factors if _net(factors).get(atom, 0) > 0])
    total: dict[str, int] = {}
    for net in nets:
        for atom, exponent in net.items():
            total[atom] = total.get(atom, 0) + exponent
    if {a: e for a, e in total.items() if e} != {axis: 1 for axis in axes}:
        return None
    donors: dict[str, int] = {}  # a factor that is not an axis -> the axis it comes from
    for net in nets:
        negative = [atom for atom, exponent in net.items() if exponent < 0]
        if not negative:
            continue
        own = [atom for atom, exponent in net.items() if exponent > 0]
        if len(own) != 1 or own[0] not in axes or net[own[0]] != 1:
            return None
        for atom in negative:
            if atom in axes or atom in donors:
                return None
            donors[atom] = axes.index(own[0])
    # Pieces of each input axis, keyed by (target axis, position in it), memory order.
    taken: dict[int, list[tuple[tuple[int, int], str]]] = {i: [] for i in range(len(axes))}
    drawn: list[list[tuple[tuple[int, int], int]]] = []
    for index, (net, factors) in enumerate(zip(nets, ordered, strict=True)):
        pieces: list[tuple[tuple[int, int], int]] = []
        position = 0
        for atom, exponent in factors:
            if atom in axes:
                if exponent != 1:
                    return None
                axis = axes.index(atom)
                key = (index, position)
                divided = any(e < 0 for e in net.values())
                text = source_segment(source, elements[index]) if divided else atom
                if not text:
                    return None
                taken[axis].append((key, text))
                pieces.append((key, axis))
                position += 1
            elif atom in donors:
                for _ in range(exponent):
                    key = (index, position)
                    taken[donors[atom]].append((key, atom))
                    pieces.append((key, donors[atom]))
                    position += 1
            else:
                return None
        drawn.append(pieces)
    texts: list[list[str]] = []
    numbers: dict[tuple[int, int], tuple[int, int]] = {}
    for axis in range(len(axes)):
        found = sorted(taken[axis])
        texts.append([text for _, text in found])
        for number, (key, _) in enumerate(found):
            numbers[key] = (axis, number)
    return [[numbers[key] for key, _ in pieces] for pieces in drawn], texts


def _in_order(pieces: list[list[tuple[int, int]]]) -> bool:
    """Each target axis draws from the input's axes no earlier than the one before."""
    sequence = [axis for element in pieces for axis, _ in sorted(element)]
    return all(a <= b for a, b in itertools.pairwise(sequence))


def _described(axes: tuple[str, ...], element: list[tuple[int, int]], split: set[int]) -> str:
    parts = []
    for axis, _ in element:
        name = axes[axis]
        parts.append(f"part of {name}" if axis in split else name)
    return " and ".join(parts) if parts else "1"


def named_axes_reshapes(source: str) -> list[NamedAxesReshape]:
    tree = parsed_source(source)
    if tree is None:
        return []
    bodies: list[tuple[str | None, list[ast.stmt]]] = [(None, tree.body)]
    bodies += [
        (node.name, node.body)
        for node in walk_nodes(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    found: list[NamedAxesReshape] = []
    for function, body in bodies:
        named: dict[str, tuple[str, ...]] = {}
        aliases: dict[str, ast.expr] = {}
        for statement in body:
            for call in _reshapes(statement):
                told = _told(call, statement, named, aliases, source, function)
                if told is not None:
                    found.append(told)
            _bind(statement, named, aliases)
    return found


def _reshapes(statement: ast.stmt) -> list[ast.Call]:
    if not isinstance(statement, ast.Assign | ast.Return | ast.Expr | ast.AnnAssign):
        return []
    value = statement.value
    if value is None:
        return []
    return [
        node
        for node in ast.walk(value)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "reshape"
        and len(node.args) == 2
        and not node.keywords
        and isinstance(node.args[0], ast.Name)
        and isinstance(node.args[1], ast.Tuple | ast.List)
    ]


def _bind(
    statement: ast.stmt, named: dict[str, tuple[str, ...]], aliases: dict[str, ast.expr]
) -> None:
    """Follow what the statement binds: axis names unpacked from a shape, simple aliases
    (``c_out = c // (r * r)``); any other binding of a name forgets what it held."""
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            named.pop(node.id, None)
            aliases.pop(node.id, None)
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return
    target = statement.targets[0]
    if isinstance(target, ast.Tuple):
        tensor = _unpacked_tensor(statement.value)
        names = [e.id if isinstance(e, ast.Name) else "" for e in target.elts]
        if tensor is not None and 2 <= len(names) <= _MAX_AXES:
            if all(names) and "_" not in names and len(set(names)) == len(names):
                named[tensor] = tuple(names)
    elif isinstance(target, ast.Name) and _factors(statement.value, aliases) is not None:
        aliases[target.id] = statement.value


def _told(
    call: ast.Call,
    statement: ast.stmt,
    named: dict[str, tuple[str, ...]],
    aliases: dict[str, ast.expr],
    source: str,
    function: str | None,
) -> NamedAxesReshape | None:
    tensor = call.args[0]
    shape = call.args[1]
    assert isinstance(tensor, ast.Name) and isinstance(shape, ast.Tuple | ast.List)
    axes = named.get(tensor.id)
    if axes is None:
        return None
    read = _read(axes, list(shape.elts), aliases, source)
    if read is None:
        return None
    pieces, texts = read
    if _in_order(pieces):
        return None
    module = source_segment(source, call.func.value)  # type: ignore[attr-defined]
    statement_text = source_segment(source, statement)
    call_text = source_segment(source, call)
    shape_text = source_segment(source, shape)
    if not module or not statement_text or not call_text or not shape_text:
        return None
    if "\n" in statement_text:
        return None
    split = {axis for axis, pieces_of in enumerate(texts) if len(pieces_of) > 1}
    offsets = []
    start = 0
    for pieces_of in texts:
        offsets.append(start)
        start += len(pieces_of)
    order = [offsets[axis] + number for element in pieces for axis, number in element]
    moved = tensor.id
    if split:
        opened, closed = ("[", "]") if isinstance(shape, ast.List) else ("(", ")")
        sizes = ", ".join(text for pieces_of in texts for text in pieces_of)
        moved = f"{module}.reshape({tensor.id}, {opened}{sizes}{closed})"
    fixed_call = f"{module}.reshape({module}.transpose({moved}, {order}), {shape_text})"
    fixed = statement_text.replace(call_text, fixed_call, 1)
    drawn = tuple(_described(axes, element, split) for element in pieces)
    return NamedAxesReshape(
        statement_text,
        fixed,
        tensor.id,
        axes,
        shape_text,
        drawn,
        statement.lineno,
        function,
        bool(split),
    )


def text(found: NamedAxesReshape) -> str:
    where = f"line {found.line} of this cell" + (
        f", in `{found.function}`" if found.function else ""
    )
    axes = ", ".join(found.axes)
    wanted = "; ".join(f"({drawn})" for drawn in found.drawn)
    steps = (
        "split the axes the factors come from, move the pieces into place with a "
        "transpose, then reshape as you wrote"
        if found.split
        else "transpose the axes into that order, then reshape as you wrote"
    )
    return (
        f"`{found.statement}` ({where}) reshapes `{found.tensor}`, whose axes the cell "
        f"names ({axes}) from its shape, to `{found.target}`: by those names, the new axes "
        f"hold {wanted}, which is not the order ({axes}) the values have. A reshape keeps "
        "the values in memory order and only cuts them again, so each new axis holds the "
        "values that follow each other there: it can merge neighbouring axes or split "
        "one, never move a piece of one axis next to another. The shape comes out as "
        "written and nothing raises, but the values are not where the names put them. "
        f"To move them, {steps}: `{found.fixed}`."
    )
