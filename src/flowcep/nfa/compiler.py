"""Pattern -> NFA states, built back to front as Flink's ``NFACompiler``.

The structure follows Flink 2.3 closely, because the states it produces
(names, transition order, copies) decide the Dewey versions, the run order
and hence the exact matches: ending state first, then each pattern node from
the last to the first, then the start state.
"""

from __future__ import annotations

from typing import Any

from flowcep.nfa.conditions import TRUE, And, Cond, Not, atom
from flowcep.nfa.names import ENDING_STATE_NAME, STATE_NAME_DELIM, original_name
from flowcep.nfa.nfa import NFA
from flowcep.nfa.state import PROCEED, State, StateType
from flowcep.pattern.exceptions import MalformedPatternException
from flowcep.pattern.pattern import GroupPattern, Pattern, WithinType
from flowcep.pattern.quantifier import ConsumingStrategy, QuantifierProperty

_LOOPING = QuantifierProperty.LOOPING
_TIMES = QuantifierProperty.TIMES
_OPTIONAL = QuantifierProperty.OPTIONAL
_GREEDY = QuantifierProperty.GREEDY


class _NameHandler:
    """Unique internal state names as Flink's ``NFAStateNameHandler``: ``b``, ``b:0``, ``b:1``...

    A copy of state ``b:1`` (see ``_copy_without_transitive_nots``) becomes ``b:1:0``: names
    never collide, since runs find their state by name.
    """

    def __init__(self) -> None:
        self.used: set[str] = set()

    def check_unique(self, name: str) -> None:
        if name in self.used:
            raise MalformedPatternException(f"Duplicate pattern name: {name}. Names must be unique.")
        self.used.add(name)

    def clear(self) -> None:
        self.used.clear()

    def unique_internal_name(self, base: str) -> str:
        candidate = base
        counter = 0
        while candidate in self.used:
            candidate = f"{base}{STATE_NAME_DELIM}{counter}"
            counter += 1
        self.used.add(candidate)
        return candidate


def _window(pattern: Pattern, within_type: WithinType) -> int | None:
    return pattern.window_times.get(within_type)


def _is(pattern: Pattern, prop: QuantifierProperty) -> bool:
    return bool(pattern.quantifier.has_property(prop))


