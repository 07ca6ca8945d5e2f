"""The docs' own checks, cheap and on every run: the README stays a front
door (short, with the test command CI runs), every setting is in the
settings reference, every package and test folder is on the map of the
code, and no relative link of the README or docs/ is broken."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_MAX_LINES = 250
PACKAGES = ("aggregates", "placement", "dashboard", "config")

# [text](target) and ![alt](target), the target up to a space or ")".
MARKDOWN_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def markdown_files():
    return [README, *sorted(DOCS.rglob("*.md"))]


def without_code(text):
    """The text without fenced blocks and inline code, where brackets are no links."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    return {slug(heading) for heading in HEADING.findall(FENCE.sub("", path.read_text()))}


def broken_links(path, root=ROOT):
    """The relative links of a markdown file whose file (or heading) does not exist."""
    broken = []
    for target in MARKDOWN_LINK.findall(without_code(path.read_text())):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            continue  # http:, https:, mailto:
        file_part, _, fragment = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            broken.append(f"{path.relative_to(root)}: {target} (no such file)")
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            broken.append(f"{path.relative_to(root)}: {target} (no such heading)")
    return broken


def test_every_relative_markdown_link_resolves():
    broken = [problem for path in markdown_files() for problem in broken_links(path)]
    assert broken == []


def test_a_broken_link_is_caught(tmp_path):
    """The check above can fail: a missing file, a missing heading."""
    (tmp_path / "there.md").write_text("# A heading\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md#a-heading) [gone](gone.md) [no heading](there.md#nope) "
        "[web](https://example.org/x.md) `[code](not-a-link.md)`\n"
    )
    problems = [problem.split(": ", 1)[1] for problem in broken_links(page, root=tmp_path)]
    assert problems == ["gone.md (no such file)", "there.md#nope (no such heading)"]


def test_readme_is_a_front_door():
    lines = README.read_text().count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines: move the detail into docs/"


def ci_test_command():
    """The command .ci/run runs as the README's test command (the body of run_tests)."""
    body = re.search(r"^run_tests\(\) \{\n(.*?)\n\}", (ROOT / ".ci" / "run").read_text(), re.MULTILINE | re.DOTALL)
    assert body, ".ci/run defines run_tests() { ... }"
    return body.group(1).strip()


def test_readme_test_command_is_the_one_ci_runs():
    command = ci_test_command()
    assert command.startswith("python3 -m venv .venv")
    assert command in README.read_text().splitlines(), f"README.md's test command must read, verbatim:\n{command}"


def settings_read_from_the_environment():
    source = (ROOT / "config" / "settings.py").read_text()
    return set(re.findall(r"""(?:environ\.get\(|environ\[|env_int\(|env_bool\()\s*["']([A-Z][A-Z0-9_]*)["']""", source))


def test_every_setting_is_in_the_settings_reference():
    names = settings_read_from_the_environment()
    assert len(names) > 50, "the pattern still finds config/settings.py's variables"
    table_rows = [line for line in (DOCS / "configuration.md").read_text().splitlines() if line.startswith("| `")]
    documented = {name for row in table_rows for name in re.findall(r"`([A-Z][A-Z0-9_]*)`", row.split("|")[1])}
    assert sorted(names - documented) == []


def names_folder(text, folder):
    """Whether ``text`` names the folder in backticks, as `name/` or `parent/name/...`."""
    return re.search(r"`(?:[^`\s]*/)?" + re.escape(folder.name) + r"/[^`\s]*`", text) is not None


def section(text, heading):
    """The text under a heading, up to the next heading."""
    match = re.search(r"^#+ " + re.escape(heading) + r"\n(.*?)(?=^#|\Z)", text, re.MULTILINE | re.DOTALL)
    assert match, f"a heading {heading!r}"
    return match.group(1)


def test_architecture_maps_every_package_and_test_folder():
    """Every folder of Corral's packages (but __pycache__) is named in
    docs/architecture.md, and every test folder in its tests section."""
    text = (DOCS / "architecture.md").read_text()
    package_folders = [
        path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*"))
        if path.is_dir() and "__pycache__" not in path.parts
    ]
    test_folders = [path for path in sorted((ROOT / "tests").iterdir()) if (path / "__init__.py").exists()]
    tests_section = section(text, "`tests/`")
    missing = [str(path.relative_to(ROOT)) for path in package_folders if not names_folder(text, path)]
    missing += [str(path.relative_to(ROOT)) for path in test_folders if not names_folder(tests_section, path)]
    assert missing == [], "docs/architecture.md does not name these folders (as `name/`): " + ", ".join(missing)
