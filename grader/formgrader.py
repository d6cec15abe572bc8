"""nbgrader's Formgrader with the grader's flags in view, a Jupyter server extension in place of nbgrader's own
(jupyter_config/jupyter_server_config.json): Manage Submissions lists every flagged submission of the assignment at
its top, each with the whole of every reason the grader gave (grader.gradebook.flag_reasons) and a link to the
submission. Everything else is nbgrader's: the page extends nbgrader's template (templates/formgrader/).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, PrefixLoader
from nbgrader.server_extensions.formgrader.formgrader import FormgradeExtension

from grader.gradebook import flag_reasons

TEMPLATES = Path(__file__).resolve().parent / "templates" / "formgrader"


class CourseFormgrader(FormgradeExtension):
    """The Formgrader, its pages looked up in templates/formgrader/ first (course_pages)."""

    def init_tornado_settings(self, webapp: object) -> None:
        super().init_tornado_settings(webapp)
        settings = webapp.settings
        settings["nbgrader_jinja2_env"] = course_pages(
            settings["nbgrader_jinja2_env"], lambda assignment: flag_reasons(settings["nbgrader_db_url"], assignment)
        )


def course_pages(nbgrader_pages: Environment, flags: Callable[[str], dict[str, list[str]]]) -> Environment:
    """nbgrader's page templates with the course's first; nbgrader's own are there as "nbgrader/<name>" too. Pages
    call `flag_reasons(assignment)` ({student: reasons}, `flags`)."""
    own = nbgrader_pages.loader
    loader = ChoiceLoader([FileSystemLoader(str(TEMPLATES)), PrefixLoader({"nbgrader": own}), own])
    # autoescape off, as nbgrader's pages are written; the course's pages escape what they show (| e)
    pages = nbgrader_pages.overlay(loader=loader, autoescape=False)
    pages.globals["flag_reasons"] = flags
    return pages


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "grader.formgrader"}]


def _load_jupyter_server_extension(serverapp: object) -> None:
    """As nbgrader's own formgrader extension loads, with CourseFormgrader."""
    serverapp.log.info("Loading the course's formgrader (nbgrader's, with the grader's flags)")
    formgrader = CourseFormgrader(parent=serverapp)
    formgrader.root_dir = serverapp.root_dir
    formgrader.log = serverapp.log
    formgrader.initialize([])
    formgrader.init_tornado_settings(serverapp.web_app)
    formgrader.init_handlers(serverapp.web_app)
