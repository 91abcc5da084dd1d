"""The report's ``variables`` (and the gradient notes): variables that left training.

- ``kinds.py``: what kind of TensorFlow/Keras value an object is (by type alone), and a
  holder's trainable variables from what the libraries store;
- ``namespace_diff.py``: the per-cell diff of the user's names and of tf.Module/Keras
  objects (variables rebound to tensors, trainable flags and counts that changed);
- ``attribute_hook.py``: the ``__setattr__`` hook that sees a variable attribute replaced
  by a tensor as it happens;
- ``rebind_statements.py``: the statements of a cell's source that rebind a variable, and
  the in-place update each meant;
- ``rebind_entries.py``: the entries for variables replaced by tensors, from the hook,
  the cell's source and the namespace diff, each cause once;
- ``stopped_learning.py``: the optimizer hook, and the variables that got no update while
  others trained;
- ``tape_gradients.py``: the ``GradientTape.gradient`` hook, and notes when it returned
  None for a source.
"""
