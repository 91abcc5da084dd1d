"""Automagic: the one-line cells IPython runs as a line magic though they have no ``%``.

``pip install keras-tuner``, ``ls ./data/``, ``cd ~/data``, ``time y = f(x)``: a kernel runs
these as ``%pip ...``, ``%ls ...``. This module decides which cells it does so for, as IPython
decides (``InteractiveShell.transform_cell``, IPython 8 and 9):

1. The static transformations (``inputtransformer2``) run first: escapes (``%``, ``!``,
   ``?``, ``,``, ``;``, ``/``), ``x = %magic``, leading blank lines, indentation.
2. Only when the cell is then ONE line do the prefilter's checkers look at it, in order.
   Of those that a fresh kernel enables, two decide here:

   - ``AssignmentChecker``: the rest of the line after its first word starts with ``=``
     or ``,`` (``ls = []``, ``ls == 1``, ``time, n = 1, 2``): Python.
   - ``AutoMagicChecker``: the first word (``LineInfo.ifun``: word characters, dots and
     ``*``) is a registered line magic, automagic is on (its default), and the word is not
     shadowed: not bound in the user's namespace, not a builtin, not a keyword. The line
     then runs as ``%word rest`` even when it is valid Python: ``ls``, ``time(3)``,
     ``cd(path)``, ``ls[0]`` and ``ls: int = 3`` are magics, unless ``ls``, ``time`` or
     ``cd`` was bound by a cell run before.

So ``pip install x`` in a cell of two lines is a syntax error, as in the kernel, and ``ls``
there is a plain name. Which names are bound is the kernel's state: the notebook module
reads it from the cells before, in order (``binding_of``). No magic name is a builtin or a
keyword (a test checks it on a real shell), so only the cells' own bindings can shadow one.

``LINE_MAGICS`` are those of the kernels JupyterLab starts: ipykernel's shell (IPython's
magics, the posix aliases ``ls``, ``rm``, ``mkdir``..., the kernel's own ``clear``,
``autosave``...), the ``storemagic`` extension every kernel loads, and ``%tfcoach``, which
the server loads. A test compares them with a real shell's, so they cannot drift. IPython is
never imported here: the language server stays light and starts fast.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass

LINE_MAGICS = frozenset(
    {
        "alias", "alias_magic", "autoawait", "autocall", "automagic", "autosave",
        "bookmark", "cat", "cd", "clear", "code_wrap", "colors", "conda", "config",
        "connect_info", "cp", "debug", "dhist", "dirs", "doctest_mode", "ed", "edit", "env",
        "gui", "hist", "history", "killbgscripts", "ldir", "less", "lf", "lk", "ll", "load",
        "load_ext", "loadpy", "logoff", "logon", "logstart", "logstate", "logstop", "ls",
        "lsmagic", "lx", "macro", "magic", "mamba", "man", "matplotlib", "micromamba",
        "mkdir", "more", "mv", "notebook", "page", "pastebin", "pdb", "pdef", "pdoc", "pfile",
        "pinfo", "pinfo2", "pip", "popd", "pprint", "precision", "prun", "psearch", "psource",
        "pushd", "pwd", "pycat", "pylab", "qtconsole", "quickref", "recall", "rehashx",
        "reload_ext", "rep", "rerun", "reset", "reset_selective", "rm", "rmdir", "run",
        "save", "sc", "set_env", "store", "subshell", "sx", "system", "tb", "tfcoach", "time",
        "timeit", "unalias", "unload_ext", "uv", "who", "who_ls", "whos", "xdel", "xmode",
    }
)  # fmt: skip

# ``LineInfo.ifun`` without an escape: IPython's ``splitinput.line_split``.
_FIRST_WORD = re.compile(r"[\w.*]*")
# A line starting with one of these is an escape, transformed before the prefilter sees it.
_ESCAPES = frozenset("%!?,;/")


@dataclass(frozen=True)
class AutomagicLine:
    """The one line of a cell IPython runs as ``%name arguments``, if ``name`` is unbound.

    ``line`` is its 0-based index among the cell's lines, ``column`` the 0-based column of
    ``name`` in it (what precedes is whitespace), ``arguments`` the 0-based column where
    the magic's arguments start (after the name and the whitespace IPython strips)."""

    line: int
    column: int
    name: str
    arguments: int


def automagic_line(lines: Sequence[str]) -> AutomagicLine | None:
    """The line of a cell (its ``lines``, as ``positions.split_lines`` splits them) that
    IPython runs as a line magic, unless a cell run before bound its name; None when no
    line can be one: the cell has more than one line, an escape, or no magic's name."""
    found = None
    for index, line in enumerate(lines):
        if line.strip():
            found = index
            break
    # After its leading blank lines, the cell must end with this line; a final newline is
    # no line of its own (``split_lines``), a final blank line is one.
    if found is None or found != len(lines) - 1:
        return None
    line = lines[found]
    content = line.lstrip()
    # IPython counts lines with ``str.splitlines``, which also breaks at form feeds and
    # other separators Python's tokenizer keeps inside a line.
    if content[0] in _ESCAPES or len((content + "\n").splitlines()) != 1:
        return None
    first_word = _FIRST_WORD.match(content)  # always matches, perhaps ""
    name = first_word.group() if first_word else ""
    if name not in LINE_MAGICS:
        return None
    rest = content[len(name) :]
    the_rest = rest.lstrip()
    if the_rest[:1] in ("=", ","):
        return None  # AssignmentChecker: ``ls = []``, ``ls == 1``, ``ls, x = 1, 2``
    column = len(line) - len(content)
    return AutomagicLine(found, column, name, column + len(name) + len(rest) - len(the_rest))


def binding_of(tree: ast.Module, name: str) -> bool | None:
    """What running a cell (``tree``) does to the user's ``name``: True when it binds it
    (assignment, import, ``def``, ``class``, ``for``/``with`` target, ``:=``, a match
    capture), False when it deletes it (``del``), None when it leaves it alone. The last
    in source order wins.

    Bindings inside functions, classes and lambdas are their own, as are a comprehension's
    targets (its ``:=`` binds the module's name); ``x: int`` with no value binds nothing;
    ``except E as x`` unbinds ``x`` only if the handler ran, so it counts for nothing; a
    star import binds names no one can list without importing the module: none counted.
    """
    effect: bool | None = None
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        children: list[ast.AST]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == name:
                effect = True
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name):
            if node.id == name and not isinstance(node.ctx, ast.Load):
                effect = isinstance(node.ctx, ast.Store)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any((alias.asname or alias.name.split(".")[0]) == name for alias in node.names):
                effect = True
            continue
        if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name == name:
            effect = True
        elif isinstance(node, ast.MatchMapping) and node.rest == name:
            effect = True
        if isinstance(node, ast.comprehension):
            children = [node.iter, *node.ifs]
        elif isinstance(node, ast.AnnAssign) and node.value is None:
            children = [node.annotation]
        else:
            children = list(ast.iter_child_nodes(node))
        stack.extend(reversed(children))  # popped in source order
    return effect
