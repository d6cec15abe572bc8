"""nbgrader made ready for this process: the same behaviour, without the work it repeats for every submission.

nbgrader opens a new gradebook (a new SQLAlchemy engine) many times per submission, asks the `alembic` command for
its schema head each time, asks the database whether each of its tables exists (one query per table) each time, and
validates every graded cell's metadata with `jsonschema.validate`, which checks the schema itself before each use.
Here the head is read once, engines are shared per URL (each keeps its compiled statements), the tables are looked
up with one query, the metadata schema is checked once, and SQLite gradebooks use write-ahead logging.
"""

from __future__ import annotations

import atexit
import functools
import os
import sys
import threading
import types
import warnings
from pathlib import Path


def ready_nbgrader() -> None:
    """Prepare nbgrader to run in this process, before it opens a gradebook (idempotent)."""
    scripts = str(Path(sys.executable).parent)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")  # for nbgrader's other alembic uses
    import nbgrader.api
    import nbgrader.nbgraderformat.common

    nbgrader.api.get_alembic_version = _alembic_head
    nbgrader.api.create_engine = _shared_engine
    metadata = nbgrader.api.Base.metadata
    if not hasattr(metadata.create_all, "__wrapped__"):
        metadata.create_all = functools.wraps(metadata.create_all)(functools.partial(_missing_tables, metadata))
    nbgrader.nbgraderformat.common.jsonschema = types.SimpleNamespace(validate=_validate)
    # nbgrader's gradebook triggers SQLAlchemy warnings about its own ORM use on every submission: not ours to fix.
    warnings.filterwarnings("ignore", message=r"Object of type <Submitted", module=r"nbgrader\..*")


@functools.cache
def _alembic_head() -> str:
    from alembic.config import Config as AlembicConfig
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import _temp_alembic_ini

    with _temp_alembic_ini("sqlite://") as ini:
        return ScriptDirectory.from_config(AlembicConfig(ini)).get_current_head()


_ENGINES: dict[tuple, object] = {}
_ENGINES_LOCK = threading.Lock()


def _shared_engine(url: str, **options: object):
    """One engine per gradebook URL for the whole process (nbgrader's close() only empties its pool), closed when
    the process exits (close_gradebooks)."""
    from sqlalchemy import create_engine, event

    key = (str(url), tuple(sorted(options.items())))
    with _ENGINES_LOCK:
        if not _ENGINES:
            atexit.register(_close_on_exit, os.getpid())
        if key not in _ENGINES:
            engine = create_engine(url, **options)
            engine.dispose = lambda *args, **kwargs: None  # shared: its pooled connections stay open for the next
            if engine.dialect.name == "sqlite":
                event.listen(engine, "connect", _sqlite_write_ahead)
            _ENGINES[key] = engine
        return _ENGINES[key]


def close_gradebooks() -> None:
    """Close the pooled connections of every gradebook this process opened: the last connection to a SQLite
    gradebook checkpoints it and removes its -wal and -shm files. A later use opens new ones."""
    with _ENGINES_LOCK:
        for engine in _ENGINES.values():
            type(engine).dispose(engine)


def _close_on_exit(pid: int) -> None:
    if os.getpid() == pid:  # a forked child never closes its parent's connections
        close_gradebooks()


def _missing_tables(metadata, bind, **options: object) -> None:
    """MetaData.create_all, which asks the database about each table in turn: here one query for all their names
    first, and nothing more when every table is there."""
    from sqlalchemy import inspect

    if not set(metadata.tables) <= set(inspect(bind).get_table_names()):
        metadata.__class__.create_all(metadata, bind=bind, **options)


def _sqlite_write_ahead(connection, _record) -> None:
    """WAL with synchronous=NORMAL: a commit survives the grader being killed, without an fsync per commit."""
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _validate(instance: object, schema: dict) -> None:
    """jsonschema.validate, with the schema's validator built (and the schema checked) once per schema."""
    import jsonschema

    validator = _validator(id(schema), schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
    if error is not None:
        raise error


_VALIDATORS: dict[int, object] = {}


def _validator(key: int, schema: dict):
    import jsonschema

    if key not in _VALIDATORS:
        kind = jsonschema.validators.validator_for(schema)
        kind.check_schema(schema)
        _VALIDATORS[key] = (schema, kind(schema))  # the schema is kept alive, so its id is never reused
    return _VALIDATORS[key][1]
