"""`python -m grader ...`"""

import sys

# jsonschema loads rfc3987_syntax, whose grammar takes 1.5 s of CPU to build, to check the "iri" string format,
# which neither nbformat nor nbgrader uses. Without it jsonschema simply has no "iri" checker.
sys.modules.setdefault("rfc3987_syntax", None)

from grader.cli import main  # noqa: E402

sys.exit(main())
