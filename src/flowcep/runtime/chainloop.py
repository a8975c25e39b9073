"""The fused loop of ordered input for a *chain* pattern, with its runs grouped by state.

A chain is the simplest and most common pattern shape: single steps, one after another, each
joined by ``next`` or ``followed_by``, with simple conditions (they read the event alone), no
skip strategy and at most the pattern's window, e.g. ``begin("a").followed_by("b").next("c")
.within(10)`` (``times(n).consecutive()`` unrolls into such steps too). Its runs move together:
every run waiting at a step takes the event when that step's condition holds and none does
otherwise, so a run's step only falls behind as it gets younger. The key's run queue, which is
ordered by start event, is therefore its runs grouped by step, the furthest step first, then the
start run; and the Dewey versions need no per-event work (a ``followed_by`` step's run ignoring
an event on its own state keeps its version; Flink's ``calculateIncreasingSelfState`` is 0 there).

``ChainLoop`` writes, per operator, a loop that does what ``CepOperator._fire_head_alone`` does
with ``_elements``' iterator (the usual step of ordered input: each element of the parked key
fires the one before it), but keeps the key's runs in local lists, one per step, as small
tuples ``(start event id, version, last event id, event, event, ...)``, and each step's
condition is asked once per event for all the runs waiting there, without visiting them. On its
way out (the iterator runs out, an element it cannot take comes, or an exception) it writes the
key's state back as ``ComputationState`` runs in queue order, exactly as the generated step
would have left them, so that snapshots, timeouts and every other path read the usual state.

The loop for ``begin("a").followed_by("b").followed_by("c").within(10)`` reads (abridged)::

    while True:
        h = head; ht = t; head = event; t = ts          # the head fires, the element replaces it
        if deadline <= ht: <time out the oldest runs at ht>
        if g2: x2 = F2(h)                                # each step's condition, once
        if g1: x1 = F1(h)
        x0 = F0(h)
        if g2 and x2: <a match per run>; g2 = []         # phase 2: the furthest step first
        if g1 and x1: <each run moves on to g2>; g1 = []
        if x0: g1.append((eid, version, eid, h))         # the start run takes the event
        if deadline <= watermark: <time out at the watermark>
        <the next element, read as _elements reads it; out if it does not fit>

``CepOperator`` uses it for the fused step of ordered input fed as a batch (``_elements`` with
an iterator), for a key whose state has that shape (``ChainLoop.enter``); anything else keeps
``_fire_head_alone``. Property tests hold the outputs and snapshots to ``ReferenceOperator`` and
to the operator without it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from typing import Any

from flowcep.nfa import NFA
from flowcep.nfa.codegen import generated
from flowcep.nfa.computation_state import NO_START, ComputationState
from flowcep.nfa.conditions import And, Atom, Not, TrueCond
from flowcep.nfa.context import own_match
from flowcep.nfa.state import IGNORE, TAKE
from flowcep.pattern import ConditionError
from flowcep.runtime.keystate import UNKNOWN, KeyState, count_through
from flowcep.runtime.output import MATCH, TIMEOUT, make_output
from flowcep.runtime.timestamps import LONG_MAX, TimestampError, to_timestamp
from flowcep.sharedbuffer import PathlessBuffer
from flowcep.sharedbuffer.sharedbuffer import STALE_COUNTERS

Loop = Callable[..., Any]

NEVER = LONG_MAX  # the deadline of a key without runs
# window timers the loop lets a key collect before it drops those the watermark passed (it drops
# them when it leaves): a loop over a long iterator keeps its memory flat
KEPT_TIMERS = 256


class Chain:
    """A chain pattern's steps as the loop needs them: per step (the start step first) its
    state's name, its page (the name a match lists its event under), its condition (None:
    always true) and how it joins the step before: ``"start"`` (the first step), ``"next"`` (a
    run that does not take the event ends), ``"followed_by"`` (it waits) or ``"any"``
    (``followed_by_any``: a run that takes the event also waits on)."""

    __slots__ = ("states", "pages", "conditions", "joins")

    def __init__(self, states: list[str], pages: list[str], conditions: list[Any], joins: list[str]) -> None:
        self.states = states
        self.pages = pages
        self.conditions = conditions
        self.joins = joins

    @property
    def fans_out(self) -> bool:
        """``begin(a).followed_by_any(b).followed_by_any(c)``: runs that branch (``_FanOutWriter``)."""
        return self.joins == ["start", "any", "any"]


def chain_of(nfa: NFA) -> Chain | str:
    """``nfa``'s chain, or why it is not one."""
    if type(nfa) is not NFA:
        return "an NFA of another kind"
    if nfa.skip_strategy.is_skip_strategy():
        return "a skip strategy"
    if nfa.window_times:
        return "windows per step"
    if len(nfa._start_names) != 1:  # noqa: SLF001  (the NFA's own start states)
        return "more than one start state"
    name = nfa._start_names[0]  # noqa: SLF001
    states, pages, conditions, joins = [], [], [], []
    seen = set()
    while True:
        state = nfa.states[name]
        if state.is_final:
            break
        if name in seen or state.is_stop or state.is_pending or state.iterative:
            return f"state {name!r} is not a chain step"
        seen.add(name)
        transitions = state.state.transitions
        take = transitions[0] if transitions else None
        if take is None or take.action is not TAKE:
            return f"state {name!r} does not begin with a TAKE"
        ignore = transitions[1] if len(transitions) == 2 else None
        if len(transitions) == 1:
            joins.append("start" if state.is_start else "next")
        elif (
            ignore is not None
            and not state.is_start
            and ignore.action is IGNORE
            and ignore.target is state.state
            and _negates(ignore.condition, take.condition)
        ):
            joins.append("followed_by")  # it ignores what it does not take
        elif (
            ignore is not None
            and not state.is_start
            and ignore.action is IGNORE
            and ignore.target is state.state
            and type(ignore.condition) is TrueCond
        ):
            joins.append("any")  # it ignores every event, also one it takes
        else:
            return f"state {name!r} has other edges than a chain step's"
        compiled = state.transitions[0]
        states.append(name)
        pages.append(compiled.page)
        conditions.append(compiled.evaluator)
        name = compiled.target
    if len(states) < 2 or len(seen) + 1 != len(nfa.states):
        return "not a chain of at least two steps"
    chain = Chain(states, pages, conditions, joins)
    if "any" in joins and not chain.fans_out:
        return "followed_by_any other than begin(a).followed_by_any(b).followed_by_any(c)"
    return chain


