#!/usr/bin/env python3
"""Every citation of a document holds: the file it names exists, and so does the section.

Read in the source and documentation files of the tree (runtime/, spank_plugin/, tests/,
scripts/, docs/, benchmarks/, consoles/, cmake/, packaging/, sbatch_templates/ and the top
level), a comment's lines joined so that a citation may span them:
  - a named document and a quoted section: `README "Planner rules"`, `the README's "Loader"`,
    `docs/user-guide.md, "Streaming shards"`, `docs/admin-guide.md ("Build from source")`,
    `the admin guide, "Beside pyxis"`: the file has a heading (or a paragraph's bold lead-in,
    `**Build from source: the plugin alone.**`) that is the section or begins with it as
    whole words;
  - any path to a .md file of the tree (`runtime/capi/README.md`): the file exists (the team's
    shared folder, `../shared/`, is not the tree's);
  - a Markdown link (`[text](user-guide.md#flags)`, `(#profiles-and-caps)`): the file exists,
    and the anchor is one of its headings as GitHub spells it.

    citations_test.py [SOURCE_DIR]   (default: this checkout)
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[2]).resolve()
FOLDERS = ("runtime", "spank_plugin", "tests", "scripts", "docs", "benchmarks", "consoles",
           "cmake", "packaging", "sbatch_templates", ".ci")
SUFFIXES = {".cpp", ".hpp", ".h", ".c", ".cu", ".py", ".sh", ".md", ".txt", ".cmake", ".in",
            ".spec", ".html", ".lib", ".json", ".sbatch", ".conf", ".1", ""}
SKIP = ("tests/corpus/", "tests/support/data/")
NAMES = {"admin guide": "docs/admin-guide.md", "user guide": "docs/user-guide.md"}

DOC = (r"(?P<doc>(?<![\w/.-])(?:[\w.-]+/)*[\w.-]+\.md\b|\bREADME\b|"
       r"\b(?:admin|user)[ -]guide\b(?!\.md))")
SECTION = re.compile(DOC + r"""(?:'s)?,?\s*\(?\s*(?:section\s+)?["“](?P<section>[A-Za-z`][^"”\n]{0,80})["”]""")
# A path with a folder in it: a bare name (`planner.md`) in code is a link a page will hold.
PATH = re.compile(r"(?<![\w/.-])((?:\.\./)*(?:[\w.-]+/)+[\w.-]+\.md)\b")
LINK = re.compile(r"\]\((?P<target>[^()\s]*)\)")
# A comment's continuation: the newline and the next line's comment marker.
JOIN = re.compile(r"[ \t]*\n[ \t]*(?://+|#+(?=[ \t])|\*(?!/)|;+)?[ \t]*")


def sources():
    files = [p for p in ROOT.iterdir() if p.is_file() and p.suffix in (".md", ".txt")]
    for folder in FOLDERS:
        base = ROOT / folder
        if base.is_dir():
            files += [p for p in base.rglob("*") if p.is_file() and p.suffix in SUFFIXES]
    for p in sorted(files):
        rel = p.relative_to(ROOT).as_posix()
        if not rel.startswith(SKIP):
            yield p, rel


def prose(path):
    """The file's lines outside fenced code blocks (a `# comment` in one is no heading)."""
    fenced = False
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            yield line


def headings(path, cache={}):
    if path not in cache:
        cache[path] = [re.sub(r"^#+\s*", "", line).strip() for line in prose(path)
                       if re.match(r"#{1,6} ", line)]
    return cache[path]


def lead_ins(path):
    """The bold words a paragraph or a list item begins with: `**From packages.**`."""
    return [m.group(1) for m in map(re.compile(r"(?:[-*] )?\*\*([^*]+)\*\*").match, prose(path))
            if m]


def plain(text):
    return text.replace("`", "").strip().lower()


def has_section(path, section):
    want = plain(section).rstrip(".")
    for h in map(plain, headings(path) + lead_ins(path)):
        if h.startswith(want) and not h[len(want):len(want) + 1].isalnum():
            return True
    return False


def slug(heading):
    s = heading.strip().lower().replace("`", "")
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    for h in headings(path):
        s = slug(h)
        n = seen.get(s, 0)
        out.add(s if n == 0 else f"{s}-{n}")
        seen[s] = n + 1
    return out


def resolve(name, citing):
    """The file a citation names, relative to the citing file's folder, else to the root;
    None for a file outside the tree (the team's shared folder)."""
    if name.startswith(("shared/", "../shared/")):
        return None
    if name == "README":
        name = "README.md"
    name = NAMES.get(name.replace("-", " ").lower(), name)
    for base in (citing.parent, ROOT):
        p = (base / name).resolve()
        if p.exists():
            return p
    p = (ROOT / name).resolve()
    return p if ROOT in p.parents or p == ROOT else None


failures = []
count = 0
for path, rel in sources():
    if rel == "tests/scripts/citations_test.py":
        continue  # its own examples
    text = path.read_text(errors="replace")
    joined = JOIN.sub(" ", text)
    for m in SECTION.finditer(joined):
        count += 1
        target = resolve(m.group("doc"), path)
        if target is None:
            continue
        if not target.exists():
            failures.append(f"{rel}: cites {m.group('doc')}, \"{m.group('section')}\": no such file")
        elif target.suffix == ".md" and not has_section(target, m.group("section")):
            failures.append(f"{rel}: cites {m.group('doc')}, \"{m.group('section')}\": "
                            f"{target.relative_to(ROOT)} has no such heading")
    for m in PATH.finditer(joined):
        count += 1
        target = resolve(m.group(1), path)
        if target is not None and not target.exists():
            failures.append(f"{rel}: names {m.group(1)}: no such file")
    if path.suffix != ".md":
        continue
    for m in LINK.finditer(text):
        link = m.group("target")
        if not link or re.match(r"[a-z]+:", link):
            continue
        count += 1
        name, _, anchor = link.partition("#")
        target = (path.parent / name).resolve() if name else path
        if not target.exists():
            failures.append(f"{rel}: links to {link}: no such file")
        elif anchor and target.suffix == ".md" and anchor not in anchors(target):
            failures.append(f"{rel}: links to {link}: {target.relative_to(ROOT)} has no "
                            f"heading whose anchor is #{anchor}")

for f in failures:
    print("FAIL " + f)
if failures:
    sys.exit(1)
print(f"ok   {count} citations of documents, sections and anchors hold")
