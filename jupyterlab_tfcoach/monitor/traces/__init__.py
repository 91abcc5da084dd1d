"""The report's ``traces``: which tf.functions traced during a cell, and why.

- ``registry.py``: the hooks on TensorFlow's ``Function`` (through ``hooks.py``), the
  registry of live tf.functions (weak references) and the per-cell reading of new traces
  into ``TraceEvent``s;
- ``entries.py``: a cell's events as report entries (one per function) and notes;
- ``identity.py``: which function a tf.function is (the user's, Keras's, TensorFlow's),
  through the wrappers the libraries add;
- ``signatures.py``: each trace's argument types as plain strings, and how two differ;
- ``retrace_reasons.py``: a difference between two traces as a reason with its fix;
- ``reason_condensing.py``: many similar reasons summed up in one line;
- ``body_scan.py``: what a traced Python body writes and reads outside itself, from its
  bytecode, checked against live values;
- ``body_advice.py``: the advice for what ``body_scan.py`` found (side effects, frozen
  values), in the user's names.
"""
