"""Driving JupyterLab 4 in a real browser, and judging what a student sees.

The page is started with `--LabApp.expose_app_in_browser=True`, so `window.jupyterapp` is the JupyterLab application;
the notebook is read through its widgets (`panel.content.widgets`, each with its `model` and its DOM `node`).

DOM facts this relies on (JupyterLab 4.6, nbgrader 0.9.6):
- a code cell's prompt, `.jp-InputPrompt`, reads `[*]:` while the cell is queued or running;
- outputs render as `.jp-OutputArea-output`; an error *and* a stderr stream both carry
  `data-mime-type="application/vnd.jupyter.stderr"`, so errors are told apart through the model (`output_type`);
- a mermaid fence in a markdown cell becomes `.jp-RenderedMermaid > figure > img[src^="data:image/svg+xml,"]`,
  or `.jp-RenderedMermaid.jp-mod-warning` holding mermaid's error message when the diagram does not parse;
- the course's Validate button (jupyter_config/labextensions/nn-module-course, in place of nbgrader's) is
  `jp-button.validate-button` in the notebook toolbar; its result is a dialog whose body is `#validation-message`,
  classed `validation-success` or `validation-failed`, holding the grader's report (grader.check.check_report).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.e2e.lab_server import Lab

OPEN_TIMEOUT_MS = 90_000  # page load, kernel start
RUN_TIMEOUT_MS = 240_000  # restart and run all on two busy cores
MERMAID_TIMEOUT_MS = 30_000
VALIDATE_TIMEOUT_MS = 240_000
SETTLE_MS = 3_000  # how long the kernel must stay idle with cells left unrun before a run counts as stopped

VALIDATE_SUCCESS = "The visible tests pass."
VALIDATE_FAILED = " fails"
VALIDATE_HIDDEN = re.compile(r"visible tests: ([\d.]+) of ([\d.]+) points; ([\d.]+) more points are decided by hidden")

MERMAID_FENCE = re.compile(r"^[ \t]*(```|~~~)[ \t]*mermaid\b", re.M)

# Defined on every page before JupyterLab's own scripts run.
INIT_SCRIPT = """
window.e2eNotebook = (path) => {
  const app = window.jupyterapp;
  if (!app) return null;
  for (const widget of app.shell.widgets('main')) {
    if (widget.context && widget.context.path === path && widget.content && widget.sessionContext) return widget;
  }
  return null;
};
"""

_READY = """([path, kernelIdle]) => {
  const panel = window.e2eNotebook(path);
  if (!panel || !panel.context.isReady) return false;
  if (!kernelIdle) return true;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  return !!kernel && kernel.status === 'idle';
}"""

_START_RUN_ALL = """async (path) => {
  const panel = window.e2eNotebook(path);
  await panel.sessionContext.ready;
  window.jupyterapp.shell.activateById(panel.id);
  window.e2eRestarted = false;
  window.e2eSettledSince = null;
  panel.sessionContext.statusChanged.connect((_, status) => {
    if (['restarting', 'autorestarting', 'starting'].includes(status)) window.e2eRestarted = true;
  });
  // Outputs and counts are committed in the chapters: clear them so that everything seen afterwards is from this run.
  await window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs');
  // Not awaited: it waits for the "Restart Kernel?" dialog, which the test clicks.
  window.jupyterapp.commands.execute('runmenu:restart-and-run-all');
}"""

# True once the restarted kernel has run every non-empty code cell, or has stayed idle with nothing queued for
# SETTLE_MS (a cell raised and the rest of the run was cancelled).
_RUN_FINISHED = """([path, settleMs]) => {
  const panel = window.e2eNotebook(path);
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const code = panel.content.widgets.filter((cell) => cell.model.type === 'code');
  const pending = code.some((cell) => {
    const prompt = cell.node.querySelector('.jp-InputPrompt');
    return (prompt && prompt.textContent.includes('*')) || cell.model.executionState === 'running';
  });
  if (!window.e2eRestarted || !kernel || kernel.status !== 'idle' || pending) {
    window.e2eSettledSince = null;
    return false;
  }
  const allRan = code.every((cell) => cell.model.sharedModel.getSource().trim() === ''
    || cell.model.executionCount !== null);
  if (allRan) return true;
  if (window.e2eSettledSince === null) window.e2eSettledSince = Date.now();
  return Date.now() - window.e2eSettledSince > settleMs;
}"""

_MERMAID_SETTLED = """([path, fence]) => {
  const panel = window.e2eNotebook(path);
  return panel.content.widgets.every((cell) => {
    if (cell.model.type !== 'markdown') return true;
    const wanted = (cell.model.sharedModel.getSource().match(new RegExp(fence, 'gm')) || []).length;
    if (wanted === 0) return true;
    const diagrams = [...cell.node.querySelectorAll('.jp-RenderedMermaid')];
    return diagrams.length >= wanted && diagrams.every((el) => el.classList.contains('jp-mod-warning')
      || el.querySelector('svg') || [...el.querySelectorAll('img')].some((img) => img.complete));
  });
}"""

_REPORT = """(path) => {
  const panel = window.e2eNotebook(path);
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const cells = panel.content.widgets.map((cell, index) => {
    const model = cell.model;
    const info = {index, type: model.type, source: model.sharedModel.getSource(),
                  tags: model.getMetadata('tags') || []};
    if (model.type === 'code') {
      info.execution_count = model.executionCount;
      info.outputs = model.outputs.toJSON().map((out) => ({output_type: out.output_type, name: out.name || null,
        ename: out.ename || null, evalue: out.evalue || null}));
      info.stderr_nodes = cell.node.querySelectorAll(
        '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]').length;
    }
    if (model.type === 'markdown') {
      info.rendered = cell.rendered;
      info.mermaid = [...cell.node.querySelectorAll('.jp-RenderedMermaid')].map((el) => {
        const img = el.querySelector('figure > img');
        const imgSvg = !!img && img.src.startsWith('data:image/svg+xml')
          && decodeURIComponent(img.src).includes('<svg') && img.complete && img.naturalWidth > 0;
        return {warning: el.classList.contains('jp-mod-warning'), svg: imgSvg || !!el.querySelector('svg'),
                text: el.classList.contains('jp-mod-warning')
                  ? (el.querySelector('.jp-RenderedMermaid-Details > pre') || el).textContent.slice(0, 400) : ''};
      });
    }
    return info;
  });
  return {path, kernel: kernel ? kernel.status : null, cells};
}"""


def start_lab_page(page: Page, lab: Lab) -> None:
    """Load JupyterLab with a fresh workspace (nothing reopened) and wait until it is restored."""
    page.goto(lab.url("/lab?reset"))
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.commands.hasCommand('docmanager:open')",
        timeout=OPEN_TIMEOUT_MS,
        polling=250,
    )
    page.evaluate("() => window.jupyterapp.restored.then(() => window.jupyterapp.shell.collapseLeft())")


def open_notebook(page: Page, path: str, kernel_idle: bool = True) -> None:
    """File > Open `path` (relative to the served root); wait until it is loaded and, unless told not to, until its
    kernel is idle (nbgrader's Validate runs on the server, it does not need the notebook's kernel)."""
    page.evaluate("(path) => window.jupyterapp.commands.execute('docmanager:open', {path})", path)
    page.wait_for_function(_READY, arg=[path, kernel_idle], timeout=OPEN_TIMEOUT_MS, polling=250)


def close_everything(page: Page) -> bool:
    """Dismiss dialogs, close every main-area tab without saving; True if the tab is left clean."""
    for _ in range(3):
        if not page.locator(".jp-Dialog").count():
            break
        page.keyboard.press("Escape")
        page.wait_for_timeout(200)
    return page.evaluate(
        """async () => {
      for (const widget of [...window.jupyterapp.shell.widgets('main')]) {
        if (widget.context && widget.context.model) widget.context.model.dirty = false;  // no "Save changes?"
        widget.close();
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      // JupyterLab opens a Launcher in an empty main area.
      const left = [...window.jupyterapp.shell.widgets('main')].filter((widget) => !widget.id.startsWith('launcher'));
      return left.length === 0 && !document.querySelector('.jp-Dialog');
    }"""
    )


def restart_and_run_all(page: Page, path: str) -> None:
    """Kernel > Restart Kernel and Run All Cells, confirm the dialog, wait until the run has finished or stopped."""
    page.evaluate(_START_RUN_ALL, path)
    dialog = page.locator(".jp-Dialog", has_text="Restart Kernel?")
    dialog.locator(".jp-mod-accept").click(timeout=OPEN_TIMEOUT_MS)
    page.wait_for_function(_RUN_FINISHED, arg=[path, SETTLE_MS], timeout=RUN_TIMEOUT_MS, polling=250)


def notebook_report(page: Page, path: str) -> dict:
    """What the open notebook shows: per cell its source, tags, execution count, outputs and mermaid diagrams."""
    try:
        page.wait_for_function(
            _MERMAID_SETTLED, arg=[path, MERMAID_FENCE.pattern], timeout=MERMAID_TIMEOUT_MS, polling=250
        )
    except PlaywrightTimeoutError:
        pass  # reported by notebook_problems as a diagram that did not render
    return page.evaluate(_REPORT, path)


def notebook_problems(report: dict) -> list[str]:
    """Everything a student would see go wrong after Restart Kernel and Run All Cells, one line each."""
    problems = []
    counts = []
    for cell in report["cells"]:
        where = f"{report['path']} cell {cell['index']}"
        if cell["type"] == "code":
            tagged = "raises-exception" in cell["tags"]
            errors = [out for out in cell["outputs"] if out["output_type"] == "error"]
            if cell["execution_count"] is None:
                if cell["source"].strip():
                    problems.append(f"{where}: did not run")
                continue
            counts.append(cell["execution_count"])
            for error in errors if not tagged else ():
                problems.append(f"{where}: raised {error['ename']}: {error['evalue']} (no raises-exception tag)")
            if tagged and not errors:
                problems.append(f"{where}: tagged raises-exception but raised nothing")
            if errors and cell["stderr_nodes"] < len(errors):
                problems.append(f"{where}: error in the model but not displayed")
        elif cell["type"] == "markdown":
            wanted = len(MERMAID_FENCE.findall(cell["source"]))
            if not wanted:
                continue
            if not cell["rendered"]:
                problems.append(f"{where}: markdown cell with a mermaid block is not rendered")
                continue
            drawn = [d for d in cell["mermaid"] if d["svg"] and not d["warning"]]
            for diagram in cell["mermaid"]:
                if diagram["warning"]:
                    first = " ".join(diagram["text"].split())[:200]
                    problems.append(f"{where}: mermaid block did not render: {first}")
            if len(drawn) < wanted and not any(d["warning"] for d in cell["mermaid"]):
                problems.append(f"{where}: {wanted} mermaid block(s), {len(drawn)} rendered as SVG")
    if counts != list(range(1, len(counts) + 1)):
        problems.append(f"{report['path']}: execution counts {counts} are not 1..N top to bottom in a fresh kernel")
    return problems


# Per code cell: whether it has outputs in the model, and whether any of them is on screen (or its collapsed bar).
_SHOWN = """(path) => window.e2eNotebook(path).content.widgets.map((cell) => cell.model.type !== 'code' ? null : {
  outputs: cell.model.outputs.length > 0,
  visible: [...cell.node.querySelectorAll('.jp-OutputArea-output, .jp-OutputPlaceholder')]
    .some((node) => node.offsetHeight > 0),
})"""


def predictions(notebook: Path) -> list[int]:
    """Indexes of the code cells right after a "Before running:" question."""
    cells = nbformat.read(notebook, 4).cells
    return [i + 1 for i, cell in enumerate(cells) if cell.cell_type == "markdown" and "Before running:" in cell.source]


def answers_on_screen(page: Page, path: str, asked: list[int]) -> tuple[list[int], list[int]]:
    """Of an open chapter: the prediction cells (`asked`) whose output is on screen, and the other cells with
    outputs that are not on screen."""
    shown = page.evaluate(_SHOWN, path)
    assert all(shown[i]["outputs"] for i in asked), "every answer is there, only hidden"
    leaked = [i for i in asked if shown[i]["visible"]]
    missing = [i for i, cell in enumerate(shown) if cell and cell["outputs"] and i not in asked and not cell["visible"]]
    return leaked, missing


def screenshot(page: Page, target: Path) -> None:
    """The notebook as the student sees it, scrolled to its first diagram if it has one."""
    target.parent.mkdir(parents=True, exist_ok=True)
    page.evaluate(
        """() => {
      const diagram = document.querySelector('.jp-RenderedMermaid');
      if (diagram) diagram.closest('.jp-Cell').scrollIntoView({block: 'start'});
    }"""
    )
    page.screenshot(path=str(target))


def set_cell_source_by_typing(page: Page, path: str, index: int, text: str) -> str:
    """Click into cell `index`'s editor, select all, type `text`; return the cell's source as the model now has it.

    `insert_text` types the text as one input event, so CodeMirror's auto-indent and bracket closing (which would
    double the indentation of every typed line) do not apply, as with a paste.
    """
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    cell.locator(".cm-content").click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.insert_text(text)
    page.keyboard.press("Escape")  # back to command mode
    return page.evaluate(
        "([path, index]) => window.e2eNotebook(path).content.model.cells.get(index).sharedModel.getSource()",
        [path, index],
    )


def validate(page: Page) -> tuple[str, str]:
    """Press the Validate button; return the result's class list and text, then close the dialog."""
    page.locator(".jp-NotebookPanel-toolbar .validate-button").click()
    message = page.locator("#validation-message")
    message.wait_for(timeout=VALIDATE_TIMEOUT_MS)
    classes, text = message.get_attribute("class") or "", message.inner_text()
    page.locator(".jp-Dialog", has=message).locator(".jp-mod-accept").click()
    message.wait_for(state="detached")
    return classes, text
