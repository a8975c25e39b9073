import shutil

from flowcep.cli_support.errors import EXIT_DEPENDENCY, EXIT_OK, EXIT_PATTERN

from .conftest import AB_PATTERN, EXAMPLES

NOT_AT_END = """
    from datetime import timedelta
    from flowcep import Pattern, AfterMatchSkipStrategy

    def is_alarm(e):
        return e.kind == "alarm"

    pattern = (
        Pattern.begin("alarm", AfterMatchSkipStrategy.skip_to_last("fail")).where(is_alarm)
        .followed_by("fail").where(lambda e: e.status >= 500).times(2)
        .not_followed_by("ok").where(lambda e: e.kind == "ok")
        .within(timedelta(minutes=5))
    )
"""


def test_explain_text_lists_states_transitions_conditions_and_window(cli, write):
    p = write("p.py", NOT_AT_END)
    r = cli("explain", p)
    assert r.status == EXIT_OK, r.err
    out = r.out
    assert "steps:          alarm, followed_by fail{2}, not_followed_by ok\n" in out
    assert "skip strategy:  skip_to_last('fail')\n" in out
    assert "window:         5m from the first to the last event" in out
    assert "[Start]" in out and "[Pending]" in out and "[Stop]" in out and "[Final]" in out
    # named functions by name, lambdas by their source text
    assert "TAKE    -> " in out and "if is_alarm" in out
    assert "lambda e: e.status >= 500" in out
    assert 'not (lambda e: e.kind == "ok")' in out
    # the start state comes first
    first_state = next(
        line for line in out.splitlines() if "[" in line and line.startswith("  ") and "]" in line
    )
    assert "[Start]" in first_state


def test_explain_dot_to_file_and_stdout(cli, write, tmp_path):
    p = write("p.py", AB_PATTERN)
    dot = tmp_path / "p.dot"
    r = cli("explain", p, "--dot", dot)
    assert r.status == EXIT_OK, r.err
    text = dot.read_text()
    assert text.startswith("digraph flowcep {") and text.rstrip().endswith("}")
    assert "doublecircle" in text  # the final state
    assert 'label="TAKE\\nlambda e: e.kind == \\"a\\""' in text
    assert "within 10s" in text
    r = cli("explain", p, "--dot", "-")
    assert "digraph flowcep {" in r.out


def test_explain_dot_to_stdout_prints_only_the_dot(cli, write):
    p = write("p.py", AB_PATTERN)
    r = cli("explain", p, "--dot", "-")
    assert r.status == EXIT_OK, r.err
    assert r.out.startswith("digraph flowcep {") and r.out.rstrip().endswith("}")
    assert "[Start]" not in r.out and "steps:" not in r.out


def test_explain_svg_without_graphviz_says_so(cli, write, tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    p = write("p.py", AB_PATTERN)
    svg = tmp_path / "p.svg"
    r = cli("explain", p, "--svg", svg)
    assert r.status == EXIT_DEPENDENCY
    assert "Graphviz is not installed" in r.err and "apt-get install graphviz" in r.err
    assert not svg.exists()
    assert (tmp_path / "p.dot").read_text().startswith("digraph")
    assert "[Start]" in r.out  # the text explanation is still printed


def test_explain_svg_with_graphviz(cli, write, tmp_path):
    if shutil.which("dot") is None:
        import pytest

        pytest.skip("Graphviz `dot` is not installed")
    p = write("p.py", AB_PATTERN)
    svg = tmp_path / "p.svg"
    r = cli("explain", p, "--svg", svg)
    assert r.status == EXIT_OK, r.err
    assert "<svg" in svg.read_text()


def test_explain_rejects_a_malformed_pattern(cli, write):
    p = write(
        "p.py",
        """
        from flowcep import Pattern
        pattern = Pattern.begin("a").where(lambda e: True).followed_by("a")
        """,
    )
    r = cli("explain", p)
    assert r.status == EXIT_PATTERN
    assert "Duplicate pattern name: a. Names must be unique." in r.err


def test_explain_an_example(cli):
    r = cli("explain", EXAMPLES / "card_fraud.py")
    assert r.status == EXIT_OK, r.err
    assert "large_abroad" in r.out and "lambda p: p.amount < 5" in r.out
    assert "15m" in r.out


def test_explain_shows_throw_exception_on_miss(cli, write):
    p = write(
        "p.py",
        """
        from flowcep import Pattern, AfterMatchSkipStrategy
        skip = AfterMatchSkipStrategy.skipToFirst("a").throwExceptionOnMiss()
        pattern = Pattern.begin("a", skip).followed_by("b")
        """,
    )
    r = cli("explain", p)
    assert "skip strategy:  skip_to_first('a').throw_exception_on_miss()" in r.out


def test_explain_steps_line_shows_contiguity_quantifiers_and_groups(cli, write):
    p = write(
        "p.py",
        """
        from flowcep import Pattern
        inner = Pattern.begin("x").next("y")
        pattern = (
            Pattern.begin("a").followed_by(inner).times(2).optional()
            .followed_by_any("b").times(2, 4).allow_combinations()
            .not_next("c")
            .followed_by("d").one_or_more().greedy()
            .next("e").times_or_more(3).consecutive().until(lambda e: e == "z")
        )
        """,
    )
    r = cli("explain", p)
    assert r.status == 0, r.err
    expected = (
        "a, followed_by (x, next y){2}?, followed_by_any b{2,4} (combinations), not_next c, "
        "followed_by d+ (greedy), next e{3,} (consecutive, until)"
    )
    assert f"steps:          {expected}\n" in r.out