def _same(a: Any, b: Any) -> bool:
    """Whether the compiler's conditions ``a`` and ``b`` are the same (the same user conditions,
    combined the same way)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if type(a) is Atom:
        return bool(a.condition is b.condition)
    if type(a) is Not:
        return _same(a.inner, b.inner)
    if type(a) is And:
        return _same(a.left, b.left) and _same(a.right, b.right)
    return False


def _negates(ignore: Any, take: Any) -> bool:
    """Whether an IGNORE edge's condition is exactly "not the TAKE's" (``followed_by``)."""
    return type(ignore) is Not and _same(ignore.inner, take)


def _literal(pages: list[str], events: list[str]) -> str:
    """A match as a dict literal: each page with its events (a page of several steps, as
    ``times(n)`` makes, lists them in order)."""
    items: dict[str, list[str]] = {}
    for page, event in zip(pages, events):
        items.setdefault(page, []).append(event)
    return "{" + ", ".join(f"{page!r}: [{', '.join(evs)}]" for page, evs in items.items()) + "}"


class _Writer:
    """The source of one chain's loop (see the module docstring): what every shape shares. A
    shape (``_ChainWriter``, ``_FanOutWriter``) writes how its runs are kept (``unpack``), time
    out (``time_out_runs``), take an event (``step``) and become runs again (``runs_back``)."""

    def __init__(self, chain: Chain, window: int, window_timer: int, handle_timeout: bool) -> None:
        self.chain = chain
        self.n = len(chain.states)
        self.window = window
        self.window_timer = window_timer
        self.handle_timeout = handle_timeout

    def deadline(self) -> str:
        """The key's next timeout: the oldest run's start + the window."""
        raise NotImplementedError

    def unpack(self) -> list[str]:
        """The runs as the loop keeps them, from ``groups`` (``ChainLoop.enter``)."""
        raise NotImplementedError

    def time_out_runs(self) -> list[str]:
        """Time out the runs that started at or before ``limit``, in queue order."""
        raise NotImplementedError

    def step(self) -> list[str]:
        """The head's step."""
        raise NotImplementedError

    def runs_back(self) -> list[str]:
        """The runs in queue order, into the list ``runs``."""
        raise NotImplementedError

    # the event's id, given on its first TAKE (PathlessBuffer.next_event_id, written out)
    REGISTER = (
        "if eid is None:",
        "    seq = counters.get(ht, 0)",
        "    counters[ht] = seq + 1",
        "    eid = (ht, seq)",
    )

    def ask(self, i: int) -> list[str]:
        """Step ``i``'s condition into ``x{i}``; one that raises is a bad record for its step."""
        condition = f"F{i}(h)" if self.chain.conditions[i] is not None else "True"
        return [
            "try:",
            f"    x{i} = {condition}",
            "except Exception as exc:",
            f"    raise ConditionError(P{i}, h, exc) from exc",
        ]

    def decided(self, ask: list[str], apply: list[str]) -> list[str]:
        """The step: the conditions (``ask``), then, unless one raised (a bad record, the runs
        as they were), what they decided (``apply``)."""
        return [
            "try:",
            *self.indent(ask, 1),
            "except ConditionError as exc:",
            "    op._condition_failed(ks, h, ht, exc, out)",
            "else:",
            *self.indent(apply, 1),
        ]

    def new_partial_match(self) -> list[str]:
        """What a run the start run made brings besides itself: its window timer (Flink's, while
        the start TAKE's flag is up) and, for the first run, the deadline."""
        lines: list[str] = []
        if self.window_timer:
            lines += [
                "if ht > 0:  # Flink's window timer of a new partial match",
                "    due = ht + WT",
                "    if not timers or due > timers[-1]:",
                "        timers.append(due)",
                "    else:",
                "        at = bisect_left(timers, due)",
                "        if timers[at] != due:",
                "            timers.insert(at, due)",
                "    if len(timers) > KEPT_TIMERS:  # those fired go, now and then, and at the end",
                "        del timers[: count_through(timers, watermark)]",
            ]
        if self.window:
            lines += ["if deadline == NEVER:", "    deadline = ht + W"]
        return lines

    def source(self) -> list[str]:
        timed = self.window > 0
        lines = [
            "def loop(op, ks, event, ts, watermark, out, rest, start_run, groups):",
            *self.indent(self.unpack(), 1),
            "    version = start_run.version",
            "    sp = version[:-1]  # the start run's version, its last part counted in sk",
            "    sk = version[-1]",
            "    key = ks.key",
            "    timers = ks.timers",
            "    pathless = op._pathless  # the buffer without paths that numbers every key's events",
            "    counters = pathless.events_count",
            "    extractor = op._timestamp",
            "    key_by = op._key_by",
            "    keys = op._keys",
            "    lag = op._out_of_orderness or 0",
            "    dues = op._sched.dues",
            "    seen = matched = timed = 0",
            "    newest = op._max_timestamp",
            "    head = ks.head  # the key's head: the element the next one fires",
            "    t = ks.head_ts",
            f"    deadline = {self.deadline() if timed else 'NEVER'}",
            "    op._current = ks",
            "    stopped = None  # the time the key was due at, when an exception stops the loop",
            "    try:",
            "        while True:",
            "            h = head  # the element that fires, at ht; the new one becomes the head",
            "            ht = t",
            "            head = event",
            "            t = ts",
            "            op._watermark = watermark",
            "            try:",
            *self.indent(self.time_out("ht") if timed else [], 4),
            *self.indent(self.step(), 4),
            *self.indent(self.time_out("watermark") if timed else [], 4),
            "            except BaseException:",
            "                op._resume = True  # as _fire_head_alone: the firing resumes",
            "                stopped = ht",
            "                raise",
            "            if len(counters) > STALE:",
            "                pathless.advance_time(watermark)",
            *self.indent(self.next_element(), 3),
            "    finally:",
            *self.indent(self.write_back(), 2),
            "        if stopped is not None:  # it stays due, as _fire_head_alone leaves it",
            "            op._stopped_firing(ks, stopped, op._watermark)",
        ]
        return lines

    @staticmethod
    def indent(lines: list[str], depth: int) -> list[str]:
        return ["    " * depth + line for line in lines]

    def time_out(self, at: str) -> list[str]:
        """Time out the runs that started at or before ``at`` - the window (``NFA.advance_time``
        for this shape)."""
        body = [
            f"limit = {at} - W",
            *self.time_out_runs(),
            f"deadline = {self.deadline()}",
            "if len(counters) > STALE:",
            f"    pathless.advance_time({at})",
        ]
        return [f"if deadline <= {at}:", *self.indent(body, 1)]

    @staticmethod
    def next_element() -> list[str]:
        """``_fire_head_alone``'s reading of the next element: the loop goes on with it if it is
        this key's, later than the head, and its watermark makes nothing else due."""
        return [
            "for event in rest:",
            "    seen += 1",
            "    try:",
            "        raw = extractor(event)",
            "    except Exception as exc:",
            "        op._bad_timestamp(event, exc, out)",
            "        continue",
            "    if type(raw) is int and t < raw <= HIGH:",
            "        ts = raw",
            "    else:",
            "        try:",
            "            ts = to_timestamp(raw)",
            "        except TimestampError as exc:",
            "            op._bad_timestamp_value(event, exc, out)",
            "            continue",
            "    if key_by is None:",
            "        other = None",
            "        found = keys.get(None)",
            "    else:",
            "        try:",
            "            other = key_by(event)",
            "            found = keys.get(other)",
            "        except Exception as exc:",
            "            op._bad_key(event, ts, exc, out)",
            "            continue",
            "    after = ts - lag - 1",
            "    if found is not ks or after < t or (dues and dues[0] <= after):",
            "        return event, ts, other, found",
            "    newest = ts",
            "    watermark = after",
            "    break",
            "else:",
            "    return None",
        ]

    def write_back(self) -> list[str]:
        """The key's state as the generated step leaves it: runs in queue order, the start run
        last with its version; the head; the operator's counters."""
        return [
            "runs = []",
            *self.runs_back(),
            "start_run.version = sp + (sk,)",
            "runs.append(start_run)",
            "state = ks.state",
            "state.queue = runs",
            "state.runs_changed = False",
            "state.new_start_partial_match = False",
            "ks.deadline = UNKNOWN",
            "ks.head = head",
            "ks.head_ts = t",
            "op.events_in += seen",
            "op.matches += matched",
            "op.timeouts += timed",
            "op._max_timestamp = newest",
            "if timers and timers[0] <= op._watermark:",
            "    del timers[: count_through(timers, op._watermark)]",
        ]


