#!/usr/bin/env python3
"""docs/architecture.md's walk of one flag, held to the code (the walk said
twelve files where the code crosses more). In the walk's numbered steps, every file named
(`room/x.cpp`, `stoker/room/x.hpp`, `spank_plugin/x.cpp`) exists, the count in its first
sentence is the number of files named, the flag is in one of them, and every function named
(`name()`, `values::name()`, `Class::name()`) is defined in one of the named sources.

    flag_walk_test.py [SOURCE_DIR]   (default: this checkout)
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[2])
NUMBERS = {w: n for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())}


def walk_section(doc):
    start = doc.index("## The walk of one flag")
    end = doc.find("\n## ", start + 1)
    return doc[start:end if end >= 0 else len(doc)]


def path_of(name):
    if name.startswith("stoker/"):
        return ROOT / "runtime/include" / name
    if name.startswith("spank_plugin/"):
        return ROOT / name
    return ROOT / "runtime/src" / name


def defines(text, function):
    # A definition starts at the line's first column (its return type or its class), as
    # clang-format leaves every function here; a call or declaration inside a body does not.
    qualified = function if re.match(r"[A-Z]", function) else function.split("::")[-1]
    pattern = re.compile(r"^[^\s/#].*\b" + re.escape(qualified) + r"\(.*[^;]\s*$", re.M)
    return pattern.search(text) is not None


def main():
    section = walk_section((ROOT / "docs/architecture.md").read_text())
    flag = re.search(r"`--([\w-]+)=", section).group(1)
    count_word = section.split("\n\n")[1].split()[0].lower()
    steps = section[section.index("\n1. **"):]
    names = list(dict.fromkeys(re.findall(r"`(\w+/[\w/]*\.[ch]pp)`", steps)))
    functions = list(dict.fromkeys(re.findall(r"`([\w:]+)\(\)`", steps)))
    failures = []
    missing = [n for n in names if not path_of(n).is_file()]
    if missing:
        failures.append(f"files the walk names that do not exist: {missing}")
    if NUMBERS.get(count_word) != len(names):
        failures.append(f"the walk says '{count_word}' files and names {len(names)}: {names}")
    texts = {n: path_of(n).read_text() for n in names if n not in missing}
    if not any(flag in t for t in texts.values()):
        failures.append(f"no file of the walk holds the flag {flag}")
    sources = [t for n, t in texts.items() if n.endswith(".cpp")]
    undefined = [f for f in functions if not any(defines(t, f) for t in sources)]
    if undefined:
        failures.append(f"functions the walk names, defined in none of its files: {undefined}")
    for f in failures:
        print("FAIL", f)
    if not failures:
        print(f"ok   the walk of --{flag}: {len(names)} files, {len(functions)} functions")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