class _Compiler:
    def __init__(self, pattern: Pattern) -> None:
        self.names = _NameHandler()
        self.stop_states: dict[str, State] = {}
        self.states: list[State] = []
        self.window_times: dict[str, int] = {}
        self.window_time: int | None = None
        self.current_group: GroupPattern | None = None
        self.first_of_loop: dict[int, bool] = {}
        self.current: Pattern = pattern
        self.following: Pattern | None = None
        self.skip_strategy = pattern.skip_strategy
        self.original_state_map: dict[str, State] = {}

    # -- entry ----------------------------------------------------------------
    def compile(self) -> None:
        last = self.current
        self._check_name_uniqueness()
        self._check_skip_strategy()
        sink = self._create_ending_state()
        sink = self._create_middle_states(sink)
        self._create_start_state(sink)
        self._check_window_times()
        if (
            last.quantifier.consuming_strategy is ConsumingStrategy.NOT_FOLLOW
            and self.window_times.get(last.name, 0) <= 0
            and self.get_window_time()
            == 0  # (a negative window passes, as in Flink: see _create_middle_states)
        ):
            raise MalformedPatternException(
                "NotFollowedBy is not supported without windowTime as a last part of a Pattern!"
            )

    def get_window_time(self) -> int:
        return self.window_time if self.window_time is not None else 0

    # -- validation -------------------------------------------------------------
    def _check_skip_strategy(self) -> None:
        name = self.skip_strategy.pattern_name
        if name is None:
            return
        pattern: Pattern = self.current
        while pattern.previous is not None and pattern.name != name:
            pattern = pattern.previous
        if pattern.name != name:
            raise MalformedPatternException(
                "The pattern name specified in AfterMatchSkipStrategy can not be found in the given Pattern"
            )

    def _check_name_uniqueness(self) -> None:
        self.names.check_unique(ENDING_STATE_NAME)
        pattern: Pattern | None = self.current
        while pattern is not None:
            self._check_node_name(pattern)
            pattern = pattern.previous
        self.names.clear()

    def _check_node_name(self, pattern: Pattern) -> None:
        if isinstance(pattern, GroupPattern):
            inner: Pattern | None = pattern.raw_pattern
            while inner is not None:
                self._check_node_name(inner)
                inner = inner.previous
        else:
            self.names.check_unique(pattern.name)

    def _check_window_times(self) -> None:
        # Flink compares every per-state window (PREVIOUS_AND_CURRENT and quantifier windows).
        if self.window_time is not None and any(t > self.window_time for t in self.window_times.values()):
            raise MalformedPatternException(
                "The window length between the previous and current event cannot be larger than the window "
                "length between the first and last event for a Pattern."
            )

    # -- states -----------------------------------------------------------------
    def _new_state(self, name: str, state_type: StateType) -> State:
        state = State(self.names.unique_internal_name(name), state_type)
        self.states.append(state)
        return state

    def _create_state(self, state_type: StateType, is_take: bool) -> State:
        state = self._new_state(self.current.name, state_type)
        if is_take:
            times = self.current.times_
            previous_window = _window(self.current, WithinType.PREVIOUS_AND_CURRENT)
            if times is None and previous_window is not None:
                self.window_times[state.name] = previous_window
            elif times is not None and times.window_size is not None and STATE_NAME_DELIM in state.name:
                self.window_times[state.name] = times.window_size
        return state

    def _create_ending_state(self) -> State:
        end = self._new_state(ENDING_STATE_NAME, StateType.Final)
        self.window_time = _window(self.current, WithinType.FIRST_AND_LAST)
        return end

    def _create_stop_state(self, not_condition: Cond, name: str) -> State:
        stop = self.stop_states.get(name)
        if stop is None:
            stop = self._new_state(name, StateType.Stop)
            stop.add_take(None, not_condition)
            self.stop_states[name] = stop
        return stop

    def _create_middle_states(self, sink: State) -> State:
        last_sink = sink
        while self.current.previous is not None:
            strategy = self.current.quantifier.consuming_strategy
            if strategy is ConsumingStrategy.NOT_FOLLOW:
                # notFollowedBy becomes stop edges on the following states, except at the end
                if (
                    _window(self.current, WithinType.PREVIOUS_AND_CURRENT) is not None
                    or self.get_window_time() > 0
                ) and last_sink.state_type is StateType.Final:
                    not_follow = self._create_state(StateType.Pending, True)
                    not_condition = self._take_condition(self.current)
                    stop = self._create_stop_state(not_condition, self.current.name)
                    not_follow.add_proceed(stop, not_condition)
                    not_follow.add_ignore(None, Not(not_condition))
                    last_sink = not_follow
            elif strategy is ConsumingStrategy.NOT_NEXT:
                not_next = self._create_state(StateType.Normal, True)
                not_condition = self._take_condition(self.current)
                stop = self._create_stop_state(not_condition, self.current.name)
                if last_sink.state_type is StateType.Final:
                    # IGNORE, not PROCEED: the match must not complete on this same event
                    not_next.add_ignore(last_sink, Not(not_condition))
                else:
                    not_next.add_proceed(last_sink, Not(not_condition))
                not_next.add_proceed(stop, not_condition)
                last_sink = not_next
            else:
                last_sink = self._convert_pattern(last_sink)
            self.following = self.current
            self.current = self.current.previous
            window = _window(self.current, WithinType.FIRST_AND_LAST)
            if window is not None and window < (self.window_time if self.window_time is not None else 2**63):
                self.window_time = window
        return last_sink

    def _create_start_state(self, sink: State) -> State:
        begin = self._convert_pattern(sink)
        begin.make_start()
        return begin

    def _convert_pattern(self, sink: State) -> State:
        if _is(self.current, _LOOPING):
            # once the loop has started, nots before the optional states no longer apply
            self._set_first_of_loop(False)
            looping_sink = self._copy_without_transitive_nots(sink)
            looping = self._create_looping(looping_sink)
            self._set_first_of_loop(True)
            last_sink = self._create_times_state(looping, sink, self.current.times_)
        elif _is(self.current, _TIMES):
            last_sink = self._create_times_state(sink, sink, self.current.times_)
        else:
            last_sink = self._create_singleton_state(
                sink, sink, None, None, self._is_optional(), default=True
            )
        self._add_stop_states(last_sink)
        return last_sink

    # -- negations --------------------------------------------------------------
    def _current_not_conditions(self) -> list[tuple[Cond, str]]:
        result: list[tuple[Cond, str]] = []
        pattern = self.current
        while pattern.previous is not None and (
            _is(pattern.previous, _OPTIONAL)
            or pattern.previous.quantifier.consuming_strategy is ConsumingStrategy.NOT_FOLLOW
        ):
            pattern = pattern.previous
            if pattern.quantifier.consuming_strategy is ConsumingStrategy.NOT_FOLLOW:
                result.append((self._take_condition(pattern), pattern.name))
        return result

    def _add_stop_states(self, state: State) -> None:
        for not_condition, name in self._current_not_conditions():
            stop = self._create_stop_state(not_condition, name)
            state.add_proceed(stop, not_condition)

    def _add_stop_state_to_looping(self, state: State) -> None:
        following = self.following
        if following is not None and following.quantifier.consuming_strategy is ConsumingStrategy.NOT_FOLLOW:
            not_condition = self._take_condition(following)
            stop = self._create_stop_state(not_condition, following.name)
            state.add_proceed(stop, not_condition)

    def _copy_without_transitive_nots(self, sink: State, path: tuple[State, ...] = ()) -> State:
        not_conditions = self._current_not_conditions()
        if not not_conditions or not _is(self.current, _OPTIONAL):
            return sink
        if any(state is sink for state in path):
            # Flink copies PROCEED targets recursively without remembering what it copied: on a
            # cycle it never stops (StackOverflowError when the job is built)
            raise MalformedPatternException(
                f"Cannot compile the pattern: the optional step {self.current.name!r} after "
                f"{', '.join(repr(name) for _, name in not_conditions)} (notFollowedBy/notNext) "
                f"leads into a cycle of PROCEED edges through state {sink.name!r}, which Flink's "
                "compiler copies without end (Flink 2.3 fails with a StackOverflowError). Make a "
                "step of the looping group that follows mandatory."
            )
        path = (*path, sink)
        copy = self._new_state(sink.name, sink.state_type)
        not_names = {name for _, name in not_conditions}
        for t in sink.transitions:
            if t.action is PROCEED:
                target = t.target
                if target.state_type is StateType.Stop:
                    if target.name in not_names:
                        continue
                else:
                    target = self._copy_without_transitive_nots(target, path)
                copy.add_transition(t.action, target, t.condition)
            else:
                copy.add_transition(t.action, copy if t.target is sink else t.target, t.condition)
        return copy

    def _copy(self, state: State) -> State:
        copy = self._new_state(original_name(state.name), state.state_type)
        for t in state.transitions:
            copy.add_transition(t.action, copy if t.target is state else t.target, t.condition)
        return copy

    # -- quantifiers ------------------------------------------------------------
    def _create_times_state(self, sink: State, proceed: State, times: Any) -> State:
        last_sink = sink
        self._set_first_of_loop(False)
        until = self._until(self.current)
        inner_ignore = self._extend_with_until(self._inner_ignore_condition(self.current), until, False)
        take = self._extend_with_until(self._take_condition(self.current), until, True)
        if _is(self.current, _GREEDY) and times.from_ != times.to:
            self._update_with_greedy_condition(sink, take)
        for _ in range(times.from_, times.to):
            last_sink = self._create_singleton_state(last_sink, proceed, take, inner_ignore, True)
            self._add_stop_state_to_looping(last_sink)
        for _ in range(times.from_ - 1):
            last_sink = self._create_singleton_state(last_sink, None, take, inner_ignore, False)
            self._add_stop_state_to_looping(last_sink)
        self._set_first_of_loop(True)
        return self._create_singleton_state(
            last_sink, proceed, take, self._ignore_condition(self.current), self._is_optional()
        )

    def _create_singleton_state(
        self,
        sink: State,
        proceed: State | None,
        take: Cond | None,
        ignore: Cond | None,
        is_optional: bool,
        default: bool = False,
    ) -> State:
        if default:
            take = self._take_condition(self.current)
            ignore = self._ignore_condition(self.current)
        if isinstance(self.current, GroupPattern):
            return self._create_group_pattern_state(self.current, sink, proceed, is_optional)
        assert take is not None
        singleton = self._create_state(StateType.Normal, True)
        # taking an event cancels the notFollowedBy's before an optional node
        take_sink = self._copy_without_transitive_nots(sink)
        singleton.add_take(take_sink, take)
        proceed_condition = self._true_condition()
        if is_optional:
            assert proceed is not None
            if _is(self.current, _GREEDY):
                until = self._until(self.current)
                until_sink = self.original_state_map.get(proceed.name)
                if until is not None and until_sink is not None:
                    singleton.add_proceed(until_sink, And(proceed_condition, until))
                singleton.add_proceed(
                    proceed, And(proceed_condition, Not(until)) if until is not None else proceed_condition
                )
            else:
                singleton.add_proceed(proceed, proceed_condition)
        if ignore is not None:
            if is_optional or self._is_head_of_optional_group(self.current):
                ignore_state = self._create_state(StateType.Normal, False)
                ignore_state.add_take(take_sink, take)
                ignore_state.add_ignore(None, ignore)
                self._add_stop_states(ignore_state)
            else:
                ignore_state = singleton
            singleton.add_ignore(ignore_state, ignore)
        return singleton

    def _create_group_pattern_state(
        self, group: GroupPattern, sink: State, proceed: State | None, is_optional: bool
    ) -> State:
        proceed_condition = self._true_condition()
        saved = (self.current, self.following, self.current_group)
        self.current_group = group
        self.current = group.raw_pattern
        last_sink = self._create_middle_states(sink)
        last_sink = self._convert_pattern(last_sink)
        if is_optional:
            # the group's head PROCEEDs to the state following the group
            assert proceed is not None
            last_sink.add_proceed(proceed, proceed_condition)
        self.current, self.following, self.current_group = saved
        return last_sink

    def _create_looping(self, sink: State) -> State:
        if isinstance(self.current, GroupPattern):
            return self._create_looping_group_pattern_state(self.current, sink)
        until = self._until(self.current)
        ignore = self._extend_with_until(self._inner_ignore_condition(self.current), until, False)
        take = self._extend_with_until(self._take_condition(self.current), until, True)
        assert take is not None
        proceed_condition = self._true_condition()
        looping = self._create_state(StateType.Normal, True)
        if _is(self.current, _GREEDY):
            if until is not None:
                sink_copy = self._copy(sink)
                looping.add_proceed(sink_copy, And(proceed_condition, until))
                self.original_state_map[sink.name] = sink_copy
            # the "until fired" branch goes to the copy, which the greedy update below leaves alone
            looping.add_proceed(
                sink, And(proceed_condition, Not(until)) if until is not None else proceed_condition
            )
            self._update_with_greedy_condition(sink, self._take_condition(self.current))
        else:
            looping.add_proceed(sink, proceed_condition)
        looping.add_take(None, take)
        self._add_stop_state_to_looping(looping)
        if ignore is not None:
            ignore_state = self._create_state(StateType.Normal, False)
            ignore_state.add_take(looping, take)
            ignore_state.add_ignore(None, ignore)
            looping.add_ignore(ignore_state, ignore)
            self._add_stop_state_to_looping(ignore_state)
        return looping

    def _create_looping_group_pattern_state(self, group: GroupPattern, sink: State) -> State:
        proceed_condition = self._true_condition()
        saved = (self.current, self.following, self.current_group)
        dummy = self._create_state(StateType.Normal, True)
        self.current_group = group
        self.current = group.raw_pattern
        last_sink = self._create_middle_states(dummy)
        last_sink = self._convert_pattern(last_sink)
        last_sink.add_proceed(sink, proceed_condition)
        dummy.add_proceed(last_sink, proceed_condition)
        self.current, self.following, self.current_group = saved
        return last_sink

    def _update_with_greedy_condition(self, state: State, take: Cond | None) -> None:
        not_take = Not(take if take is not None else TRUE)
        for t in state.transitions:
            t.condition = And(t.condition if t.condition is not None else TRUE, not_take)

    # -- groups -----------------------------------------------------------------
    def _set_first_of_loop(self, value: bool) -> None:
        if isinstance(self.current, GroupPattern):
            self.first_of_loop[id(self.current)] = value

    def _is_current_group_first_of_loop(self) -> bool:
        assert self.current_group is not None
        return self.first_of_loop.get(id(self.current_group), True)

    def _head_of_group(self, pattern: Pattern) -> bool:
        return self.current_group is not None and pattern.previous is None

    def _is_head_of_optional_group(self, pattern: Pattern) -> bool:
        # only the group's first repetition: later ones ignore back into themselves (Flink)
        if not self._head_of_group(pattern):
            return False
        assert self.current_group is not None
        return self._is_current_group_first_of_loop() and _is(self.current_group, _OPTIONAL)

    def _is_optional(self) -> bool:
        return _is(self.current, _OPTIONAL)

    # -- conditions -------------------------------------------------------------
    def _group_until(self) -> Cond | None:
        if self.current_group is not None and self.current_group.until_condition is not None:
            return atom(self.current_group.until_condition)
        return None

    def _until(self, pattern: Pattern) -> Cond | None:
        return atom(pattern.until_condition) if pattern.until_condition is not None else None

    @staticmethod
    def _extend_with_until(condition: Cond | None, until: Cond | None, is_take: bool) -> Cond | None:
        if until is not None and condition is not None:
            return And(Not(until), condition)
        if until is not None and is_take:
            return Not(until)
        return condition

    def _take_condition(self, pattern: Pattern) -> Cond:
        take: Cond | None = atom(pattern.condition)
        group_until = self._group_until()
        if group_until is not None:
            take = self._extend_with_until(take, group_until, True)
        assert take is not None
        return take

    def _true_condition(self) -> Cond:
        condition: Cond | None = TRUE
        group_until = self._group_until()
        if group_until is not None:
            condition = self._extend_with_until(condition, group_until, True)
        assert condition is not None
        return condition

    def _strategy_ignore(self, pattern: Pattern, strategy: ConsumingStrategy) -> Cond | None:
        ignore: Cond | None
        if strategy is ConsumingStrategy.SKIP_TILL_NEXT:
            ignore = Not(atom(pattern.condition))
        elif strategy is ConsumingStrategy.SKIP_TILL_ANY:
            ignore = TRUE
        else:
            ignore = None
        group_until = self._group_until()
        if group_until is not None:
            ignore = self._extend_with_until(ignore, group_until, False)
        return ignore

    def _ignore_condition(self, pattern: Pattern) -> Cond | None:
        strategy = pattern.quantifier.consuming_strategy
        if self._head_of_group(pattern):
            assert self.current_group is not None
            quantifier = self.current_group.quantifier
            if self._is_current_group_first_of_loop():
                strategy = quantifier.consuming_strategy
            else:
                strategy = quantifier.inner_consuming_strategy
        return self._strategy_ignore(pattern, strategy)

    def _inner_ignore_condition(self, pattern: Pattern) -> Cond | None:
        strategy = pattern.quantifier.inner_consuming_strategy
        if self._head_of_group(pattern):
            assert self.current_group is not None
            strategy = self.current_group.quantifier.inner_consuming_strategy
        return self._strategy_ignore(pattern, strategy)


