from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import check, check_cells, fixed, span

CODE = "TFC002"


def test_print_in_decorated_function_gets_tf_print():
    source = """\
        import tensorflow as tf

        @tf.function
        def step(x):
            print("x is", x)
            return x * 2
        """
    [finding] = check(source, CODE)
    assert span(finding) == (5, 5, 5, 21)
    assert "`step`" in finding.message
    assert fixed(source, finding).splitlines()[4] == '    tf.print("x is", x)'


def test_fix_uses_the_files_own_alias_and_decorator_call():
    source = """\
        import tensorflow as t

        @t.function(jit_compile=True)
        def step(x):
            print(x, sep=", ")
        """
    [finding] = check(source, CODE)
    assert fixed(source, finding).splitlines()[4] == '    t.print(x, sep=", ")'


def test_function_wrapped_later_and_from_import():
    source = """\
        from tensorflow import function

        def body(x):
            print(x)
            return x

        body = function(body)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (4, 5, 4, 13)
    assert finding.fix is None  # no module alias to spell tf.print with


def test_unsupported_keywords_and_fstrings_get_no_fix():
    source = """\
        import sys
        import tensorflow as tf

        @tf.function
        def step(x):
            print(x, file=sys.stderr)
            print(f"x={x}")
        """
    findings = check(source, CODE)
    assert [f.fix for f in findings] == [None, None]


def test_notebook_cells():
    cells = ["import tensorflow as tf", "@tf.function\ndef f(x):\n    print(x)\n    return x"]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (1, 3, 5, 3, 13)


def test_look_alikes_are_silent():
    source = """\
        import tensorflow as tf

        @tf.function
        def step(x):
            tf.print(x)
            def callback(v):
                print(v)  # nested: may run eagerly via tf.py_function
            return tf.py_function(lambda v: print(v) or v, [x], tf.float32)

        def eager(x):
            print(x)
        """
    assert check(source, CODE) == []


def test_shadowed_print_is_silent():
    source = """\
        import tensorflow as tf
        from rich import print

        @tf.function
        def step(x):
            print(x)
        """
    assert check(source, CODE) == []


def test_print_in_an_eager_only_branch_is_silent():
    # Runs only under tf.config.run_functions_eagerly(True): never while tracing.
    source = """\
        import tensorflow as tf

        @tf.function
        def step(x):
            if tf.executing_eagerly():
                print("eager:", x)
            if not tf.config.functions_run_eagerly():
                pass
            else:
                print("eager too:", x)
            if tf.executing_eagerly():
                pass
            else:
                print("tracing:", x)
            return x
        """
    [finding] = check(source, CODE)
    assert finding.line == 14
