"""The documentation stays true: each check is a function of a repository folder returning what is
wrong with it (empty when nothing is), run on this repository and on a doctored copy that shows it
fails. Markdown is read by the parser /help/ uses (console.help.guides), so an anchor checked here is
the anchor a Git host and the console give the heading.

a. every relative link and `#anchor` of README.md and docs/*.md resolves;
b. every variable of .env.example is documented in docs/operations.md (as `NAME` in backticks);
c. every alert rule of deploy/prometheus/alerts.yml has a `runbook_url` naming the section
   `### <AlertName>` of docs/operations.md (the console serves it: `/help/operations/#<alertname>`);
d. README's set-up code block holds exactly the commands CI and a person run: `scripts/run` and
   `scripts/test`, the one .ci/run runs;
e. every pause reason (recovery.engine.decisions.Reason) has a heading `### <REASON>` in both user
   guides, the section the console's runbook links open (/help/#<reason>).
"""

import posixpath
import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

from console.help.guides import MARKDOWN, Slugger, headings, inline_text, links
from recovery.engine.decisions import Reason

REPO = Path(__file__).resolve().parents[2]
USER_GUIDES = ("docs/user-guide.md", "docs/user-guide.zh-Hans.md")
OPERATIONS = "docs/operations.md"
# Where an alert's runbook opens: the operations guide as the console serves it (/help/operations/);
# the host is the example one, replaced by the console's address when the rules are installed.
RUNBOOK_BASE = "https://console.warehouse.example/help/operations/#"
SETUP_COMMANDS = ["scripts/run", "scripts/test"]
ENV_LINE = re.compile(r"^(?:#\s?)?([A-Z][A-Z0-9_]*)=", re.MULTILINE)


