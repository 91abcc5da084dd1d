"""The kernel monitor: an IPython extension that reports, after every cell, what
TensorFlow traced and why, variables that left training, and explained errors.

Importing this package is cheap and never imports TensorFlow.

- ``extension.py``: the IPython glue (``%load_ext``, the cell events, ``%tfcoach``) that
  hooks TensorFlow once the user imports it and builds each cell's report;
- ``report.py``: the report's shape and builders, keeping, publishing and printing it;
- ``inline.py``: the report shown under a cell when no tfcoach panel listens;
- ``traces/``: which tf.functions traced and why (the report's ``traces``);
- ``variables/``: variables that left training (``variables``, gradient notes);
- ``errors/``: the cell's exception explained (``error``);
- shared by those: ``hooks.py`` (installing and restoring hooks on the libraries'
  methods), ``stored_state.py`` (what TensorFlow and Keras store on an object, read
  without running user code), ``tftypes.py`` (their classes, from ``sys.modules``),
  ``locations.py`` (cells as ``In[n]``), ``course_links.py`` (course sections).
"""

from __future__ import annotations

from jupyterlab_tfcoach.monitor.report import SCHEMA, last_report

__all__ = ["SCHEMA", "last_report"]
