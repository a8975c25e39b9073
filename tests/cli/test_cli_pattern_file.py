"""Pattern files that cannot be used: exit status 3 and a message that says why."""

import pytest

from flowcep.cli_support.errors import EXIT_PATTERN

CASES = {
    "syntax": ("pattern = Pattern.begin('a'\n", r"p.py:1: syntax error"),
    "no_pattern": ("x = 1\n", r"defines no `pattern`.*it defines: x"),
    "raises": (
        "from flowcep import Pattern\n\nvalue = 1 / 0\n",
        r"ZeroDivisionError: division by zero \(at .*p.py:3: value = 1 / 0\)",
    ),
    "not_a_pattern": ("pattern = 'begin a'\n", r"`pattern` is a str, not a flowcep Pattern"),
    "bad_select": (
        "from flowcep import Pattern\npattern = Pattern.begin('a')\nselect = 3\n",
        r"`select` is not a function",
    ),
    "exit": ("import sys\nsys.exit(3)\n", r"it called exit\(3\)"),
    "not_followed_by_at_end_without_window": (
        "from flowcep import Pattern\npattern = Pattern.begin('a').not_followed_by('b')\n",
        r"NotFollowedBy is not supported without windowTime as a last part of a Pattern!",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("command", ["run", "explain"])
def test_bad_pattern_file(cli, write, case, command):
    text, message = CASES[case]
    p = write("p.py", text)
    data = write("in.csv", "timestamp,kind\n1,a\n")
    argv = ["run", p, data] if command == "run" else ["explain", p]
    r = cli(*argv)
    assert r.status == EXIT_PATTERN, (r.out, r.err)
    assert r.err.startswith("flowcep: error: ")
    import re

    assert re.search(message, r.err), r.err


def test_pattern_file_not_found(cli, tmp_path):
    r = cli("explain", tmp_path / "missing.py")
    assert r.status == EXIT_PATTERN
    assert "pattern file not found" in r.err


def test_pattern_may_be_a_factory(cli, write):
    p = write(
        "p.py",
        """
        from flowcep import Pattern

        def pattern():
            return Pattern.begin("a").where(lambda e: e.kind == "a")
        """,
    )
    r = cli("explain", p)
    assert r.status == 0, r.err
    assert 'lambda e: e.kind == "a"' in r.out


def test_main_guard_does_not_run(cli, write):
    p = write(
        "p.py",
        """
        from flowcep import Pattern
        pattern = Pattern.begin("a")
        if __name__ == "__main__":
            raise SystemExit("must not run")
        """,
    )
    assert cli("explain", p).status == 0