class _ChainWriter(_Writer):
    """Steps joined by ``next`` or ``followed_by``: the runs waiting at step ``i`` in the list
    ``g{i}``, as tuples ``(start event id, version, last event id, event, ...)``; every run at a
    step started before every run at an earlier step, so that the queue is the groups, the
    furthest step first."""

    def events(self, i: int) -> list[str]:
        """The events of a run waiting at step ``i``, in its tuple ``r``."""
        return [f"r[{3 + j}]" for j in range(i)]

    def groups(self, oldest_first: bool = True) -> list[int]:
        steps = list(range(1, self.n))
        return steps[::-1] if oldest_first else steps

    def deadline(self) -> str:
        expr = "NEVER"
        for i in self.groups(oldest_first=False):
            expr = f"g{i}[0][0][0] + W if g{i} else {expr}"
        return expr

    def unpack(self) -> list[str]:
        groups = ", ".join(f"g{i}" for i in self.groups())
        return [f"{groups}, = groups  # the runs waiting at each step, the furthest step first"]

    def time_out_runs(self) -> list[str]:
        """A prefix of the groups, oldest first."""
        nested: list[str] = []
        for i in reversed(self.groups()):  # build from the youngest group outwards
            partial = _literal(self.chain.pages[:i], self.events(i))
            block = [
                f"while g{i}:",
                f"    r = g{i}[0]",
                "    if r[0][0] > limit:",
                "        break",
                f"    del g{i}[0]",
            ]
            if self.handle_timeout:
                block += [
                    f"    out.append(make_output(TIMEOUT, key, {partial}, r[0][0] + W))",
                    "    timed += 1",
                ]
            if nested:
                block += [f"if not g{i}:  # a younger step's runs start later", *self.indent(nested, 1)]
            nested = block
        return nested

    def step(self) -> list[str]:
        """Every condition first (one that raises leaves the runs as they were: a bad record),
        then the runs, the furthest step first."""
        ask: list[str] = []
        for i in self.groups():
            ask += [f"if g{i}:", *self.indent(self.ask(i), 1)]
        ask += self.ask(0)
        apply: list[str] = ["eid = None  # the event's id, given on its first TAKE"]
        if self.window:
            apply.append("stale = False  # the oldest run left: the deadline moves")
        last = self.n - 1
        for i in self.groups():
            events = self.events(i)
            if i == last:
                match = _literal(self.chain.pages, [*events, "h"])
                take = [
                    *self.REGISTER,
                    f"for r in g{i}:",
                    f"    out.append(make_output(MATCH, key, {match}, ht))",
                    f"matched += len(g{i})",
                    f"g{i} = []",
                ]
                if self.window:
                    take.append("stale = True")
            else:
                moved = ", ".join(["r[0]", "r[1] + Z", "eid", *events, "h"])
                take = [*self.REGISTER, f"for r in g{i}:", f"    g{i + 1}.append(({moved}))", f"g{i} = []"]
            apply += [f"if g{i}:", f"    if x{i}:", *self.indent(take, 2)]
            if self.chain.joins[i] == "next":
                apply += ["    else:  # next: a run that does not take the event ends", f"        g{i} = []"]
                if self.window:
                    apply.append("        stale = True")
        start = [
            *self.REGISTER,
            "g1.append((eid, sp + (sk, 0), eid, h))",
            "sk += 1",
            *self.new_partial_match(),
        ]
        apply += ["if x0:", *self.indent(start, 1)]
        if self.window:
            apply += ["if stale:", f"    deadline = {self.deadline()}"]
        return self.decided(ask, apply)

    def runs_back(self) -> list[str]:
        lines = []
        for i in self.groups():
            lines += [
                f"for r in g{i}:",
                "    run = new(CS)",
                f"    run.slot = SLOT{i}",
                f"    run.previous_entry = (r[2], {self.chain.pages[i - 1]!r})",
                "    run.version = r[1]",
                "    run.order = r[0]",
                f"    run.match = {_literal(self.chain.pages[:i], self.events(i))}",
                "    runs.append(run)",
            ]
        return lines


