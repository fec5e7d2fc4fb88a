#!/usr/bin/env python3
"""docs/reference.md is what stoker_reference prints from the code's tables, and it names
everything the tables cannot hand it:
  - the page in the tree equals the generator's output (else the diff and the command that
    rewrites the page);
  - its variables are exactly the STOKER_* names the runtime reads or writes (a quoted
    "STOKER_..." in runtime/src, runtime/include, runtime/capi or the Python package): the
    switches' rows are written by hand in the generator, so a switch added, renamed or
    dropped in the code fails here until the page says so;
  - every keyword of stoker.Loader and of Loader.images/tokens/records is on the page with
    Python's default: a row of the options tables, or the list of the arguments no table
    holds (read from the source with ast, without importing stoker).

    reference_test.py SOURCE_DIR GENERATOR
"""
import ast
import difflib
import math
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(sys.argv[1])
GENERATOR = sys.argv[2]
PAGE = ROOT / "docs/reference.md"
REGENERATE = ("cmake --build build --target stoker_reference && "
              "build/runtime/stoker_reference > docs/reference.md")
failures = []


def fail(text):
    failures.append(text)


def section(page, heading):
    start = page.index("\n## " + heading)
    end = page.find("\n## ", start + 1)
    return page[start:end if end >= 0 else len(page)]


def first_cells(text):
    """The first cell of every table row of `text`, without its backticks."""
    return [m.group(1) for m in re.finditer(r"^\| `([^`]+)` \|", text, re.M)]


def same_page(page):
    made = subprocess.run([GENERATOR], check=True, capture_output=True, text=True).stdout
    if made == page:
        return
    diff = difflib.unified_diff(page.splitlines(), made.splitlines(), "docs/reference.md",
                                "stoker_reference", lineterm="", n=1)
    fail("docs/reference.md differs from what the code's tables give:\n" +
         "\n".join(list(diff)[:60]) + "\nRewrite it with:\n    " + REGENERATE)


def variables(page):
    named = set()
    for folder in ("runtime/src", "runtime/include", "runtime/capi", "runtime/python/stoker"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".cpp", ".hpp", ".h", ".py"):
                named |= set(re.findall(r'"(STOKER_[A-Z_]+)"', path.read_text()))
    listed = {v for v in first_cells(section(page, "The plan's variables") +
                                     section(page, "The runtime's switches"))
              if v.startswith("STOKER_")}
    for v in sorted(named - listed):
        fail(f"{v}: read or written by the runtime, not on docs/reference.md (add its row to "
             "runtime/tools/reference/reference_plan.cpp)")
    for v in sorted(listed - named):
        fail(f"{v}: on docs/reference.md, but the runtime names it nowhere")


def page_value(text):
    """A default as the page writes it, as a Python value."""
    return ast.literal_eval(text.strip("`"))


def equal(a, b):
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return (isinstance(a, (int, float)) and isinstance(b, (int, float)) and
                not isinstance(a, bool) and not isinstance(b, bool) and
                math.isclose(a, b, rel_tol=1e-5))
    return type(a) is type(b) and a == b


def signature(fn):
    """{keyword: default expression or None (required)} of a def's arguments."""
    args = fn.args
    out = {}
    positional = args.posonlyargs + args.args
    for i, a in enumerate(positional):
        d = i - (len(positional) - len(args.defaults))
        out[a.arg] = args.defaults[d] if d >= 0 else None
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        out[a.arg] = d
    return out


def functions(path):
    tree = ast.parse(path.read_text())
    return {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def listed_signature(text):
    """`name(a, b=1)` as the page writes it: {keyword: default expression or None}."""
    return signature(ast.parse(f"def f({text}): pass").body[0])


def keywords(page):
    part = section(page, "The loader's keyword arguments")
    rows = {}  # keyword: its default cell
    for line in part.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)]
        if line.startswith("| `") and len(cells) == 9:
            rows[cells[1].strip("`")] = cells[5]
    loader_rows = set(first_cells(part.split("`Loader.images` also takes")[0]))
    listed = {m.group(1): listed_signature(m.group(2))
              for m in re.finditer(r"`Loader\.([a-z]+)\(([^`]*)\)`", part)}
    every = listed_signature(", ".join(re.findall(r"`([a-z_]+=[^`]+)`",
                                                  part.split("Every constructor:")[1])))

    def check(where, name, default, own):
        python = None if default is None else eval(ast.unparse(default), {})  # noqa: S307
        if name in own:
            shown = own[name]
            if (shown is None) != (default is None) or (
                    shown is not None and not equal(eval(ast.unparse(shown), {}), python)):
                fail(f"{where}: {name}: the page lists "
                     f"{'no default' if shown is None else ast.unparse(shown)}, Python has "
                     f"{'none' if default is None else ast.unparse(default)}")
        elif name in rows:
            cell = rows[name].strip()
            if cell != "each constructor's" and not equal(page_value(cell), python):
                fail(f"{where}: {name}: the page's default is {cell}, Python's "
                     f"{ast.unparse(default)}")
        else:
            fail(f"{where}: {name} is not on docs/reference.md (add it to "
                 "runtime/tools/reference/reference_loader.cpp)")

    py = ROOT / "runtime/python/stoker"
    init = signature(functions(py / "_loader.py")["__init__"])
    for name, default in init.items():
        if name not in ("self", "kind", "source") and not name.startswith("_"):
            check("stoker.Loader", name, default, every)
    for name in loader_rows - set(init):
        fail(f"stoker.Loader takes no {name}, a row of loader_fields()")
    sources = functions(py / "_loader_sources.py")
    for kind in ("images", "tokens", "records"):
        if kind not in listed:
            fail(f"docs/reference.md does not list Loader.{kind}(...)")
            continue
        for name, default in signature(sources[kind]).items():
            if name in ("cls",):
                continue
            if kind != "images" or name in listed[kind] or name in loader_rows:
                check(f"Loader.{kind}", name, default, listed[kind])
            else:
                check(f"Loader.{kind}", name, default, {})  # an image_fields() row


page = PAGE.read_text()
same_page(page)
variables(page)
keywords(page)
for f in failures:
    print("FAIL " + f)
if failures:
    sys.exit(1)
print("ok   docs/reference.md is the tables' page, and names every variable and keyword")
