"""The documentation cannot rot silently: README.md and every guide under docs/ are read as a newcomer would follow
them. Every relative link leads to a file that exists (and to a heading of it, where it names one), and every
command they show, in a code block or inline, is one the course has: a `grader` subcommand whose options parse with
the grader's own argparse parser (nothing is run), a target of the Makefile, or a script or module of the course
that defines the options shown."""

from __future__ import annotations

import argparse
import importlib.util
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.cli import _parser

REPO = Path(__file__).resolve().parent.parent
GUIDES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^[ \t]*```[^\n]*\n(.*?)^[ \t]*```", re.S | re.M)  # fences may be indented (in a list item)
INLINE = re.compile(r"`([^`]+)`")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$", re.M)
PLACEHOLDER = re.compile(r"^[A-Z][A-Z_]*$")  # S, N, URL: a value the reader fills in


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = heading.replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {anchor(heading) for heading in HEADING.findall(text)}


def links(path: Path) -> Iterator[str]:
    """The targets of a page's markdown links, outside code (a link shown as code is an example)."""
    text = INLINE.sub("", FENCE.sub("", path.read_text(encoding="utf-8")))
    for target in LINK.findall(text):
        if not re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: are not checked here
            yield target


def link_problem(source: Path, target: str) -> str | None:
    """Why a relative link of `source` does not resolve, or None."""
    file, _, fragment = target.partition("#")
    name = source.relative_to(REPO) if source.is_relative_to(REPO) else source.name
    destination = (source.parent / file).resolve() if file else source
    if not destination.exists():
        return f"{name}: link {target}: no such file"
    if fragment and destination.suffix == ".md" and fragment not in anchors(destination):
        return f"{name}: link {target}: no heading #{fragment} in {destination.name}"
    return None


def shown_commands(path: Path) -> Iterator[tuple[str, bool]]:
    """Every command line of a code block (continuations joined, comments dropped, `&&` and `;` split), which must
    be complete, and every inline code span, which may name a command without its required arguments."""
    text = path.read_text(encoding="utf-8")
    for block in FENCE.findall(text):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            for command in re.split(r"&&|;|\|", re.sub(r"(^|\s)#.*", "", line)):
                yield command, True
    for span in INLINE.findall(FENCE.sub("", text)):
        yield " ".join(span.split()), False


def parsed(command: str) -> tuple[str, list[str]] | None:
    """("grader", its arguments) or ("make", its targets) for a command the course provides, else None."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):  # NAME=value before the command
        words = words[1:]
    if not words:
        return None
    if words[0] == "make":
        return "make", [word for word in words[1:] if "=" not in word and not word.startswith("-")]
    if Path(words[0]).name == "grader" and not words[0].endswith("/"):
        return "grader", words[1:]
    if re.fullmatch(r"python(3(\.\d+)?)?", Path(words[0]).name):
        if words[1:3] == ["-m", "grader"]:
            return "grader", words[3:]
        if words[1:2] == ["-m"] and len(words) > 2:
            return "python", words[2:]
        if len(words) > 1 and words[1].endswith(".py"):
            return "python", words[1:]
    return None


def script_problem(arguments: list[str]) -> str | None:
    """Why a course script or module shown with options (`benchmarks/autograde.py --students 24`) does not exist or
    does not define one of those options."""
    name, options = arguments[0], [word.split("=")[0] for word in arguments[1:] if word.startswith("--")]
    if name.endswith(".py"):
        path = REPO / name
    else:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            return f"python -m {name}: no such module"
        path = Path(spec.origin)
    if not path.is_file():
        return f"{name}: no such file"
    text = path.read_text(encoding="utf-8")
    return next((f"{name}: no option {option}" for option in options if f'"{option}"' not in text), None)


class Refused(Exception):
    """What the grader's parser says of arguments it refuses."""


def refuse(message: str) -> None:
    raise Refused(message)


