"""The server side of the course's Validate button (jupyter_config/labextensions/nn-module-course), a Jupyter server
extension: POST /course/validate {"path": NOTEBOOK} runs the notebook as `grader check` does and answers
{"passed": bool, "message": text}: each failing test cell with its message first, then what the visible tests
earn and how many points the hidden tests decide when the exercise is graded. nbgrader's own Validate says
"Success! Your notebook passes all the tests." whatever the hidden tests would give.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web

from grader.check import check, check_report
from grader.course import CourseError


class ValidateHandler(APIHandler):
    """Validate one notebook under the server's root folder."""

    @web.authenticated
    async def post(self) -> None:
        body = self.get_json_body() or {}
        root = Path(self.settings["server_root_dir"]).expanduser().resolve()
        target = (root / str(body.get("path", ""))).resolve()
        if not target.is_relative_to(root) or not target.is_file():
            raise web.HTTPError(404, "no such notebook")
        try:
            checked = await asyncio.to_thread(check, target)
        except CourseError as error:
            self.finish(json.dumps({"passed": False, "message": str(error)}))
            return
        self.finish(json.dumps({"passed": checked.passed, "message": check_report(checked)}))


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "grader.validate_button"}]


def _load_jupyter_server_extension(serverapp: object) -> None:
    web_app = serverapp.web_app
    route = url_path_join(web_app.settings["base_url"], "course/validate")
    web_app.add_handlers(".*$", [(route, ValidateHandler)])
