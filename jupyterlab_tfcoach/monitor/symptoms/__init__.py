"""Silent bugs found by their symptoms (issue #25): nothing raises, the numbers are wrong.

- ``broadcast.py``: ``(N, 1)`` against ``(N,)`` in an element-wise op that feeds a loss or
  a metric, found in traced graphs (once per trace) and in a cell's own expressions;
- ``datasets.py``: a one-shot dataset iterator looped over again after it ran out, Python
  randomness or side effects in a function that ``Dataset.map``/``filter`` trace, and an
  outer number such a function read that changed after its trace;
- ``dataset_order.py``: a tf.data pipeline in an order that silently changes training;
- ``reshape_transpose.py``: a reshape written where a transpose was meant (and
  ``named_axes_reshape.py``: one written in the input's own axis names out of their order);
- ``hand_metrics.py``: predictions and metrics computed by hand, read from a cell's
  expressions and the values their names hold (``cell_reading.py``): a probability
  threshold on raw scores (``threshold_scores.py``), a class picked over the wrong axis or
  labels in the wrong format (``class_axis.py``), an accuracy averaged in an integer dtype
  (``integer_mean.py``);
- ``custom_loops.py``: custom training loops read from a cell's loops
  (``loop_structure.py``): a Keras metric read every epoch and never reset
  (``metric_resets.py``), an epoch's mean from a sum overwritten, never reset or divided by
  the wrong count (``epoch_accumulators.py``), a model with Dropout or BatchNormalization
  called in the wrong training mode (``training_mode.py``).

Each finding is a coaching note naming what the user wrote, with a fix in their names.
"""