class NFACompiler:
    """``NFACompiler.compile(pattern, timeout_handling=False) -> NFA``."""

    @staticmethod
    def compile_states(pattern: Pattern) -> tuple[list[State], int, dict[str, int]]:
        """The states, the global window (0 = none) and the per-state windows."""
        compiler = _Compiler(pattern)
        compiler.compile()
        return compiler.states, compiler.get_window_time(), compiler.window_times

    @staticmethod
    def compile(pattern: Pattern, timeout_handling: bool = False) -> NFA:
        states, window_time, window_times = NFACompiler.compile_states(pattern)
        return NFA(states, window_times, window_time, timeout_handling, pattern.skip_strategy)

    @staticmethod
    def can_produce_empty_matches(pattern: Pattern) -> bool:
        """Whether the start state reaches the final state through PROCEED edges only."""
        states, _, _ = NFACompiler.compile_states(pattern)
        start = next(s for s in states if s.is_start)
        seen: set[int] = set()
        stack = [start]
        while stack:
            state = stack.pop()
            if id(state) in seen:
                continue
            seen.add(id(state))
            for t in state.transitions:
                if t.action is PROCEED:
                    if t.target.is_final:
                        return True
                    stack.append(t.target)
        return False

    compileFactory = compile
    canProduceEmptyMatches = can_produce_empty_matches