def grader_problem(arguments: list[str], complete: bool = True) -> str | None:
    """Why the grader's parser refuses these arguments ([optional] brackets and `...` of a usage line allowed). An
    incomplete command (`grader student-edition` named in a sentence) may lack its required arguments; it may also
    be the tool itself (`grader`, `grader COMMAND`)."""
    words = [word.strip("[]") for word in arguments if word.strip("[]") not in ("", "...")]
    parser = _parser()
    commands = subcommands(parser)
    if not complete and (not words or words == ["COMMAND"]):
        return None
    if not words or words[0] not in commands:
        return f"no grader command {words[:1]}"
    typed = {
        option: action.type
        for action in commands[words[0]]._actions
        for option in action.option_strings
        if action.type in (int, float)
    }
    words = [
        "1" if PLACEHOLDER.match(word) and typed.get(before) else word
        for before, word in zip(["", *words], words, strict=False)
    ]
    parser.error = commands[words[0]].error = refuse  # type: ignore[method-assign]
    commands[words[0]].allow_abbrev = False  # a guide shows an option's full name
    try:
        parser.parse_args(words)
    except Refused as refusal:
        if complete or not str(refusal).startswith("the following arguments are required"):
            return f"grader {' '.join(words)}: {refusal}"
    return None


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    [commands] = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    return commands.choices


def make_targets() -> set[str]:
    """The targets of the Makefile and the files it includes."""
    targets, pending = set(), [REPO / "Makefile"]
    while pending:
        text = pending.pop().read_text(encoding="utf-8")
        targets |= set(re.findall(r"^([A-Za-z][\w.-]*)\s*:(?!=)", text, re.M))
        pending += [REPO / name for name in re.findall(r"^include\s+(\S+)", text, re.M)]
    return targets


def test_every_guide_is_reachable_from_the_readme() -> None:
    linked = {(REPO / target.partition("#")[0]).resolve() for target in links(REPO / "README.md")}
    assert [guide.name for guide in GUIDES[1:] if guide.resolve() not in linked] == []
    assert len(GUIDES) >= 6


@pytest.mark.parametrize("guide", GUIDES, ids=lambda path: path.name)
def test_every_relative_link_resolves(guide: Path) -> None:
    problems = [problem for target in links(guide) if (problem := link_problem(guide, target))]
    assert problems == []


@pytest.mark.parametrize("guide", GUIDES, ids=lambda path: path.name)
def test_every_command_shown_exists_with_its_options(guide: Path) -> None:
    targets = make_targets()
    problems = []
    for command, complete in shown_commands(guide):
        match parsed(command):
            case ("grader", arguments):
                problems.append(grader_problem(arguments, complete))
            case ("python", arguments):
                problems.append(script_problem(arguments))
            case ("make", names):
                problems += [f"make {name}: no such target" for name in names if name not in targets]
    assert [problem for problem in problems if problem] == []


def test_the_guides_show_every_grader_command_and_the_main_make_targets() -> None:
    """The checks above cannot pass by finding nothing."""
    found = [parsed(command) for guide in GUIDES for command, _ in shown_commands(guide)]
    shown = {arguments[0] for kind, arguments in filter(None, found) if kind == "grader" and arguments}
    assert shown >= set(subcommands(_parser()))
    made = {name for kind, names in filter(None, found) if kind == "make" for name in names}
    assert made >= {"lab", "test", "outputs", "mutation", "hub", "hub-proxy", "venv"}


def test_the_checks_refuse_what_does_not_exist(tmp_path: Path) -> None:
    assert grader_problem(["release", "--check"]) is None
    assert grader_problem(["autograde", "SUBMISSIONS", "--workers", "N", "--timeout", "S"]) is None
    assert grader_problem(["release", "--chek"]) is not None
    assert grader_problem(["feedback", "--show-hidden"]) is not None
    assert grader_problem(["autograde", "class.zip", "--workers", "many"]) is not None
    assert grader_problem(["publish"]) is not None
    assert grader_problem(["student-edition"], complete=False) is None
    assert grader_problem(["student-edition"]) is not None
    assert grader_problem(["student-edition", "--into", "DIR"], complete=False) is not None
    assert script_problem(["benchmarks/autograde.py", "--students", "24"]) is None
    assert script_problem(["benchmarks/autograde.py", "--pupils", "24"]) is not None
    assert script_problem(["benchmarks/nonesuch.py"]) is not None
    assert script_problem(["benchmarks.mutation", "--assignment", "ex08"]) is None
    assert "nonesuch" not in make_targets() and "lab" in make_targets()
    page = tmp_path / "page.md"
    page.write_text("# A title\n\n[ok](page.md#a-title) [gone](nowhere.md) [bad](page.md#no-such)\n")
    assert [link_problem(page, target) is None for target in links(page)] == [True, False, False]