class _FanOutWriter(_Writer):
    """``begin(a).followed_by_any(b).followed_by_any(c)``: a run waiting at ``b`` stays there
    when it takes a ``b`` and makes a run waiting at ``c``, which stays when it takes a ``c``.
    The runs of one start event are a *block* ``[start event id, version, mark, a's id, a,
    kids]``: its run at ``b`` and the runs it made, ``kids``, tuples ``(version, mark, b's id,
    b)``, which come before it in the queue, in the order it made them (a new run goes into the
    queue before the run it came from, and all of a block's runs share its start). Blocks are in
    start order, and every block has kids once any has. A run's version grows by one per event it
    takes and stays for: counted for all at once (``kb``, ``kc``), each run keeping the count it
    was made at (its mark)."""

    def deadline(self) -> str:
        return "blocks[0][0][0] + W if blocks else NEVER"

    def unpack(self) -> list[str]:
        return [
            "blocks = groups  # each start's runs, oldest first",
            "kb = kc = 0  # how many b, and c, the runs at b, and at c, took and stayed for",
            "nkids = 0  # how many runs wait at c",
            "for block in blocks:",
            "    nkids += len(block[5])",
        ]

    def time_out_runs(self) -> list[str]:
        """The oldest blocks, each its kids and then its run at ``b``."""
        lines = [
            "while blocks:",
            "    block = blocks[0]",
            "    if block[0][0] > limit:",
            "        break",
            "    del blocks[0]",
            "    kids = block[5]",
            "    nkids -= len(kids)",
        ]
        if self.handle_timeout:
            pages = self.chain.pages
            lines += [
                "    a = block[4]",
                "    for r in kids:",
                f"        out.append(make_output(TIMEOUT, key, {_literal(pages[:2], ['a', 'r[3]'])}, block[0][0] + W))",
                f"    out.append(make_output(TIMEOUT, key, {_literal(pages[:1], ['a'])}, block[0][0] + W))",
                "    timed += len(kids) + 1",
            ]
        return lines

    def step(self) -> list[str]:
        """The conditions in queue order (the oldest block's kids first, if there are any),
        then the matches of the runs at ``c``, the new runs at ``c``, the start run's."""
        pages = self.chain.pages
        ask = [
            "if blocks:",
            "    if nkids:",
            *self.indent(self.ask(2), 2),
            *self.indent(self.ask(1), 1),
            *self.ask(0),
        ]
        match = _literal(pages, ["a", "r[3]", "h"])
        apply = [
            "eid = None  # the event's id, given on its first TAKE",
            "if blocks:",
            "    if nkids and x2:  # every run at c matches, and stays",
            *self.indent(
                [
                    *self.REGISTER,
                    "for block in blocks:",
                    "    a = block[4]",
                    "    for r in block[5]:",
                    f"        out.append(make_output(MATCH, key, {match}, ht))",
                    "matched += nkids",
                    "kc += 1",
                ],
                2,
            ),
            "    if x1:  # every run at b makes a run at c, and stays",
            *self.indent(
                [
                    *self.REGISTER,
                    "for block in blocks:",
                    "    v = block[1]",
                    "    block[5].append((v[:-1] + (v[-1] + kb - block[2], 0), kc, eid, h))",
                    "nkids += len(blocks)",
                    "kb += 1",
                ],
                2,
            ),
            "if x0:",
            *self.indent(
                [
                    *self.REGISTER,
                    "blocks.append([eid, sp + (sk, 0), kb, eid, h, []])",
                    "sk += 1",
                    *self.new_partial_match(),
                ],
                1,
            ),
        ]
        return self.decided(ask, apply)

    def runs_back(self) -> list[str]:
        pages = self.chain.pages
        return [
            "for block in blocks:",
            "    order = block[0]",
            "    a = block[4]",
            "    for r in block[5]:",
            "        run = new(CS)",
            "        run.slot = SLOT2",
            f"        run.previous_entry = (r[2], {pages[1]!r})",
            "        v = r[0]",
            "        run.version = v[:-1] + (v[-1] + kc - r[1],)",
            "        run.order = order",
            f"        run.match = {_literal(pages[:2], ['a', 'r[3]'])}",
            "        runs.append(run)",
            "    run = new(CS)",
            "    run.slot = SLOT1",
            f"    run.previous_entry = (block[3], {pages[0]!r})",
            "    v = block[1]",
            "    run.version = v[:-1] + (v[-1] + kb - block[2],)",
            "    run.order = order",
            f"    run.match = {_literal(pages[:1], ['a'])}",
            "    runs.append(run)",
        ]


