"""nbgrader settings for this course: the repository root is the course directory."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "nn-module-internals"
c.CourseDirectory.root = str(ROOT)
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"
# An exercise's folder in solutions/ also holds its checks and scripted mistakes: never released, never copied.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "checks.py", "mistakes.py"]
# Everything a grading run writes stays in the git-ignored work/ folder.
c.CourseDirectory.submitted_directory = "work/submitted"
c.CourseDirectory.autograded_directory = "work/autograded"
c.CourseDirectory.feedback_directory = "work/feedback"
c.CourseDirectory.solution_directory = "work/solution"
c.CourseDirectory.db_url = f"sqlite:///{ROOT / 'work' / 'gradebook.db'}"
# The cell time limit of nbgrader's own commands and of `grader validate`/`check` (autograde has --timeout).
c.Execute.timeout = 300
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
