"""Group patterns (GroupITCase): groups at the start, in the middle, quantified, looping,
optional, with every contiguity, and nested."""

from flowcep import Pattern

from .helpers import dict_matches, id_dict, named, run, run_full


def sorted_dicts(pattern, stream):
    return sorted(dict_matches(pattern, stream), key=repr)


def ab_group():
    return Pattern.begin("m1").where(named("a")).followed_by("m2").where(named("b"))


def around(group_fn, contiguity="followed_by"):
    p = Pattern.begin("start").where(named("c"))
    return getattr(p, contiguity)(group_fn).followed_by("end").where(named("d"))


def test_group_in_the_middle():
    p = around(ab_group())
    assert run(p, "c1 a2 x3 b4 d5") == [[1, 2, 4, 5]]


def test_group_keys_are_the_inner_names_in_pattern_order():
    p = around(ab_group())
    assert dict_matches(p, "c1 a2 b3 d4") == [{"start": [1], "m1": [2], "m2": [3], "end": [4]}]


def test_next_to_a_group_makes_its_first_step_strict():
    p = around(ab_group(), "next")
    assert run(p, "c1 a2 x3 b4 d5") == [[1, 2, 4, 5]]
    assert run(p, "c1 x2 a3 b4 d5") == []


def test_followed_by_any_to_a_group_branches_on_its_first_step():
    p = around(ab_group(), "followed_by_any")
    assert run(p, "c1 a2 a3 b4 d5") == [[1, 2, 4, 5], [1, 3, 4, 5]]


def test_strict_contiguity_inside_a_group():
    group = Pattern.begin("m1").where(named("a")).next("m2").where(named("b"))
    p = around(group)
    assert run(p, "c1 a2 b3 d4") == [[1, 2, 3, 4]]
    # followed_by cannot skip a2 (it matches the group's first step), and x3 breaks "next"
    assert run(p, "c1 a2 x3 b4 a5 b6 d7") == []


def test_group_times():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by(ab_group())
        .times(2)
        .followed_by("end")
        .where(named("d"))
    )
    assert dict_matches(p, "c1 a2 b3 a4 b5 d6") == [{"start": [1], "m1": [2, 4], "m2": [3, 5], "end": [6]}]


def test_looping_group():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by(ab_group())
        .one_or_more()
        .followed_by("end")
        .where(named("d"))
    )
    assert sorted_dicts(p, "c1 a2 b3 a4 b5 d6") == [
        {"start": [1], "m1": [2, 4], "m2": [3, 5], "end": [6]},
        {"start": [1], "m1": [2], "m2": [3], "end": [6]},
    ]


def test_looping_group_consecutive():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by(ab_group())
        .one_or_more()
        .consecutive()
        .followed_by("end")
        .where(named("d"))
    )
    assert sorted_dicts(p, "c1 a2 b3 a4 b5 d6") == [
        {"start": [1], "m1": [2, 4], "m2": [3, 5], "end": [6]},
        {"start": [1], "m1": [2], "m2": [3], "end": [6]},
    ]
    assert run(p, "c1 a2 b3 x4 a5 b6 d7") == [[1, 2, 3, 7]]


def test_looping_group_allow_combinations_gives_flinks_multiset():
    # Flink 2.3 yields these exact duplicates (the group's inner ignore branches multiply)
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by(ab_group())
        .one_or_more()
        .allow_combinations()
        .followed_by("end")
        .where(named("d"))
    )
    one = {"start": [1], "m1": [2], "m2": [3], "end": [8]}
    two = {"start": [1], "m1": [2, 4], "m2": [3, 5], "end": [8]}
    assert sorted_dicts(p, "c1 a2 b3 a4 b5 a6 b7 d8") == sorted(
        [
            {"start": [1], "m1": [2, 4, 6], "m2": [3, 5, 7], "end": [8]},
            two,
            two,
            two,
            {"start": [1], "m1": [2, 6], "m2": [3, 7], "end": [8]},
            one,
            one,
            one,
            one,
            one,
        ],
        key=repr,
    )


def test_optional_group():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by(ab_group())
        .optional()
        .followed_by("end")
        .where(named("d"))
    )
    assert run(p, "c1 d2") == [[1, 2]]
    assert run(p, "c1 a2 b3 d4") == [[1, 2, 3, 4], [1, 4]]


def test_optional_looping_group():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by(ab_group())
        .one_or_more()
        .optional()
        .followed_by("end")
        .where(named("d"))
    )
    assert sorted_dicts(p, "c1 a2 b3 a4 b5 d6") == sorted(
        [
            {"start": [1], "end": [6]},
            {"start": [1], "m1": [2, 4], "m2": [3, 5], "end": [6]},
            {"start": [1], "m1": [2], "m2": [3], "end": [6]},
        ],
        key=repr,
    )


def test_group_times_range():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by(ab_group())
        .times(1, 2)
        .followed_by("end")
        .where(named("d"))
    )
    assert sorted_dicts(p, "c1 a2 b3 a4 b5 a6 b7 d8") == [
        {"start": [1], "m1": [2, 4], "m2": [3, 5], "end": [8]},
        {"start": [1], "m1": [2], "m2": [3], "end": [8]},
    ]


def test_group_until():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by(ab_group())
        .one_or_more()
        .until(named("u"))
        .followed_by("end")
        .where(named("d"))
    )
    # u5 ends the second repetition before its b: only the first repetition survives
    assert dict_matches(p, "c1 a2 b3 a4 u5 b6 d7") == [{"start": [1], "m1": [2], "m2": [3], "end": [7]}]


def test_group_at_the_start():
    p = Pattern.begin(ab_group()).followed_by("end").where(named("d"))
    assert run(p, "a1 b2 a3 b4 d5") == [[1, 2, 5], [3, 4, 5]]