class ChainLoop:
    """The loop of one operator's chain pattern (``chain_of``), compiled on first use."""

    __slots__ = ("nfa", "chain", "window_timer", "index", "_loop")

    def __init__(self, nfa: NFA, chain: Chain, window_timer: int) -> None:
        self.nfa = nfa
        self.chain = chain
        self.window_timer = window_timer
        self.index = {name: i for i, name in enumerate(chain.states)}
        self._loop: Loop | None = None

    def loop(self) -> Loop:
        loop = self._loop
        if loop is None:
            loop = self._loop = self._compile()
        return loop

    def _compile(self) -> Loop:
        nfa, chain = self.nfa, self.chain
        shape = _FanOutWriter if chain.fans_out else _ChainWriter
        window = nfa.window_time if nfa.window_time > 0 else 0
        writer = shape(chain, window, self.window_timer, nfa.handle_timeout)
        names: dict[str, Any] = {
            "STALE": STALE_COUNTERS,
            "KEPT_TIMERS": KEPT_TIMERS,
            "NEVER": NEVER,
            "HIGH": LONG_MAX,
            "W": nfa.window_time,
            "WT": self.window_timer,
            "Z": (0,),
            "new": object.__new__,
            "CS": ComputationState,
            "UNKNOWN": UNKNOWN,
            "MATCH": MATCH,
            "TIMEOUT": TIMEOUT,
            "make_output": make_output,
            "ConditionError": ConditionError,
            "TimestampError": TimestampError,
            "to_timestamp": to_timestamp,
            "count_through": count_through,
            "bisect_left": bisect_left,
        }
        for i, name in enumerate(chain.states):
            names[f"F{i}"] = chain.conditions[i]
            names[f"P{i}"] = chain.pages[i]
            names[f"SLOT{i}"] = nfa._slots[name]  # noqa: SLF001  (the NFA's decision slots, as runs carry them)
        # generated from the compiled states; names (the user's step names) enter as repr() literals
        loop: Loop = generated("\n".join(writer.source()), "loop", names)
        return loop

    def enter(
        self, ks: KeyState, pathless: PathlessBuffer | None
    ) -> tuple[ComputationState, list[Any]] | None:
        """The key's start run and its runs as the loop keeps them (see the writers); None if
        its state does not have that shape (then the usual step runs)."""
        state = ks.state
        if pathless is None or ks.buffer is not pathless or state.completed_matches.queue:
            return None
        runs = state.queue
        if not runs:
            return None
        start_run = runs[-1]
        if start_run.order is not NO_START or self.index.get(start_run.state) != 0:
            return None
        runs = runs[:-1]
        groups = self._blocks(ks, runs) if self.chain.fans_out else self._groups(ks, runs)
        return None if groups is None else (start_run, groups)

    def _events(self, ks: KeyState, run: ComputationState, i: int) -> list[Any] | None:
        """The events of a run that waits at step ``i`` (None: not as many as it should have)."""
        match = own_match(ks.buffer, run)
        events = [event for page in dict.fromkeys(self.chain.pages[:i]) for event in match.get(page, ())]
        return events if len(events) == i else None

    def _groups(self, ks: KeyState, runs: list[ComputationState]) -> list[list[tuple[Any, ...]]] | None:
        """``_ChainWriter``'s groups, the furthest step first."""
        index = self.index
        n = len(self.chain.states)
        groups: list[list[tuple[Any, ...]]] = [[] for _ in range(n - 1)]
        step = n
        previous: Any = None
        for run in runs:
            i = index.get(run.state)
            order = run.order
            if (
                not i
                or i > step
                or run.previous_entry is None
                or (previous is not None and order <= previous)
            ):
                return None
            events = self._events(ks, run, i)
            if events is None:
                return None
            groups[n - 1 - i].append((order, run.version, run.previous_entry[0], *events))
            step = i
            previous = order
        return groups

    def _blocks(self, ks: KeyState, runs: list[ComputationState]) -> list[list[Any]] | None:
        """``_FanOutWriter``'s blocks: per start, its runs at ``c`` and then its run at ``b``."""
        index = self.index
        blocks: list[list[Any]] = []
        kids: list[tuple[Any, ...]] = []
        previous: Any = None
        for run in runs:
            i = index.get(run.state)
            order = run.order
            if not i or run.previous_entry is None or (previous is not None and order <= previous):
                return None
            events = self._events(ks, run, i)
            if events is None or (kids and order != kids[0][4]):
                return None
            if i == 2:
                kids.append((run.version, 0, run.previous_entry[0], events[1], order))
                continue
            blocks.append([order, run.version, 0, run.previous_entry[0], events[0], [k[:4] for k in kids]])
            kids = []
            previous = order
        return None if kids else blocks


def chain_loop(nfa: NFA, window_timer: int) -> ChainLoop | None:
    """The chain loop of an operator's NFA, or None (not a chain: ``chain_of`` says why)."""
    chain = chain_of(nfa)
    if isinstance(chain, str):
        return None
    return ChainLoop(nfa, chain, window_timer)


__all__ = ["Chain", "ChainLoop", "chain_loop", "chain_of"]
