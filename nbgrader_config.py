# nbgrader reads this file from the course root (the CLI, JupyterLab's Formgrader and Validate button).
# The settings themselves live with the grader package.
c = get_config()  # noqa: F821
load_subconfig("grader/nbgrader_config.py")  # noqa: F821