def markdown_files(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def anchors(path: Path) -> set[str]:
    return {anchor for _, _, anchor in headings(path.read_text(encoding="utf-8"))}


# --- a. links and anchors ----------------------------------------------------------------------


def broken_links(root: Path) -> list[str]:
    """Every relative link or anchor of README.md and docs/*.md that leads nowhere: a file that does
    not exist, or an anchor that is no heading's (GitHub's slugs, a repeated heading's -1, -2)."""
    problems = []
    known: dict[Path, set[str]] = {}
    for source in markdown_files(root):
        if not source.is_file():
            continue
        for href in links(source.read_text(encoding="utf-8")):
            parts = urlsplit(href)
            if parts.scheme or parts.netloc:
                continue
            path, anchor = unquote(parts.path), unquote(parts.fragment)
            where = f"{source.relative_to(root)}: {href}"
            target = source if not path else Path(posixpath.normpath(source.parent / path))
            if not path.startswith("/") and not target.resolve().is_relative_to(root.resolve()):
                problems.append(f"{where}: outside the repository")
            elif path.startswith("/") or not target.exists():
                problems.append(f"{where}: no such file")
            elif anchor and target.suffix == ".md":
                if target not in known:
                    known[target] = anchors(target)
                if anchor not in known[target]:
                    problems.append(f"{where}: no heading with that anchor in {target.relative_to(root)}")
    return problems


# --- b. variables ------------------------------------------------------------------------------


def code_spans(text: str) -> set[str]:
    return {child.content for token in MARKDOWN.parse(text) for child in token.children or ()
            if child.type == "code_inline"}


def undocumented_variables(root: Path) -> list[str]:
    """Every variable .env.example lists (`NAME=` or `# NAME=`) that docs/operations.md does not
    name in backticks (`NAME`, or `NAME=value`)."""
    names = dict.fromkeys(ENV_LINE.findall((root / ".env.example").read_text(encoding="utf-8")))
    guide = root / OPERATIONS
    if not guide.is_file():
        return [f"{OPERATIONS} is missing: {len(names)} variables of .env.example are documented nowhere"]
    spans = code_spans(guide.read_text(encoding="utf-8"))
    named = {span.split("=", 1)[0].strip() for span in spans}
    return [f"{name} (.env.example) is not documented in {OPERATIONS}" for name in names if name not in named]


# --- c. alert runbooks -------------------------------------------------------------------------


def runbook_problems(root: Path) -> list[str]:
    """Every alert rule without a `runbook_url`, or whose URL is not the console's
    `/help/operations/#<the rule's name in lower case>` with that section in docs/operations.md."""
    rules = yaml.safe_load((root / "deploy/prometheus/alerts.yml").read_text(encoding="utf-8"))
    guide = root / OPERATIONS
    sections = anchors(guide) if guide.is_file() else set()
    problems = []
    for group in rules["groups"]:
        for rule in group["rules"]:
            if "alert" not in rule:
                continue
            name, url = rule["alert"], (rule.get("annotations") or {}).get("runbook_url")
            expected = f"{RUNBOOK_BASE}{name.lower()}"
            if url is None:
                problems.append(f"{name}: no runbook_url annotation")
            elif url != expected:
                problems.append(f"{name}: runbook_url is {url!r}, not {expected!r}")
            elif name.lower() not in sections:
                problems.append(f"{name}: {OPERATIONS} has no section `### {name}` (#{name.lower()})")
    return problems


# --- d. the set-up commands --------------------------------------------------------------------


def script_commands(path: Path) -> list[str]:
    """The commands of a shell script, less its comments and its shell set-up (set, cd)."""
    lines = [line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if line and not line.startswith(("set ", "cd "))]


def setup_problems(root: Path) -> list[str]:
    """README's first code block is its set-up: exactly `scripts/run` and `scripts/test` (a comment
    after each is fine), each an executable script of the repository, and .ci/run runs
    `scripts/test` and nothing else, so what CI proves is what the README tells a person to run."""
    fences = [t for t in MARKDOWN.parse((root / "README.md").read_text(encoding="utf-8")) if t.type == "fence"]
    if not fences:
        return ["README.md has no code block with the set-up commands"]
    block = [line.split("#", 1)[0].strip() for line in fences[0].content.splitlines()]
    commands = [line for line in block if line]
    problems = []
    if commands != SETUP_COMMANDS:
        problems.append(f"README.md's set-up block runs {commands}, not {SETUP_COMMANDS}")
    for command in commands:
        path = root / command.split()[0]
        if not path.is_file() or not path.stat().st_mode & 0o111:
            problems.append(f"README.md's set-up command {command!r} is not an executable script of the repository")
    ci = script_commands(root / ".ci/run")
    if ci != ["scripts/test"]:
        problems.append(f".ci/run runs {ci}, not README.md's test command ['scripts/test']")
    return problems


# --- e. a section per pause reason -------------------------------------------------------------


def missing_reason_sections(root: Path) -> list[str]:
    """Every pause reason without its heading (`### RECOVERY_JOB_MISSING`, anchor
    #recovery_job_missing) in each user guide."""
    problems = []
    for name in USER_GUIDES:
        guide = root / name
        if not guide.is_file():
            problems.append(f"{name} is missing")
            continue
        found = {(level, text) for level, text, _ in headings(guide.read_text(encoding="utf-8"))}
        problems += [f"{name}: no heading `### {r.value}`" for r in Reason if (3, r.value) not in found]
    return problems


# --- on this repository ------------------------------------------------------------------------
# (b), (c) and (e) need the guides docs/operations.md, docs/user-guide.md and
# docs/user-guide.zh-Hans.md, and (d) the README's new set-up block.


def test_every_link_and_anchor_of_the_docs_resolves():
    assert broken_links(REPO) == []


def test_every_variable_of_env_example_is_documented_in_the_operations_guide():
    assert undocumented_variables(REPO) == []


def test_every_alert_rule_has_a_runbook_section_in_the_operations_guide():
    assert runbook_problems(REPO) == []


def test_readme_sets_up_with_the_commands_ci_and_scripts_use():
    assert setup_problems(REPO) == []


def test_every_pause_reason_has_a_section_in_both_user_guides():
    assert missing_reason_sections(REPO) == []


# --- on doctored copies: each check fails when what it guards is removed -----------------------


@pytest.fixture
def copy(tmp_path):
    """A copy of the repository's documentation, its .env.example, alert rules and set-up scripts."""
    root = tmp_path / "repo"
    shutil.copytree(REPO / "docs", root / "docs")
    for name in ("README.md", ".env.example", "deploy/prometheus/alerts.yml", ".ci/run", "scripts/run",
                 "scripts/test", "scripts/bootstrap"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, root / name)
    return root


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def heading_lines(text: str) -> dict[str, int]:
    """The line (0-based) of each heading of a Markdown text, by its anchor."""
    slugger, tokens = Slugger(), MARKDOWN.parse(text)
    return {slugger.slug(inline_text(tokens[i + 1].children)): t.map[0]
            for i, t in enumerate(tokens) if t.type == "heading_open"}


def resolving_anchor_link(root: Path) -> tuple[Path, str, Path, int]:
    """The first link with an anchor that resolves: (its file, the link, its target, the heading's line)."""
    for source in markdown_files(root):
        for href in links(source.read_text(encoding="utf-8")):
            path, _, anchor = href.partition("#")
            target = source if not path else source.parent / path
            if anchor and not urlsplit(href).scheme and target.suffix == ".md" and target.is_file():
                line = heading_lines(target.read_text(encoding="utf-8")).get(anchor)
                if line is not None:
                    return source, href, target, line
    pytest.fail("no link with a resolving anchor in README.md or docs/")


def test_a_link_fails_when_its_heading_or_file_is_removed(copy):
    assert broken_links(copy) == broken_links(REPO)
    before = set(broken_links(copy))
    source, href, target, line = resolving_anchor_link(copy)
    lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
    target.write_text("".join(lines[:line] + lines[line + 1 :]), encoding="utf-8")
    removed = set(broken_links(copy)) - before
    assert f"{source.relative_to(copy)}: {href}: no heading with that anchor in {target.relative_to(copy)}" in removed
    with source.open("a", encoding="utf-8") as text:
        text.write("\nSee [the glossary](docs/no-such-guide.md).\n")
    assert set(broken_links(copy)) - before - removed == {
        f"{source.relative_to(copy)}: docs/no-such-guide.md: no such file"}


def test_links_resolve_as_on_a_git_host(tmp_path):
    write(tmp_path / "README.md", "See [a](docs/a.md#twice-1), [b](docs/a.md#暂停原因), [c](#readme), "
                                  "[d](https://example.com/#x), [e](docs/images/), [f](scripts/run)\n\n# README\n\n"
                                  "```\n[not a link](nowhere.md)\n```\n")
    write(tmp_path / "docs/a.md", "# Twice\n\n## Twice\n\n## 暂停原因\n\n[up](../README.md#readme) "
                                  "[self](#twice) [code](../console/x.py#L3)\n")
    write(tmp_path / "docs/images/.keep", "")
    write(tmp_path / "scripts/run", "")
    write(tmp_path / "console/x.py", "")
    assert broken_links(tmp_path) == []
    write(tmp_path / "docs/a.md", "# Twice\n\n## 暂停原因\n\n[up](../README.md#top) [out](../../etc/passwd)\n")
    assert broken_links(tmp_path) == [
        "README.md: docs/a.md#twice-1: no heading with that anchor in docs/a.md",
        "docs/a.md: ../README.md#top: no heading with that anchor in README.md",
        "docs/a.md: ../../etc/passwd: outside the repository",
    ]


def test_a_variable_fails_when_it_is_not_documented(copy):
    assert undocumented_variables(copy) == undocumented_variables(REPO)
    env, guide = copy / ".env.example", copy / OPERATIONS
    names = ENV_LINE.findall(env.read_text(encoding="utf-8"))
    if not guide.is_file():  # until the operations guide lands: a stub in the copy only
        write(guide, "# Operations guide\n\n" + "".join(f"- `{name}`\n" for name in names))
    before = set(undocumented_variables(copy))
    with env.open("a", encoding="utf-8") as text:
        text.write("\n# A new setting.\n# TIDY_NEW_SETTING=1\nOTHER_NEW_SETTING=2\n")
    missing = f" (.env.example) is not documented in {OPERATIONS}"
    documented = next(name for name in names if f"{name}{missing}" not in before)
    guide.write_text(re.sub(rf"`{documented}(=[^`]*)?`", documented, guide.read_text(encoding="utf-8")))
    assert set(undocumented_variables(copy)) - before == {
        f"{name}{missing}" for name in ("TIDY_NEW_SETTING", "OTHER_NEW_SETTING", documented)}


def test_a_variable_counts_as_documented_only_in_backticks(tmp_path):
    write(tmp_path / ".env.example", "# Comment.\n# DATABASE_URL=postgresql://x\nDEBUG=false\n# see FOO=1 below\n")
    write(tmp_path / OPERATIONS, "# Operations guide\n\n| `DATABASE_URL` | the database |\n\nDEBUG is described.\n")
    assert undocumented_variables(tmp_path) == [f"DEBUG (.env.example) is not documented in {OPERATIONS}"]
    write(tmp_path / OPERATIONS, "# Operations guide\n\n`DATABASE_URL`, and `DEBUG=false` in production.\n")
    assert undocumented_variables(tmp_path) == []


def stub_operations(root: Path, skip: str = "") -> None:
    """A stub operations guide (in the temporary copy only) with a section per alert rule."""
    names = re.findall(r"- alert: (\w+)", (root / "deploy/prometheus/alerts.yml").read_text(encoding="utf-8"))
    write(root / OPERATIONS, "# Operations guide\n\n## Runbooks\n\n"
          + "".join(f"### {name}\n\nWhat to check.\n\n" for name in names if name != skip))


def test_a_runbook_fails_when_its_section_or_annotation_is_removed(copy):
    stub_operations(copy)
    assert runbook_problems(copy) == []
    stub_operations(copy, skip="TidyWcsSilent")
    assert runbook_problems(copy) == [
        f"TidyWcsSilent: {OPERATIONS} has no section `### TidyWcsSilent` (#tidywcssilent)"]
    stub_operations(copy)
    rules = copy / "deploy/prometheus/alerts.yml"
    text = rules.read_text(encoding="utf-8")
    rules.write_text(text.replace(f'          runbook_url: "{RUNBOOK_BASE}tidywcssilent"\n', "")
                     .replace("operations/#tidyloglinesdropped", "operations/#loglinesdropped"))
    assert runbook_problems(copy) == [
        "TidyWcsSilent: no runbook_url annotation",
        f"TidyLogLinesDropped: runbook_url is '{RUNBOOK_BASE}loglinesdropped', "
        f"not '{RUNBOOK_BASE}tidyloglinesdropped'",
    ]


def test_the_set_up_fails_when_ci_or_the_readme_runs_something_else(copy):
    write(copy / "README.md", "# Product\n\n```sh\nscripts/run    # runs it\nscripts/test   # tests it\n```\n\n"
                              "```sh\nmake other\n```\n")
    assert setup_problems(copy) == []
    (copy / ".ci/run").write_text("#!/usr/bin/env bash\nset -euo pipefail\ncd x\nscripts/test --quick\n")
    assert setup_problems(copy) == [
        ".ci/run runs ['scripts/test --quick'], not README.md's test command ['scripts/test']"]
    shutil.copy2(REPO / ".ci/run", copy / ".ci/run")
    write(copy / "README.md", "# Product\n\n```sh\n./manage.py runserver\nscripts/test\n```\n")
    assert setup_problems(copy) == [
        "README.md's set-up block runs ['./manage.py runserver', 'scripts/test'], not ['scripts/run', 'scripts/test']",
        "README.md's set-up command './manage.py runserver' is not an executable script of the repository",
    ]


def test_a_pause_reason_fails_when_a_user_guide_lacks_its_section(copy):
    assert missing_reason_sections(copy) == missing_reason_sections(REPO)
    sections = "".join(f"### {r.value}\n\nWhat it means.\n\n" for r in Reason)
    write(copy / USER_GUIDES[0], f"# User guide\n\n## Pause reasons\n\n{sections}")
    write(copy / USER_GUIDES[1], f"# 用户指南\n\n## 暂停原因\n\n{sections}")
    assert missing_reason_sections(copy) == []
    demoted = sections.replace("### RECOVERY_JOB_MISSING", "## RECOVERY_JOB_MISSING")
    write(copy / USER_GUIDES[1], f"# 用户指南\n\n## 暂停原因\n\n{demoted}")
    (copy / USER_GUIDES[0]).unlink()
    assert missing_reason_sections(copy) == [f"{USER_GUIDES[0]} is missing",
                                             f"{USER_GUIDES[1]}: no heading `### RECOVERY_JOB_MISSING`"]
