"""The stock example of seeds 001/003 (SASE+: SEQ(Stock+ a[], Stock b) within 1 hour) written as a
Flink CEP pattern. SASE's three results R1, R2, R3 are among Flink's matches; Flink also emits
every shorter prefix of a[] that is followed by a b, because its loop may stop after any event.
(The Dewey truth table and the shared-buffer example of the seeds are in test_dewey.py and
test_sharedbuffer.py.)"""

from datetime import timedelta

from flowcep import AfterMatchSkipStrategy, Pattern

from .helpers import Event, dict_matches, id_dict, run_full

MINUTE = 60_000

# price, volume of e1..e8 (seed 003), one event per minute
STOCK = [
    Event("e1", price=100, volume=1010),
    Event("e2", price=120, volume=990),
    Event("e3", price=120, volume=1005),
    Event("e4", price=121, volume=999),
    Event("e5", price=120, volume=999),
    Event("e6", price=125, volume=750),
    Event("e7", price=120, volume=950),
    Event("e8", price=120, volume=700),
]
STOCK = [Event(e.name, e.price, (i + 1) * MINUTE, i + 1, e.volume) for i, e in enumerate(STOCK)]


def a_condition(e, ctx):
    """a[1].volume > 1000; a[i].price > avg(a[..i-1].price)."""
    taken = list(ctx.get_events_for_pattern("a"))
    if not taken:
        return e.volume > 1000
    return e.price > sum(x.price for x in taken) / len(taken)


def b_condition(e, ctx):
    """b.volume < 80% * a[a.LEN].volume."""
    last_a = list(ctx.get_events_for_pattern("a"))[-1]
    return e.volume < 0.8 * last_a.volume


def stock_pattern(skip=None):
    begin = Pattern.begin("a") if skip is None else Pattern.begin("a", skip)
    return (
        begin.where(a_condition).one_or_more().followed_by("b").where(b_condition).within(timedelta(hours=1))
    )


R1 = {"a": [1, 2, 3, 4, 5], "b": [6]}
R2 = {"a": [3, 4], "b": [6]}
R3 = {"a": [1, 2, 3, 4, 5, 6, 7], "b": [8]}


def test_sase_results_are_among_flinks_matches():
    matches = dict_matches(stock_pattern(), STOCK)
    assert R1 in matches and R2 in matches and R3 in matches


def test_all_matches_of_the_stock_example():
    matches = dict_matches(stock_pattern(), STOCK)
    assert sorted(matches, key=repr) == sorted(
        [
            R1,
            {"a": [1, 2, 3, 4], "b": [6]},
            {"a": [1, 2, 3], "b": [6]},
            {"a": [1, 2], "b": [6]},
            {"a": [1], "b": [6]},
            R2,
            {"a": [3], "b": [6]},
            R3,
        ],
        key=repr,
    )


def test_r1_and_r2_complete_on_e6_and_r3_on_e8():
    r = run_full(stock_pattern(), STOCK)
    at = {(x.at, repr(id_dict(x.match))) for x in r.emitted}
    assert (6, repr(R1)) in at and (6, repr(R2)) in at and (8, repr(R3)) in at


def test_open_runs_time_out_one_hour_after_their_first_event():
    r = run_full(stock_pattern(), STOCK)
    hour = 60 * MINUTE
    assert sorted((id_dict(m)["a"], ts) for m, ts in r.timed_out) == [
        ([1, 2, 3, 4, 5, 6], 1 * MINUTE + hour),  # waiting for a b after e6
        ([1, 2, 3, 4, 5, 6, 7, 8], 1 * MINUTE + hour),
        ([3, 4, 6], 3 * MINUTE + hour),  # in the loop and waiting for a b: two runs
        ([3, 4, 6], 3 * MINUTE + hour),
    ]
    assert r.state.is_empty() and r.buffer.is_empty()


def test_skip_past_last_event_keeps_only_r1():
    assert dict_matches(stock_pattern(AfterMatchSkipStrategy.skip_past_last_event()), STOCK) == [R1]
