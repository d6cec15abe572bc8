"""nbgrader settings for this course: the repository root is the course directory."""

import os
import sys
from pathlib import Path

from traitlets.config.loader import KVArgParseConfigLoader

ROOT = Path(__file__).resolve().parent.parent

c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "nn-module-internals"
c.CourseDirectory.root = str(ROOT)
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"
# An exercise's folder in solutions/ also holds its checks, its scripted mistakes and the list of its solution's
# equivalent mutants (benchmarks/mutation.py): never released, never copied.
c.CourseDirectory.ignore = [
    ".ipynb_checkpoints",
    "*.pyc",
    "__pycache__",
    "feedback",
    "checks.py",
    "mistakes.py",
    "equivalent_mutants.txt",
]
# Everything a grading run writes stays in the git-ignored work/ folder.
c.CourseDirectory.submitted_directory = "work/submitted"
c.CourseDirectory.autograded_directory = "work/autograded"
c.CourseDirectory.feedback_directory = "work/feedback"
c.CourseDirectory.solution_directory = "work/solution"
# The gradebook the Formgrader and nbgrader's own commands use: GRADER_DB_URL (a PostgreSQL gradebook shared by a
# teaching team, say) or the SQLite file of work/. `python -m grader` takes it as --db.
c.CourseDirectory.db_url = os.environ.get("GRADER_DB_URL") or f"sqlite:///{ROOT / 'work' / 'gradebook.db'}"
# Every way to autograde (python -m grader autograde, the Formgrader's Autograde buttons, `nbgrader autograde` in the
# course folder) runs nbgrader's steps with two of the grader's: the cells run in the grading sandbox, and after
# SaveAutoGrades each graded test cell's points come from the trusted check (see grader/nbgrader_steps.py).
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # nbgrader's own commands import those steps from the course
c.Autograde.sanitize_preprocessors = [
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "grader.nbgrader_steps.RestoreCells",  # in place of nbgrader.preprocessors.OverwriteCells: no warning when honest
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.Autograde.autograde_preprocessors = [
    "grader.nbgrader_steps.CourseExecute",  # in place of nbgrader.preprocessors.Execute
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "grader.nbgrader_steps.TrustedCheck",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
    "grader.sanitize.SanitizeSubmission",  # last: the autograded notebook the Formgrader shows carries no script
]
# The cell time limit of nbgrader's own commands and of `grader validate`/`check` (autograde has --timeout).
c.Execute.timeout = 300
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
# Feedback pages, however generated (`python -m grader feedback`, the Formgrader's Generate Feedback buttons,
# `nbgrader generate_feedback` in the course folder): each graded cell named by its part with its result first, hidden
# tests hidden, the submission sanitized, on the grader's page (grader.feedback).
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "grader.feedback.FeedbackByPart",
    "grader.sanitize.SanitizeSubmission",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
c.GenerateFeedback.exporter_class = "grader.feedback.FeedbackPage"  # the page's table of contents names the parts
# nbgrader's exchange: on a JupyterHub the shared folder of GRADER_EXCHANGE (hub/jupyterhub_config.py sets it for
# every server it starts); otherwise a local one (`make lab` creates it), so the Formgrader's release and collect work
# on one machine. There, students get their exercises from git (workspace/), and JupyterLab's Assignment and Course
# Lists are off (jupyter_config/).
c.Exchange.root = os.environ.get("GRADER_EXCHANGE") or str(ROOT / "work" / "exchange")


def command_line_settings(args: list[str], sections: tuple[str, ...]) -> object:
    """The `--Section.name=value` (or `--Section.name value`) settings of these sections among `args`."""
    picked = []
    for arg, following in zip(args, [*args[1:], None], strict=False):  # each with the one after it, if any
        if arg.startswith("--") and arg[2:].split(".", 1)[0] in sections:
            picked += [arg] if "=" in arg or following is None else [arg, following]
    return KVArgParseConfigLoader(picked).load_config()


# The command line wins over this file, also where nbgrader reads the file after the command line has been applied:
# the Formgrader inside `jupyter lab --CourseDirectory.db_url=...` (`make lab WORK=...` relies on it).
c.merge(command_line_settings(sys.argv[1:], ("CourseDirectory", "Exchange")))
