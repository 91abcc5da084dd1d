"""Study tools of the course tab, server side: a learner's progress (``store.py``, one
SQLite file), when each card is due (``scheduler.py``, the ``fsrs`` library) and the shapes
the routes and the progress document take (``progress.py``). The routes are in
``server/study_routes.py``; ``docs/rest.md`` describes them.
"""

from jupyterlab_tfcoach.study.store import (
    StoreBusyError,
    StoreUnavailableError,
    StudyStore,
    default_path,
)

__all__ = ["StoreBusyError", "StoreUnavailableError", "StudyStore", "default_path"]
