# The course's JupyterLab extension for students on the hub: a prediction's answer in a chapter stays hidden until
# asked for. It is in the copy of hub/ every server runs from (docs/grading-at-scale.md, step 3: labextensions/), or,
# for `make hub` on a checkout, in the course's jupyter_config/. Its Validate button is off (labconfig/): it needs the
# grader, which students' servers on the hub do not have; nbgrader's is there.
from pathlib import Path

HERE = Path(__file__).resolve().parent
c = get_config()  # noqa: F821
c.LabApp.extra_labextensions_path = [
    str(path)
    for path in (HERE.parent / "labextensions", HERE.parent.parent / "jupyter_config" / "labextensions")
    if path.is_dir()
]
