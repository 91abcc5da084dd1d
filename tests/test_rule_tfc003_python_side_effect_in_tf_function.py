from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import check, check_cells, span

CODE = "TFC003"


def test_global_counter_and_outer_list():
    source = """\
        import tensorflow as tf
        calls = 0
        history = []

        @tf.function
        def step(x):
            global calls
            calls += 1
            history.append(x)
            return x
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(8, 5, 8, 15), (9, 5, 9, 22)]
    assert "global `calls`" in findings[0].message
    assert "list `history`" in findings[1].message


def test_nonlocal_counter_and_outer_dict_item_under_alias():
    source = """\
        import tensorflow as t

        def make():
            seen = 0
            cache = {}

            @t.function
            def step(x):
                nonlocal seen
                seen = seen + 1
                cache["last"] = x
                return x

            return step
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(10, 9, 10, 24), (11, 9, 11, 26)]
    assert "nonlocal `seen`" in findings[0].message
    assert "dict `cache`" in findings[1].message


def test_self_attribute_increment_that_is_not_a_variable():
    source = """\
        from tensorflow import function

        class Counter:
            def __init__(self):
                self.count = 0
                self.log = []

            @function
            def __call__(self, x):
                self.count += 1
                self.log.append(x)
                return x
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(10, 9, 10, 24), (11, 9, 11, 27)]
    assert "`self.count` is a Python number" in findings[0].message


def test_class_level_default_counts_as_python_number():
    source = """\
        import tensorflow as tf

        class Step:
            calls = 0

            @tf.function
            def __call__(self, x):
                self.calls = self.calls + 1
                return x
        """
    [finding] = check(source, CODE)
    assert span(finding) == (8, 9, 8, 36)


def test_notebook_cells():
    cells = [
        "import tensorflow as tf\nlosses = []",
        "@tf.function\ndef f(x):\n    losses.append(x)\n    return x",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (1, 3, 5, 3, 21)


def test_correct_state_handling_is_silent():
    source = """\
        import tensorflow as tf
        counter = tf.Variable(0)
        outside = []

        class Model:
            def __init__(self):
                self.steps = tf.Variable(0)
                self.unknown = make_something()

            @tf.function
            def train(self, x, items):
                self.steps.assign_add(1)
                self.unknown += 1          # type unknown: stay silent
                local = []
                local.append(x)            # local list: fine
                items.append(x)            # parameter of unknown type
                counter.assign_add(1)
                return x

        def eager(x):
            outside.append(x)              # not a tf.function

        @tf.function
        def nested(x):
            def helper(v):
                outside.append(v)          # nested function: not reported
            return x
        """
    assert check(source, CODE) == []


def test_storing_a_lazily_created_variable_is_silent():
    # Keeping a new variable in a global or a list is the first-trace creation idiom;
    # creating it on every trace is TFC010's finding.
    source = """\
        import tensorflow as tf
        _scale = None
        kernels = []

        @tf.function
        def step(x):
            global _scale
            if _scale is None:
                _scale = tf.Variable(2.0)
            if not kernels:
                kernels.append(tf.Variable(tf.zeros([3, 3])))
            kernels.append(x)
            return x * _scale
        """
    [finding] = check(source, CODE)
    assert finding.line == 12
