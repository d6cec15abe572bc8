// The course's JupyterLab extension, written by hand: no build step, no package of its own to install.
//
// JupyterLab loads a prebuilt extension as a module-federation container: this script defines
// window._JUPYTERLAB['nn-module-course'] with init(shareScope) and get(module). The modules it needs
// (@jupyterlab/apputils, @jupyterlab/services, @lumino/widgets) are JupyterLab's own, taken from the share scope.
//
// - "./extension": the notebook toolbar's Validate button, in place of nbgrader's (jupyter_config/labconfig turns
//   that one off). It saves the notebook, asks the server (grader/validate_button.py, which runs it as
//   `grader check` does) and shows the answer: the failing tests' messages first, what the visible tests earn,
//   and how many points the hidden tests decide when the exercise is graded.
// - "./style": course.css: a prediction's answer stays hidden until the student opens it, however the notebook is
//   run (JupyterLab reopens collapsed outputs on every run).
(function () {
  const NAME = 'nn-module-course';
  const here = document.currentScript.src.replace(/[^/]*$/, '');
  let scope = null;

  // One of JupyterLab's shared modules (its core packages are singletons: the newest version offered).
  async function shared(name) {
    const offered = scope && scope[name];
    if (!offered) {
      throw new Error(`${NAME}: JupyterLab shares no ${name}`);
    }
    const newest = Object.keys(offered).sort((a, b) =>
      a.localeCompare(b, undefined, { numeric: true })
    ).pop();
    return (await offered[newest].get())();
  }

  function report(Widget, result) {
    const node = document.createElement('div');
    node.id = 'validation-message';
    node.classList.add(result.passed ? 'validation-success' : 'validation-failed');
    const text = document.createElement('pre');
    text.textContent = result.message; // never HTML: it quotes the student's own errors
    node.append(text);
    return new Widget({ node });
  }

  async function validate(panel, button, modules) {
    const { apputils, services, widgets } = modules;
    button.props.label = 'Validating...';
    button.enabled = false;
    button.update();
    let result;
    try {
      await panel.context.save();
      const settings = services.ServerConnection.makeSettings();
      const response = await services.ServerConnection.makeRequest(
        settings.baseUrl + 'course/validate',
        { method: 'POST', body: JSON.stringify({ path: panel.context.path }) },
        settings
      );
      result = await response.json();
      if (!response.ok) {
        result = { passed: false, message: result.message || `the server answered ${response.status}` };
      }
    } catch (error) {
      result = { passed: false, message: `Cannot validate: ${error}` };
    } finally {
      button.props.label = 'Validate';
      button.enabled = true;
      button.update();
    }
    await apputils.showDialog({
      title: 'Validation Results',
      body: report(widgets.Widget, result),
      buttons: [apputils.Dialog.okButton()]
    });
  }

  const plugin = {
    id: `${NAME}:validate`,
    description: "The Validate button: the notebook's visible tests, and what the hidden tests decide.",
    autoStart: true,
    activate: async (app) => {
      const modules = {
        apputils: await shared('@jupyterlab/apputils'),
        services: await shared('@jupyterlab/services'),
        widgets: await shared('@lumino/widgets')
      };
      app.docRegistry.addWidgetExtension('Notebook', {
        createNew: (panel) => {
          const button = new modules.apputils.ToolbarButton({
            className: 'validate-button',
            label: 'Validate',
            tooltip: 'Run the notebook and its visible tests',
            onClick: () => validate(panel, button, modules)
          });
          panel.toolbar.insertAfter('cellType', 'validate', button);
          return button;
        }
      });
    }
  };

  function style() {
    const link = document.createElement('link');
    link.rel = 'stylesheet';
    link.href = here + 'course.css';
    document.head.append(link);
    return {};
  }

  const modules = { './extension': () => ({ __esModule: true, default: plugin }), './style': style };
  window._JUPYTERLAB = window._JUPYTERLAB || {};
  window._JUPYTERLAB[NAME] = {
    init: (shareScope) => {
      scope = shareScope;
    },
    get: async (module) => {
      if (!(module in modules)) {
        throw new Error(`${NAME} has no module ${module}`);
      }
      return modules[module];
    }
  };
})();
