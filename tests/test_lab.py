"""`make lab` serves JupyterLab on the course: chapters and exercises open, nbgrader's extension is there."""

from __future__ import annotations

import json
import re
import urllib.error
from collections.abc import Iterator

import pytest

from tests.conftest import REPO
from tests.e2e.lab_server import Lab, running_lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with running_lab(tmp_path_factory.mktemp("jupyter-runtime")) as server:
        yield server


def test_lab_page_is_served(lab: Lab) -> None:
    status, body = lab.get("/lab")
    assert status == 200 and b"JupyterLab" in body


@pytest.mark.parametrize(
    "path",
    sorted(str(p.relative_to(REPO)) for p in [*REPO.glob("chapters/*.ipynb"), *REPO.glob("exercises/*/*.ipynb")]),
)
def test_course_notebooks_open(lab: Lab, path: str) -> None:
    model = lab.json(f"/api/contents/{path}?content=1")
    assert model["type"] == "notebook"
    assert model["content"]["cells"], f"{path} opened with no cells"


def test_nbgrader_and_the_course_lab_extensions_are_installed(lab: Lab) -> None:
    _, body = lab.get("/lab")
    page_config = re.search(rb'<script id="jupyter-config-data" type="application/json">(.*?)</script>', body, re.S)
    names = {extension["name"] for extension in json.loads(page_config.group(1))["federated_extensions"]}
    assert {"@jupyter/nbgrader", "nn-module-course"} <= names, names


@pytest.mark.parametrize("path", ["../../../etc/passwd", "/etc/passwd", "chapters", "no/such.ipynb"])
def test_validate_reads_only_notebooks_under_the_course(lab: Lab, path: str) -> None:
    """The Validate button's server side (grader.validate_button) answers 404 for anything but a file in the root."""
    with pytest.raises(urllib.error.HTTPError) as refused:
        lab.request("/course/validate", method="POST", body={"path": path})
    assert refused.value.code == 404


def test_validate_on_a_chapter_says_it_is_no_exercise(lab: Lab) -> None:
    _, body = lab.request("/course/validate", method="POST", body={"path": "chapters/01_what_the_object_holds.ipynb"})
    answer = json.loads(body)
    assert answer == {"passed": False, "message": answer["message"]} and "no graded test cell" in answer["message"]


def test_jupyter_news_is_never_asked_for(lab: Lab) -> None:
    """JupyterLab asks in a toast whether to fetch Jupyter's news while `fetchNews` is "none" (its default); the
    course's jupyter_config/ sets it to "false", and no update check either."""
    schema = lab.json("/lab/api/settings/@jupyterlab/apputils-extension:notification")["schema"]["properties"]
    assert schema["fetchNews"]["default"] == "false" and schema["checkForUpdates"]["default"] is False
