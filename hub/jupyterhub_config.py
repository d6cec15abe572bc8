"""JupyterHub for a class taking this course: one Unix account per student and one for the instructor, nbgrader's
exchange in a shared folder, every server started from one Python environment. Steps: docs/grading-at-scale.md, "A class on JupyterHub".

Run as root (the hub starts each user's server as that user), with the jupyterhub of that environment:
    COURSE_DIR=/home/instructor/course COURSE_INSTRUCTOR=instructor COURSE_STUDENTS=alice,bob \
        venv/bin/jupyterhub -f jupyterhub_config.py
This file's folder (with node_modules/ from `npm ci`, and student/) and the environment must be readable by every
account; the instructor's checkout (COURSE_DIR) must not be: it holds solutions/.

Everything that differs between hubs comes from the environment (defaults in brackets):
    COURSE_DIR         the instructor's checkout of the course, where their server opens [this file's parent]
    COURSE_INSTRUCTOR  the instructor's account, the hub's admin [instructor]
    COURSE_STUDENTS    the students' accounts, comma-separated [none]
    GRADER_EXCHANGE    nbgrader's exchange, a folder every account can write (chmod ugo+rw) [/srv/nbgrader/exchange]
    HUB_PORT           the port of the hub on 127.0.0.1 (put a TLS proxy in front of it for a real class) [8000]
    HUB_API_PORT, PROXY_API_PORT  the hub's and the proxy's own ports on 127.0.0.1 [8081, 8001]
    HUB_STATE          the hub's database, cookie secret and proxy pid [the working folder]
    HUB_USER_VENV      the environment users' servers run from [the one the hub runs from]
"""

import os
import sys
from pathlib import Path

from traitlets.config.loader import PyFileConfigLoader

HERE = Path(__file__).resolve().parent
COURSE = Path(os.environ.get("COURSE_DIR") or HERE.parent).resolve()
INSTRUCTOR = os.environ.get("COURSE_INSTRUCTOR", "instructor")
STUDENTS = {name.strip() for name in os.environ.get("COURSE_STUDENTS", "").split(",") if name.strip()}
EXCHANGE = os.environ.get("GRADER_EXCHANGE", "/srv/nbgrader/exchange")
STATE = Path(os.environ.get("HUB_STATE") or ".").resolve()
VENV_BIN = Path(sys.executable).parent  # the course's .venv: the hub runs from it, and so does every user's server
# ... unless HUB_USER_VENV names another environment with the same packages: where the course's Python is one other
# accounts may not run (a Python installed under /root, say).
USER_BIN = Path(os.environ.get("HUB_USER_VENV") or VENV_BIN.parent) / "bin"
# The course id students fetch from is the course's own (its nbgrader settings, grader/nbgrader_config.py).
COURSE_SETTINGS = PyFileConfigLoader("nbgrader_config.py", path=str(COURSE / "grader")).load_config()
COURSE_ID = COURSE_SETTINGS.CourseDirectory.course_id

c = get_config()  # noqa: F821
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = int(os.environ.get("HUB_PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(os.environ.get("HUB_API_PORT", "8081"))
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{int(os.environ.get('PROXY_API_PORT', '8001'))}"
# configurable-http-proxy, pinned in hub/package.json (`make hub-proxy` runs npm ci)
c.ConfigurableHTTPProxy.command = [str(HERE / "node_modules" / ".bin" / "configurable-http-proxy")]
c.ConfigurableHTTPProxy.pid_file = str(STATE / "jupyterhub-proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.cleanup_servers = True  # stopping the hub stops every user's server, and the proxy

# Unix accounts and their passwords (PAM). No PAM session: the hub only checks the password.
c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.open_sessions = False
c.Authenticator.allowed_users = STUDENTS | {INSTRUCTOR}
c.Authenticator.admin_users = {INSTRUCTOR}

c.Spawner.cmd = [str(USER_BIN / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180


def course_settings(spawner) -> None:
    """The instructor's server opens on the course (the Formgrader, with the course's settings, jupyter_config/);
    a student's on their home, with the Assignment List and nothing of the instructor's (hub/student/)."""
    spawner.environment.update(
        PATH=f"{USER_BIN}:/usr/local/bin:/usr/bin:/bin",  # nbgrader runs `alembic` by name
        GRADER_EXCHANGE=EXCHANGE,
        GRADER_COURSE_ID=COURSE_ID,
    )
    if spawner.user.name == INSTRUCTOR:
        spawner.notebook_dir = str(COURSE)
        # nbgrader reads nbgrader_config.py from the working folder (the home) and from these: the course's
        spawner.environment["JUPYTER_CONFIG_PATH"] = f"{COURSE / 'jupyter_config'}:{COURSE}"
        spawner.environment["GRADER_COURSE_ROOT"] = str(COURSE)  # the grader's steps in the Formgrader grade there
    else:
        spawner.notebook_dir = "~"
        spawner.environment["JUPYTER_CONFIG_PATH"] = str(HERE / "student")


c.Spawner.pre_spawn_hook = course_settings