def test_looping_group_at_the_start():
    p = Pattern.begin(ab_group()).one_or_more().followed_by("end").where(named("d"))
    assert sorted_dicts(p, "a1 b2 a3 b4 d5") == [
        {"m1": [1, 3], "m2": [2, 4], "end": [5]},
        {"m1": [1], "m2": [2], "end": [5]},
        {"m1": [3], "m2": [4], "end": [5]},
    ]


def test_group_at_the_end():
    p = Pattern.begin("start").where(named("c")).followed_by(ab_group())
    assert run(p, "c1 a2 b3 b4") == [[1, 2, 3]]


def test_looping_group_at_the_end_emits_every_repetition():
    p = Pattern.begin("start").where(named("c")).followed_by(ab_group()).one_or_more()
    assert dict_matches(p, "c1 a2 b3 a4 b5") == [
        {"start": [1], "m1": [2], "m2": [3]},
        {"start": [1], "m1": [2, 4], "m2": [3, 5]},
    ]


def test_group_with_a_looping_step_inside():
    group = Pattern.begin("m1").where(named("a")).one_or_more().followed_by("m2").where(named("b"))
    p = around(group)
    assert run(p, "c1 a2 a3 b4 d5") == [[1, 2, 3, 4, 5], [1, 2, 4, 5]]


def test_nested_groups():
    # GroupITCase.testGroupNest-like
    inner = Pattern.begin("x").where(named("a")).followed_by("y").where(named("b"))
    outer = Pattern.begin(inner).followed_by("z").where(named("e"))
    p = Pattern.begin("start").where(named("c")).followed_by(outer).followed_by("end").where(named("d"))
    assert dict_matches(p, "c1 a2 b3 e4 d5") == [{"start": [1], "x": [2], "y": [3], "z": [4], "end": [5]}]


def test_nested_looping_groups():
    inner = Pattern.begin("x").where(named("a")).followed_by("y").where(named("b"))
    outer = Pattern.begin(inner).one_or_more().followed_by("z").where(named("e"))
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by(outer)
        .times(2)
        .followed_by("end")
        .where(named("d"))
    )
    assert sorted_dicts(p, "c1 a2 b3 e4 a5 b6 a7 b8 e9 d10") == [
        {"start": [1], "x": [2, 5, 7], "y": [3, 6, 8], "z": [4, 9], "end": [10]},
        {"start": [1], "x": [2, 5], "y": [3, 6], "z": [4, 9], "end": [10]},
    ]


# --- quantified or optional steps inside a group (found by differential fuzzing against Flink 2.3) ---


def test_group_whose_step_has_a_times_range():
    group = Pattern.begin("g").where(named("c")).times(1, 2)
    assert sorted_dicts(Pattern.begin(group), "c1 c2 x3") == [{"g": [1, 2]}, {"g": [1]}, {"g": [2]}]


def test_group_whose_step_has_a_times_range_followed_by_a_step():
    group = Pattern.begin("g").where(named("c")).times(1, 2)
    p = Pattern.begin(group).followed_by("e").where(named("d"))
    assert sorted_dicts(p, "c1 c2 d3") == [
        {"g": [1, 2], "e": [3]},
        {"g": [1], "e": [3]},
        {"g": [2], "e": [3]},
    ]


def test_group_in_the_middle_whose_step_has_a_times_range():
    group = Pattern.begin("g").where(named("c")).times(1, 2)
    p = Pattern.begin("s").where(named("a")).followed_by(group)
    assert sorted_dicts(p, "a1 c2 c3") == [{"s": [1], "g": [2, 3]}, {"s": [1], "g": [2]}]


def test_group_whose_first_step_is_optional():
    group = Pattern.begin("g").where(named("c")).optional().followed_by("h").where(named("b"))
    assert sorted_dicts(Pattern.begin(group), "b1 c2 b3") == [
        {"g": [2], "h": [3]},
        {"h": [1]},
        {"h": [3]},
    ]


def test_group_in_the_middle_whose_first_step_is_optional():
    group = Pattern.begin("g").where(named("c")).optional().followed_by("h").where(named("b"))
    p = Pattern.begin("s").where(named("a")).followed_by(group)
    assert sorted_dicts(p, "a1 b2 c3 b4") == [{"s": [1], "g": [3], "h": [4]}, {"s": [1], "h": [2]}]


def test_group_whose_step_is_an_optional_times():
    group = Pattern.begin("g").where(named("b")).times(0, 2).followed_by("h").where(named("a"))
    assert sorted_dicts(Pattern.begin(group), "b1 a2") == [{"g": [1], "h": [2]}, {"h": [2]}]


def test_optional_group_at_the_start_gives_flinks_duplicates():
    # the second repetition g ignores back into itself (only the first repetition of an optional
    # group has a separate ignore state), so on a3 it both PROCEEDs to s1 and takes a3 there,
    # beside the run that left g on x2: Flink emits {g: a1, s1: a3} twice
    p = Pattern.begin(Pattern.begin("g").where(named("a"))).times(0, 2).followed_by("s1").where(named("a"))
    assert sorted_dicts(p, "a1 x2 a3") == [
        {"g": [1], "s1": [3]},
        {"g": [1], "s1": [3]},
        {"s1": [1]},
        {"s1": [3]},
    ]


def test_quantifier_window_inside_an_optional_repeated_group_times_out_the_open_run():
    group = Pattern.begin("g").where(named("b")).one_or_more(window=2)
    r = run_full(Pattern.begin(group).times(0, 2), "b1@8 x2@9")
    assert [(x.at, id_dict(x.match)) for x in r.emitted] == [(1, {"g": [1]})]
    assert [(id_dict(m), ts) for m, ts in r.timed_out] == [({"g": [1]}, 10)]
