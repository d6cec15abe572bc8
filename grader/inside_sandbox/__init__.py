"""Code that runs inside the grading sandbox: the warm fork server and the cell runner of each child.

These modules import only the standard library and IPython (never the rest of grader/, which the sandbox does not
contain); the sandbox puts this folder, read-only, on the child's sys.path.
"""
