"""The jupyter_server extension: options, event schema, kernel listener, routes.

Enabled on install by ``jupyter-config/server-config/jupyterlab_tfcoach.json``;
works for ``jupyter lab`` and plain ``jupyter server``. Options go in any
jupyter_server config file, e.g. ``c.TfCoach.autoload = False``.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import Any

from jupyter_events.schema_registry import SchemaRegistryException
from traitlets import Bool, Float, Int, TraitError, Unicode, validate
from traitlets.config import Configurable

from jupyterlab_tfcoach.course import InvalidBaseUrlError, checked_base_url
from jupyterlab_tfcoach.server import lanes
from jupyterlab_tfcoach.server.handlers import (
    SETTINGS_COURSE_BASE_URL,
    SETTINGS_HUB,
    SETTINGS_STUDY_FEED,
    handlers,
)
from jupyterlab_tfcoach.server.kernels import (
    KERNEL_ACTIONS_SCHEMA_ID,
    MAX_HISTORY_BYTES,
    REPORT_SCHEMA_PATH,
    HubSettings,
    ReportHub,
)
from jupyterlab_tfcoach.server.study_feed import LabPreference, StudyFeed
from jupyterlab_tfcoach.server.study_routes import SETTINGS_STUDY_STORE, study_handlers
from jupyterlab_tfcoach.study import StudyStore, default_path

MIN_HISTORY_BYTES = 1024 * 1024


class TfCoach(Configurable):
    """Options of the tfcoach server extension."""

    autoload = Bool(
        True,
        help=(
            "Load the tfcoach monitor (%load_ext jupyterlab_tfcoach) silently in every "
            "Python kernel the server starts or restarts. Reports of kernels where a user "
            "loads it by hand are collected either way."
        ),
    ).tag(config=True)

    history_length = Int(
        200,
        help="How many reports the server keeps per kernel (oldest are dropped first).",
    ).tag(config=True)

    history_bytes = Int(
        MAX_HISTORY_BYTES,
        help=(
            "How many bytes of reports the server keeps per kernel, as serialized "
            "(oldest are dropped first); at least 1 MiB, since one report may be 256 KiB."
        ),
    ).tag(config=True)

    course_base_url = Unicode(
        None,
        allow_none=True,
        help=(
            "Base URL of the course for links in findings and course listings: "
            "<base>/<module-id>#<section-id>; an http:// or https:// URL (the same rule as "
            "course-base-url in pyproject.toml and the editors' tfcoach.courseBaseUrl). "
            "Default: the packaged Markdown files."
        ),
    ).tag(config=True)

    quiet_tensorflow_logs = Bool(
        True,
        help=(
            "In kernels the server coaches, set TF_CPP_MIN_LOG_LEVEL=1 before TensorFlow "
            "loads (unless the user set it), so TensorFlow's C++ start-up messages, which "
            "learners read as errors, are not printed. Warnings and errors still are."
        ),
    ).tag(config=True)

    bootstrap_timeout = Float(
        60.0,
        help="Seconds to wait for a kernel to answer the monitor bootstrap before giving up.",
    ).tag(config=True)

    study_db_path = Unicode(
        None,
        allow_none=True,
        help=(
            "The SQLite file of the learner's study progress (cards, reviews, game and quiz "
            "scores). Default: <jupyter data dir>/tfcoach/study.sqlite3, per user. On "
            "JupyterHub with shared home folders, each user's own path."
        ),
    ).tag(config=True)

    study_from_findings = Bool(
        True,
        help=(
            "When the static rules or the kernel monitor find a pitfall in the learner's own "
            "code, make the study cards of its course section due and note where (notebook, "
            "cell). Off here, it is off for every learner of this server; each learner may "
            "also turn it off with JupyterLab's setting studyFromFindings. Nothing leaves "
            "the server: it is written to the study store (study_db_path)."
        ),
    ).tag(config=True)

    @validate("course_base_url")
    def _valid_course_base_url(self, proposal: Any) -> str | None:
        try:
            return checked_base_url(proposal["value"], "TfCoach.course_base_url")
        except InvalidBaseUrlError as error:
            raise TraitError(str(error)) from None

    worker_idle_timeout = Float(
        lanes.DEFAULT_WORKER_IDLE_SECONDS,
        config=True,
        help=(
            "Seconds a worker process for large analyses and hovers waits for work before it "
            "ends itself (it holds 100-200 MB; the next large request starts a new one). "
            "0 keeps workers for the server's lifetime."
        ),
    )

    @validate("worker_idle_timeout")
    def _idle_timeout_not_negative(self, proposal: Any) -> float:
        value = float(proposal["value"])
        if not value >= 0:  # NaN too
            raise TraitError(f"TfCoach.worker_idle_timeout must be 0 or more, not {value}")
        return value

    @validate("history_length")
    def _positive_history(self, proposal: Any) -> int:
        value = int(proposal["value"])
        if value < 1:
            raise TraitError(f"TfCoach.history_length must be at least 1, not {value}")
        return value

    @validate("history_bytes")
    def _history_bytes_hold_reports(self, proposal: Any) -> int:
        value = int(proposal["value"])
        if value < MIN_HISTORY_BYTES:
            raise TraitError(
                f"TfCoach.history_bytes must be at least {MIN_HISTORY_BYTES} (1 MiB), not {value}"
            )
        return value

    @validate("bootstrap_timeout")
    def _positive_timeout(self, proposal: Any) -> float:
        value = float(proposal["value"])
        if value <= 0:
            raise TraitError(f"TfCoach.bootstrap_timeout must be positive, not {value}")
        return value


def load_server_extension(serverapp: Any) -> ReportHub:
    """Wire tfcoach into a running ``ServerApp``; returns the report hub."""
    options = TfCoach(parent=serverapp)
    event_logger = serverapp.event_logger
    try:
        event_logger.register_event_schema(REPORT_SCHEMA_PATH)
    except SchemaRegistryException:
        pass  # already registered in this process's logger
    hub = ReportHub(
        kernel_manager=serverapp.kernel_manager,
        event_logger=event_logger,
        session_manager=getattr(serverapp, "session_manager", None),
        settings=HubSettings(
            autoload=options.autoload,
            history_length=options.history_length,
            history_bytes=options.history_bytes,
            bootstrap_timeout=options.bootstrap_timeout,
            quiet_tensorflow_logs=options.quiet_tensorflow_logs,
            course_base_url=options.course_base_url,
        ),
        log=serverapp.log,
    )
    event_logger.add_listener(schema_id=KERNEL_ACTIONS_SCHEMA_ID, listener=hub.on_kernel_action)
    lanes.worker_idle_seconds = options.worker_idle_timeout
    web_app = serverapp.web_app
    web_app.settings[SETTINGS_HUB] = hub
    web_app.settings[SETTINGS_COURSE_BASE_URL] = options.course_base_url
    # Opened on the first study request (in a thread), not here: start-up does no file I/O.
    store = web_app.settings[SETTINGS_STUDY_STORE] = study_store(options)
    feed = StudyFeed(
        store=store,
        preference=LabPreference(partial(lab_user_settings_dir, serverapp), serverapp.log),
        root_dir=partial(_root_dir, serverapp),
        log=serverapp.log,
        enabled=options.study_from_findings,
    )
    web_app.settings[SETTINGS_STUDY_FEED] = feed
    hub.on_delivered = feed.from_report
    web_app.add_handlers(".*$", handlers(web_app.settings["base_url"]))
    web_app.add_handlers(".*$", study_handlers(web_app.settings["base_url"]))
    serverapp.log.info(
        "tfcoach: server extension loaded (autoload=%s, history_length=%d)",
        options.autoload,
        options.history_length,
    )
    return hub


def study_store(options: TfCoach) -> StudyStore:
    """The learner's study store, at ``c.TfCoach.study_db_path`` or the default path."""
    path = Path(options.study_db_path) if options.study_db_path else default_path()
    return StudyStore(path)


def lab_user_settings_dir(serverapp: Any) -> str | None:
    """Where JupyterLab keeps this user's settings: the running LabApp's
    ``user_settings_dir``, else JupyterLab's default (``JUPYTERLAB_SETTINGS_DIR``, or
    ``<jupyter config dir>/lab/user-settings``)."""
    manager = getattr(serverapp, "extension_manager", None)
    apps = getattr(manager, "extension_apps", None) or {}
    for found in apps.values():
        for app in found:
            folder = getattr(app, "user_settings_dir", None)
            if isinstance(folder, str) and folder:
                return folder
    from jupyter_core.paths import jupyter_config_dir

    configured = os.environ.get("JUPYTERLAB_SETTINGS_DIR")
    return configured or os.path.join(jupyter_config_dir(), "lab", "user-settings")


def _root_dir(serverapp: Any) -> str | None:
    """The folder contents paths (a session's notebook path) are relative to."""
    root = getattr(getattr(serverapp, "contents_manager", None), "root_dir", None)
    if not isinstance(root, str) or not root:
        root = getattr(serverapp, "root_dir", None)
    return root if isinstance(root, str) and root else None
