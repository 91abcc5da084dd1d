"""``POST tfcoach/api/hover``: the card JupyterLab shows on a TensorFlow name in a notebook cell.

Through a real jupyter_server (pytest-jupyter). The card must be the language server's card
(same knowledge, ``course.api_cards``, same resolution through the notebook's own imports and
bindings), so the cases mirror the LSP hover tests: aliases, methods on bound objects, names
that are not TensorFlow's, text from the user kept as data, and browser (UTF-16) columns.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from tornado.httpclient import HTTPResponse

from jupyterlab_tfcoach.course import get_course
from jupyterlab_tfcoach.course.api_cards import api_card
from tests.harness import on_server_loop

Fetch = Callable[..., Awaitable[HTTPResponse]]

CELLS = [
    "import tensorflow as t\nfrom tensorflow import GradientTape as Tape\n",
    "w = t.Variable([1.0, 2.0])\n",
    "@t.function\ndef step(x):\n    with Tape() as tape:\n        y = w * x\n"
    "    return tape.gradient(y, w)\n",
    'label = "😀 é"; w.assign_sub([0.1, 0.1])\n',
    "import numpy as np\nnp.mean([1.0])\nfunction = 3\n",
]


async def hover(fetch: Fetch, cells: list[str], cell: int, line: int, character: int) -> Any:
    response = await fetch(
        "tfcoach",
        "api",
        "hover",
        method="POST",
        body=json.dumps({"cells": cells, "cell": cell, "line": line, "character": character}),
        raise_error=False,
    )
    assert response.code == 200, response.body
    return json.loads(response.body)


def at(cells: list[str], cell: int, line: int, fragment: str) -> int:
    """The UTF-16 column of ``fragment`` on that line (as the browser counts)."""
    text = cells[cell].split("\n")[line]
    return len(text[: text.index(fragment)].encode("utf-16-le")) // 2


@on_server_loop
async def test_an_aliased_decorator_gets_the_tf_function_card(jp_fetch: Fetch) -> None:
    body = await hover(jp_fetch, CELLS, 2, 0, at(CELLS, 2, 0, "function") + 2)
    card = body["card"]
    expected = api_card("tf.function")
    assert expected is not None
    assert card["title"] == "tf.function"
    assert card["written"] == "t.function"
    assert card["summary"] == expected.summary and card["pitfall"] == expected.pitfall
    assert card["course"] == get_course().ref(expected.section_id)
    # The range covers `t.function` after the `@`.
    assert body["range"] == {"start": 1, "end": 1 + len("t.function")}


@on_server_loop
async def test_an_imported_class_and_its_bound_object(jp_fetch: Fetch) -> None:
    body = await hover(jp_fetch, CELLS, 2, 2, at(CELLS, 2, 2, "Tape()") + 1)
    assert body["card"]["title"] == "tf.GradientTape"
    assert body["card"]["written"] == "Tape"
    method = await hover(jp_fetch, CELLS, 2, 4, at(CELLS, 2, 4, "gradient") + 3)
    card = method["card"]
    assert card["title"] == "tf.GradientTape.gradient"
    assert (card["receiver"], card["bound_to"]) == ("tape", "tf.GradientTape")
    assert card["bound_where"] == "line 3"  # in the same cell


@on_server_loop
async def test_a_method_of_a_variable_bound_in_an_earlier_cell(jp_fetch: Fetch) -> None:
    # The line has non-ASCII text before the name: columns are UTF-16 units both ways.
    character = at(CELLS, 3, 0, "assign_sub") + 4
    body = await hover(jp_fetch, CELLS, 3, 0, character)
    card = body["card"]
    assert card["title"] == "tf.Variable.assign_sub"
    assert (card["receiver"], card["bound_to"]) == ("w", "tf.Variable")
    assert card["bound_where"] == "line 1 of code cell 2"
    line = CELLS[3].split("\n")[0]
    start = at(CELLS, 3, 0, "w.assign_sub")
    assert body["range"] == {"start": start, "end": start + len("w.assign_sub")}
    assert line.encode("utf-16-le")[start * 2 : body["range"]["end"] * 2].decode("utf-16-le") == (
        "w.assign_sub"
    )


@pytest.mark.parametrize(
    ("cell", "line", "fragment"),
    [
        (4, 1, "mean"),  # NumPy, not TensorFlow
        (4, 2, "function"),  # a plain name that only looks like one
        (3, 0, "label"),  # a string variable
        (3, 0, "😀"),  # inside a string
        (0, 0, "import"),  # a keyword
    ],
)
@on_server_loop
async def test_names_that_are_not_tensorflow_get_no_card(
    jp_fetch: Fetch, cell: int, line: int, fragment: str
) -> None:
    body = await hover(jp_fetch, CELLS, cell, line, at(CELLS, cell, line, fragment) + 1)
    assert body == {"card": None}


# A learner's notebook in the forms real code takes. What a name holds is what the rules
# see (one binding model): each card below has a twin where the same method call gets no
# card, because the name holds something else there.
REAL = [
    "import tensorflow as tf\n",
    "class Linear(tf.Module):\n    def __init__(self):\n        self.w = tf.Variable(0.5)\n\n"
    "    def __call__(self, x):\n        return self.w * x\n\n\nmodel = Linear()\n"
    "model.w.assign(1.0)\n",
    "import keras\n\n\nclass Scale(keras.layers.Layer):\n    def build(self, shape):\n"
    "        self.k = self.add_weight(shape=(1,))\n\n    def call(self, x):\n"
    "        self.k.assign([1.0])\n        return x * self.k\n",
    "w = tf.Variable(2.0)\nfor step in range(3):\n    with tf.GradientTape() as tape:\n"
    "        loss = w * w\n    grad = tape.gradient(loss, w)\n    w.assign_sub(0.1 * grad)\n",
    "def rescale(w):\n    w.assign(1.0)  # whatever the caller passes\n",
    "current = w\ncurrent.assign(3.0)\n",
    "v = tf.Variable(1.0)\nv = v - 0.1\nv.assign(0.0)\n",
    "%%time\nw.assign_add(1.0)\n",
    "!pip install -q \\\n    tensorflow-datasets\nw.assign(0.0)\n",
]


@pytest.mark.parametrize(
    ("cell", "line", "call", "receiver", "bound_where"),
    [
        (1, 9, "model.w.assign", "model.w", "line 3"),  # a tf.Module's variable
        (2, 8, "self.k.assign", "self.k", "line 6"),  # Keras 3 add_weight, in another method
        (3, 4, "tape.gradient", "tape", "line 3"),  # a training loop's tape
        (3, 5, "w.assign_sub", "w", "line 1"),  # created and trained in one cell
        (5, 1, "current.assign", "current", "line 1"),  # an alias of the variable
        (7, 1, "w.assign_add", "w", "line 1 of code cell 4"),  # a %%time cell
        (8, 2, "w.assign", "w", "line 1 of code cell 4"),  # after a Colab `!pip ... \` line
    ],
)
@on_server_loop
async def test_real_code_methods_get_the_card_of_what_the_name_holds(
    jp_fetch: Fetch, cell: int, line: int, call: str, receiver: str, bound_where: str
) -> None:
    method = call.rsplit(".", 1)[1]
    body = await hover(jp_fetch, REAL, cell, line, at(REAL, cell, line, call) + len(call) - 1)
    card = body["card"]
    assert card is not None, call
    kind = "GradientTape" if receiver == "tape" else "Variable"
    assert card["title"] == f"tf.{kind}.{method}"
    assert (card["receiver"], card["bound_to"]) == (receiver, f"tf.{kind}")
    assert card["bound_where"] == bound_where


@pytest.mark.parametrize(
    ("cell", "line", "call"),
    [
        (4, 1, "w.assign"),  # a parameter named `w`: not the notebook's variable
        (6, 2, "v.assign"),  # `v = v - 0.1` made `v` a tensor: it has no assign
    ],
)
@on_server_loop
async def test_the_same_calls_on_names_that_hold_something_else_get_no_card(
    jp_fetch: Fetch, cell: int, line: int, call: str
) -> None:
    body = await hover(jp_fetch, REAL, cell, line, at(REAL, cell, line, call) + len(call) - 1)
    assert body == {"card": None}


# Where real code makes a name hold something else than it seems, each next to its twin.
TWINS = [
    "import tensorflow as tf\nw = tf.Variable(1.0)\n",
    # 1: a loop that rebinds `u` to a tensor at its end; its twin updates in place.
    "u = tf.Variable(1.0)\nfor step in range(3):\n    with tf.GradientTape() as tape:\n"
    "        loss = u * u\n    g = tape.gradient(loss, u)\n    u = u - 0.1 * g\n",
    "v = tf.Variable(1.0)\nfor step in range(3):\n    with tf.GradientTape() as tape:\n"
    "        loss = v * v\n    g = tape.gradient(loss, v)\n    v.assign_sub(0.1 * g)\n",
    # 3: a parameter, a keyword argument's name, a generator's own `w`, a docstring.
    '"""Notes.\n\nCall w.assign(0.0) to start again.\n"""\n'
    "def rescale(w, factor=2.0):\n    return w * factor\n\n\nrescale(w=w)\n"
    "print([x for x in [1] if any(w.assign(0.0) for w in [x])])\n",
    # 4: a class that rebinds `self.w` to a tensor in one method; its twin does not.
    "class Drifting(tf.Module):\n    def __init__(self):\n        self.w = tf.Variable(1.0)\n\n"
    "    def step(self, g):\n        self.w = self.w - 0.1 * g\n\n"
    "    def reset(self):\n        self.w.assign(0.0)\n",
    "class Steady(tf.Module):\n    def __init__(self):\n        self.w = tf.Variable(1.0)\n\n"
    "    def step(self, g):\n        self.w.assign_sub(0.1 * g)\n\n"
    "    def reset(self):\n        self.w.assign(0.0)\n",
    # 6: an instance whose attribute the notebook replaces; a layer's placeholder.
    "drifting = Drifting()\ndrifting.w = tf.constant(3.0)\ndrifting.w.assign(1.0)\n",
    "import keras\n\n\nclass Scale(keras.layers.Layer):\n    def __init__(self):\n"
    "        super().__init__()\n        self.k = None\n\n    def build(self, shape):\n"
    "        self.k = self.add_weight(shape=(1,))\n\n    def call(self, x):\n"
    "        return x * self.k\n",
    # 8: a cell that is another file's text, not the notebook's code.
    "%%writefile helpers.py\nimport tensorflow as tf\nw = tf.constant(1.0)\nw.assign(2.0)\n",
]


def place(cells: list[str], cell: int, needle: str, occurrence: int = 1) -> tuple[int, int]:
    """(line, UTF-16 column) of the n-th ``needle`` in the cell."""
    seen = 0
    for line, text in enumerate(cells[cell].split("\n")):
        start = text.find(needle)
        while start >= 0:
            seen += 1
            if seen == occurrence:
                return line, len(text[:start].encode("utf-16-le")) // 2
            start = text.find(needle, start + 1)
    raise AssertionError(f"{needle!r} #{occurrence} not in cell {cell}")


@pytest.mark.parametrize(
    ("cell", "needle", "occurrence", "expected"),
    [
        # `u` is a tensor from the loop's second pass on: no card says it is a variable.
        (1, "u * u", 1, None),
        (1, "u = u", 1, None),  # what the target becomes: a tensor
        (1, "tape.gradient", 1, ("tf.GradientTape.gradient", "tape", "line 3")),
        (2, "v * v", 1, ("tf.Variable", "v", "line 1")),
        (2, "v.assign_sub", 1, ("tf.Variable.assign_sub", "v", "line 1")),
        (3, "w, factor", 1, None),  # the parameter's name
        (3, "w.assign(0.0) to", 1, None),  # in a string of several lines
        (3, "w=w", 1, None),  # the keyword's name ...
        (3, "w)", 1, ("tf.Variable", "w", "line 2 of code cell 1")),  # ... and its value
        (3, "w.assign(0.0) for", 1, None),  # the generator's own `w`
        (4, "self.w.assign(0.0)", 1, None),  # `step` may have made it a tensor
        (5, "self.w.assign(0.0)", 1, ("tf.Variable.assign", "self.w", "line 3")),
        (6, "drifting.w.assign", 1, None),  # replaced by a tensor on the line before
        (7, "self.k", 3, ("tf.Variable", "self.k", "line 10")),  # not the None line
        (8, "w.assign", 1, None),
    ],
)
@on_server_loop
async def test_what_a_name_holds_in_real_code_and_its_twin(
    jp_fetch: Fetch, cell: int, needle: str, occurrence: int, expected: Any
) -> None:
    line, column = place(TWINS, cell, needle, occurrence)
    # On the first name of the needle's dotted name, or its method when it has one.
    first = needle.split("(")[0].split(" ")[0].split("=")[0].rstrip(",)")
    offset = len(first) - 1 if "." in first else 0
    body = await hover(jp_fetch, TWINS, cell, line, column + offset)
    card = body["card"]
    got = None if card is None else (card["title"], card["receiver"], card["bound_where"])
    assert got == expected


@on_server_loop
async def test_a_cell_that_does_not_parse_leaves_the_others_cards(jp_fetch: Fetch) -> None:
    cells = ["import tensorflow as tf\n", "def broken(:\n", "f = tf.function(lambda x: x)\n"]
    body = await hover(jp_fetch, cells, 2, 0, at(cells, 2, 0, "function"))
    assert body["card"]["title"] == "tf.function"
    assert await hover(jp_fetch, cells, 1, 0, 2) == {"card": None}
    # Positions past the end are no card, not an error.
    assert await hover(jp_fetch, cells, 7, 0, 0) == {"card": None}
    assert await hover(jp_fetch, cells, 2, 9, 0) == {"card": None}


@on_server_loop
async def test_a_cell_that_breaks_only_the_whole_notebook_leaves_the_others_cards(
    jp_fetch: Fetch,
) -> None:
    # Each cell parses on its own; joined, the late __future__ import is an error. The
    # analysis leaves that cell out and carries on: the hover cards must too.
    cells = [
        "import tensorflow as tf\n",
        "from __future__ import annotations\n",
        "f = tf.function(lambda x: x)\n",
    ]
    body = await hover(jp_fetch, cells, 2, 0, at(cells, 2, 0, "function"))
    assert body["card"] is not None and body["card"]["title"] == "tf.function"


@pytest.mark.parametrize(
    ("payload", "says"),
    [
        ({"cells": "x", "cell": 0, "line": 0, "character": 0}, "Expected"),
        ({"cells": [1], "cell": 0, "line": 0, "character": 0}, "list of strings"),
        ({"cells": ["x"], "cell": -1, "line": 0, "character": 0}, '"cell" must be'),
        ({"cells": ["x"], "cell": 0, "line": True, "character": 0}, '"line" must be'),
        ({"cells": ["x"], "cell": 0, "line": 0}, '"character" must be'),
        ([], "Expected"),
    ],
)
@on_server_loop
async def test_bad_requests_are_400_with_a_reason(jp_fetch: Fetch, payload: Any, says: str) -> None:
    response = await jp_fetch(
        "tfcoach", "api", "hover", method="POST", body=json.dumps(payload), raise_error=False
    )
    assert response.code == 400
    assert says in json.loads(response.body)["message"]
