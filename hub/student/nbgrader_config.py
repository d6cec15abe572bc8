# A student's nbgrader on the course's JupyterHub (hub/jupyterhub_config.py puts this folder on JUPYTER_CONFIG_PATH):
# the Assignment List fetches from and submits to the hub's exchange, for the course's id; the hub sets both.
import os

c = get_config()  # noqa: F821
c.CourseDirectory.course_id = os.environ["GRADER_COURSE_ID"]
c.Exchange.root = os.environ["GRADER_EXCHANGE"]
