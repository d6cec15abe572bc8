# The course's own JupyterLab extension (labextensions/nn-module-course/), found wherever these settings apply: the
# Validate button that says what the hidden tests decide, and the chapters' answers hidden until asked for.
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
c = get_config()  # noqa: F821
c.LabApp.extra_labextensions_path = [str(HERE / "labextensions")]
# The course's server extensions (jupyter_server_config.json: grader.validate_button, grader.formgrader) come from
# the course itself, also where the server's environment has no grader installed (a JupyterHub's).
if str(HERE.parent) not in sys.path:
    sys.path.append(str(HERE.parent))
