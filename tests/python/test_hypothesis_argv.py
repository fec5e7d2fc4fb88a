"""The `stoker` command's arguments: every bad argument exits 2 with one
line on stderr ("stoker: error: ..."), never a traceback, an abort or a CLI11 help dump.
Data-driven: the subcommands and their options are read from `stoker --help` and each
subcommand's --help (nested ones too), so a new subcommand or option is swept without a
change here. A table of bad values goes to every option that takes one; Hypothesis then
throws mixed argument lists at every subcommand."""
import os
import re
import subprocess
import unittest
from concurrent.futures import ThreadPoolExecutor

from hypothesis import HealthCheck, given, settings, strategies as st

from testdata import TempDirCase

STOKER = os.environ.get("STOKER_BIN", "stoker")
TIMEOUT = 60
# Values no number option takes: each must be refused (exit 2).
NOT_NUMBERS = ["", "1x"]
# Values any option may take or refuse; either way cleanly (exit 0, 1 or 2, one line on 2).
# (Few, as every option gets each: the Hypothesis test below draws from more.)
ODD_VALUES = ["-1", "18446744073709551616", "1e999", "x" * 5000, os.fsdecode(b"\xff\xfe"),
              "/nonexistent/x"]
MORE_VALUES = ["0", "nan", "-0", "9" * 40, " 5", "0x10", "\x7f", "é", ".", "/", "abc", "--"]
NUMBER_TYPES = ("INT", "UINT", "FLOAT", "NUMBER", "SIZE")
OPTION_LINE = re.compile(r"^\s+(?:-\w,)?(--[\w-]+)(?:,--[\w-]+)*(?:\s+([A-Z][A-Z0-9_:{}\[\],.-]*))?")


def run(args, cwd):
    return subprocess.run([STOKER, *args], cwd=cwd, capture_output=True, timeout=TIMEOUT,
                          stdin=subprocess.DEVNULL)


def section(help_text, title):
    """The lines of one section ('Options:', 'Subcommands:') of a CLI11 help text."""
    lines, inside = [], False
    for line in help_text.splitlines():
        if line.strip().endswith(":") and not line.startswith(" "):
            inside = line.strip() == title
            continue
        if inside and line.strip():
            lines.append(line)
    return lines


def commands(prefix=()):
    """[(argv prefix, {option: type name or None for a flag})] for every (sub)command."""
    text = run([*prefix, "--help"], None).stdout.decode(errors="replace")
    options = {}
    for line in section(text, "Options:"):
        m = OPTION_LINE.match(line)
        if m and m.group(1) not in ("--help",):
            options[m.group(1)] = m.group(2)
    found = [(prefix, options)] if prefix else []
    for line in section(text, "Subcommands:"):
        name = line.split()[0]
        found += commands((*prefix, name))
    return found


class Argv(TempDirCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()  # makes cls.tmp
        cls.commands = commands()

    def check(self, args, must_refuse=False, result=None):
        r = result or run(args, self.tmp.path)
        err = r.stderr.decode(errors="replace")
        shown = f"stoker {' '.join(map(repr, args))[:300]} -> {r.returncode}: {err[-600:]!r}"
        for bad in ("Traceback", "terminate called", "Aborted", "Sanitizer", "core dumped"):
            self.assertNotIn(bad, err, shown)
        # 1 only from `stoker doctor`: findings on this machine, not a bad argument
        self.assertIn(r.returncode, (0, 1, 2) if args[:1] == ["doctor"] else (0, 2), shown)
        if must_refuse:
            self.assertEqual(r.returncode, 2, shown)
        if r.returncode == 2:
            lines = [line for line in err.split("\n") if line.strip()]  # (not \x85, \x1e)
            self.assertEqual(len(lines), 1, shown)
            self.assertTrue(lines[0].startswith("stoker: error: "), shown)

    def test_the_commands_were_found(self):
        names = {" ".join(prefix) for prefix, _ in self.commands}
        for expected in ("plan", "sampler", "topo", "doctor"):
            self.assertIn(expected, names)

    def test_no_subcommand_and_an_unknown_one_are_refused(self):
        self.check([], must_refuse=True)
        self.check(["no-such-command"], must_refuse=True)
        self.check(["--no-such-option"], must_refuse=True)

    def test_every_option_refuses_bad_values_with_one_line(self):
        cases = []  # (argv, must_refuse)
        for prefix, options in self.commands:
            cases += [([*prefix, "--no-such-option"], True), ([*prefix, "--no-such-option=1"], True)]
            for option, kind in options.items():
                if kind is None:  # a flag: a value is refused
                    cases.append(([*prefix, f"{option}=abc"], True))
                    continue
                cases.append(([*prefix, option], True))  # no value
                if kind.split(":")[0] in NUMBER_TYPES:
                    cases += [([*prefix, f"{option}={v}"], True) for v in NOT_NUMBERS]
                cases += [([*prefix, f"{option}={v}"], False) for v in ODD_VALUES]
        with ThreadPoolExecutor(max_workers=4) as pool:  # the processes, not the checks
            results = list(pool.map(lambda case: run(case[0], self.tmp.path), cases))
        for (args, must_refuse), result in zip(cases, results):
            with self.subTest(args=args[:3]):
                self.check(args, must_refuse, result)

    @settings(max_examples=25, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(st.data())
    def test_any_mix_of_arguments_is_taken_or_refused_in_one_line(self, data):
        prefix, options = data.draw(st.sampled_from(self.commands))
        words = st.one_of(st.sampled_from(sorted(options) or ["--x"]),
                          st.sampled_from(NOT_NUMBERS + ODD_VALUES + MORE_VALUES),
                          st.text(alphabet=st.characters(blacklist_categories=["Cs"],
                                                         blacklist_characters="\0"),
                                  max_size=20))
        self.check([*prefix, *data.draw(st.lists(words, max_size=6))])


if __name__ == "__main__":
    unittest.main()
