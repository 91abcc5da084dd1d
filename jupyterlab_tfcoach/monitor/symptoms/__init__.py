"""Silent bugs found by their symptoms (issue #25): nothing raises, the numbers are wrong.

- ``broadcast.py``: ``(N, 1)`` against ``(N,)`` in an element-wise op that feeds a loss or
  a metric, found in traced graphs (once per trace) and in a cell's own expressions;
- ``datasets.py``: a one-shot dataset iterator looped over again after it ran out, Python
  randomness or side effects in a function that ``Dataset.map``/``filter`` trace, and an
  outer number such a function read that changed after its trace.

Each finding is a coaching note naming what the user wrote, with a fix in their names.
"""
