// The Flink CEP 2.3 oracle of flowcep's differential tests and benchmarks.
//
// Compiled and run by tests/oracle/flink_oracle.py against the jars of PyPI's
// apache-flink-libraries==2.3.0 (flink-cep, flink-dist, log4j). Written for flowcep;
// the case format is documented in docs/oracle-format.md.
//
//   java FlinkCepOracle cases IN.json OUT.jsonl [BATCH]   run test cases, one JSON result per line
//   java FlinkCepOracle serve                              the same for each stdin line "IN OUT BATCH"
//   java FlinkCepOracle bench SPEC.json EVENTS.csv         run one workload for throughput, print JSON
//
// Every case runs in a real local Flink job: keyed stream, event time, a per-event
// watermark of (max timestamp so far - out_of_orderness - 1), CEP.pattern(...)
// with a late-data side output and a PatternProcessFunction that may also be a
// TimedOutPartialMatchHandler, parallelism 1. Many cases share one job: case i's
// timestamps are shifted by (i + 1) * OFFSET so that one watermark generator serves
// all of them, and each case gets its own filter -> keyBy -> CEP pipeline.
// If a shared job fails at run time, its cases are re-run one job each.

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.flink.api.common.eventtime.TimestampAssignerSupplier;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkGeneratorSupplier;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.FilterFunction;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.cep.CEP;
import org.apache.flink.cep.PatternStream;
import org.apache.flink.cep.functions.PatternProcessFunction;
import org.apache.flink.cep.functions.TimedOutPartialMatchHandler;
import org.apache.flink.cep.nfa.aftermatch.AfterMatchSkipStrategy;
import org.apache.flink.cep.pattern.Pattern;
import org.apache.flink.cep.pattern.WithinType;
import org.apache.flink.cep.pattern.conditions.IterativeCondition;
import org.apache.flink.cep.pattern.conditions.SimpleCondition;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamUtils;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

public class FlinkCepOracle {

    static final ObjectMapper JSON = new ObjectMapper();
    /** Timestamp shift between two cases of one job; case timestamps must stay below OFFSET / 4. */
    static final long OFFSET = 1L << 40;

    // ------------------------------------------------------------------ events

    /** The event of every case: a Flink POJO (public fields, no-arg constructor). */
    public static class Event {
        public int id;
        public String key;
        public String name;
        public double price;
        public double volume;
        public long ts;
        /** Index of the case inside its job (0 in bench mode). */
        public int slot;
        /** Index of the event in its case's event list. */
        public int idx;
        /** Timestamp shift of the case inside its job. */
        public long shift;

        public Event() {}

        @Override
        public String toString() {
            return name + "#" + id + "@" + ts;
        }
    }

    /** Events of the running job, read by the source map inside the same JVM (local MiniCluster). */
    static volatile Event[] SOURCE = new Event[0];

    /** Output lines of the running job ("M", "T", "L" lines), written by its functions in this JVM. */
    static final ConcurrentLinkedQueue<String> OUT = new ConcurrentLinkedQueue<>();

    static volatile long FIRST_NANOS = 0;
    static volatile long END_NANOS = 0;
    /** The JVM's CPU time (all its threads) at the first source element and at the CEP operator's close. */
    static volatile long FIRST_CPU_NANOS = 0;
    static volatile long END_CPU_NANOS = 0;
    /** CPU time of the CEP task's thread at the process function's open and at its close (-1: unknown). */
    static volatile long CEP_OPEN_CPU_NANOS = -1;
    static volatile long CEP_CLOSE_CPU_NANOS = -1;
    static final AtomicLong MATCHES = new AtomicLong();
    /** The event whose watermark is passing through the job, null otherwise (keying "chain" only). */
    static volatile Event WATERMARK_OF = null;

    /**
     * When a result of case {@code slot} was emitted: the index of the case's event whose
     * watermark released it, or -1 for a later watermark (another case's, or the end of input).
     */
    static int emittedAt(int slot) {
        Event w = WATERMARK_OF;
        return w != null && w.slot == slot ? w.idx : -1;
    }
    static final AtomicLong TIMEOUTS = new AtomicLong();

    public static class FromSource implements MapFunction<Long, Event> {
        @Override
        public Event map(Long i) {
            if (i == 0L) {
                FIRST_NANOS = System.nanoTime();
                FIRST_CPU_NANOS = processCpuNanos();
            }
            return SOURCE[(int) (long) i];
        }
    }

    public static class SlotFilter implements FilterFunction<Event> {
        final int slot;

        SlotFilter(int slot) {
            this.slot = slot;
        }

        @Override
        public boolean filter(Event e) {
            return e.slot == slot;
        }
    }

    public static class KeyOf implements KeySelector<Event, String> {
        @Override
        public String getKey(Event e) {
            return e.key;
        }
    }

    // ------------------------------------------------------------------ watermarks

    /** Emits max_ts - out_of_orderness - 1 after every event (deterministic, no periodic emission). */
    public static class PerEventWatermarks implements WatermarkGenerator<Event> {
        private final long[] outOfOrderness;
        private long max = Long.MIN_VALUE;

        PerEventWatermarks(long[] outOfOrderness) {
            this.outOfOrderness = outOfOrderness;
        }

        @Override
        public void onEvent(Event e, long ts, WatermarkOutput out) {
            if (ts > max) {
                max = ts;
            }
            // the watermark runs through the chained CEP operators synchronously (keying
            // "chain"): what they emit meanwhile was released by the watermark of this event
            WATERMARK_OF = e;
            try {
                out.emitWatermark(new Watermark(max - outOfOrderness[e.slot] - 1));
            } finally {
                WATERMARK_OF = null;
            }
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput out) {}
    }

    static WatermarkStrategy<Event> perEventStrategy(long[] outOfOrderness) {
        WatermarkGeneratorSupplier<Event> gen = ctx -> new PerEventWatermarks(outOfOrderness);
        return WatermarkStrategy.forGenerator(gen)
                .withTimestampAssigner((TimestampAssignerSupplier<Event>) ctx -> (e, prev) -> e.ts + e.shift);
    }

    // ------------------------------------------------------------------ conditions

    static List<Event> eventsOf(IterativeCondition.Context<Event> ctx, String step) throws Exception {
        List<Event> out = new ArrayList<>();
        for (Event e : ctx.getEventsForPattern(step)) {
            out.add(e);
        }
        return out;
    }

    /** The fixed condition library, identical to tests/oracle/conditions in flowcep_runner.py. */
    public static class Cond extends IterativeCondition<Event> {
        final String kind;
        final String s;
        final double x;
        final String[] names;

        Cond(String kind, String s, double x, String[] names) {
            this.kind = kind;
            this.s = s;
            this.x = x;
            this.names = names;
        }

        @Override
        public boolean filter(Event e, Context<Event> ctx) throws Exception {
            countEval(e);
            switch (kind) {
                case "sum_lt": {
                    double sum = 0.0;
                    for (Event p : eventsOf(ctx, s)) {
                        sum += p.price;
                    }
                    return sum + e.price < x;
                }
                case "gt_last": {
                    List<Event> l = eventsOf(ctx, s);
                    return l.isEmpty() || e.price > l.get(l.size() - 1).price;
                }
                case "lt_last": {
                    List<Event> l = eventsOf(ctx, s);
                    return l.isEmpty() || e.price < l.get(l.size() - 1).price;
                }
                case "count_lt":
                    return eventsOf(ctx, s).size() < x;
                case "ts_since_first_lt": {
                    List<Event> l = eventsOf(ctx, s);
                    return l.isEmpty() || (ctx.timestamp() - e.shift) - l.get(0).ts < x;
                }
                case "stock_rise": {
                    List<Event> l = eventsOf(ctx, s);
                    if (l.isEmpty()) {
                        return e.volume > 1000;
                    }
                    double sum = 0.0;
                    for (Event p : l) {
                        sum += p.price;
                    }
                    return e.price > sum / l.size();
                }
                case "volume_drop": {
                    List<Event> l = eventsOf(ctx, s);
                    return !l.isEmpty() && e.volume < 0.8 * l.get(l.size() - 1).volume;
                }
                default:
                    throw new IllegalStateException("unknown iterative condition " + kind);
            }
        }
    }

    public static class SimpleCond extends SimpleCondition<Event> {
        final String kind;
        final double x;
        final String[] names;

        SimpleCond(String kind, double x, String[] names) {
            this.kind = kind;
            this.x = x;
            this.names = names;
        }

        @Override
        public boolean filter(Event e) {
            countEval(e);
            switch (kind) {
                case "true":
                    return true;
                case "name_eq":
                    return e.name.equals(names[0]);
                case "name_ne":
                    return !e.name.equals(names[0]);
                case "name_in":
                    for (String n : names) {
                        if (e.name.equals(n)) {
                            return true;
                        }
                    }
                    return false;
                case "price_gt":
                    return e.price > x;
                case "price_lt":
                    return e.price < x;
                case "volume_gt":
                    return e.volume > x;
                case "volume_lt":
                    return e.volume < x;
                default:
                    throw new IllegalStateException("unknown condition " + kind);
            }
        }
    }

    /** ["where", kind, args...] -> condition; kind null -> null (Flink's NPE). */
    static IterativeCondition<Event> condition(JsonNode call) {
        JsonNode k = call.get(1);
        if (k == null || k.isNull()) {
            return null;
        }
        String kind = k.asText();
        switch (kind) {
            case "true":
                return new SimpleCond(kind, 0, null);
            case "name_eq":
            case "name_ne":
                return new SimpleCond(kind, 0, new String[] {call.get(2).asText()});
            case "name_in": {
                JsonNode arr = call.get(2);
                String[] names = new String[arr.size()];
                for (int i = 0; i < names.length; i++) {
                    names[i] = arr.get(i).asText();
                }
                return new SimpleCond(kind, 0, names);
            }
            case "price_gt":
            case "price_lt":
            case "volume_gt":
            case "volume_lt":
                return new SimpleCond(kind, call.get(2).asDouble(), null);
            case "gt_last":
            case "lt_last":
            case "stock_rise":
            case "volume_drop":
                return new Cond(kind, call.get(2).asText(), 0, null);
            case "sum_lt":
            case "count_lt":
            case "ts_since_first_lt":
                return new Cond(kind, call.get(2).asText(), call.get(3).asDouble(), null);
            default:
                throw new OracleError("unknown condition " + kind);
        }
    }

    /** A case that exceeds the oracle's work limits (explosive pattern); reported, not compared. */
    public static class OracleLimitExceeded extends RuntimeException {
        final int slot;

        OracleLimitExceeded(int slot, String m) {
            super(m);
            this.slot = slot;
        }
    }

    /** Slot of the case that last evaluated a condition or emitted a result (failure suspect). */
    static volatile int LAST_SLOT = -1;

    /** Condition evaluations and outputs per case slot of the running job, with their limits. */
    static long[] EVALS = new long[1];
    static int[] OUTPUTS = new int[1];
    static long MAX_EVALS = Long.MAX_VALUE;
    static int MAX_OUTPUTS = Integer.MAX_VALUE;

    static void countEval(Event e) {
        LAST_SLOT = e.slot;
        if (++EVALS[e.slot] > MAX_EVALS) {
            throw new OracleLimitExceeded(e.slot, "more than " + MAX_EVALS + " condition evaluations");
        }
    }

    static void addOutput(int slot, String line) {
        LAST_SLOT = slot;
        if (++OUTPUTS[slot] > MAX_OUTPUTS) {
            throw new OracleLimitExceeded(slot, "more than " + MAX_OUTPUTS + " results");
        }
        OUT.add(line);
    }

    /** A problem of the case file itself, never a Flink answer. */
    public static class OracleError extends RuntimeException {
        OracleError(String m) {
            super(m);
        }
    }

    // ------------------------------------------------------------------ patterns

    static AfterMatchSkipStrategy skipStrategy(JsonNode skip) {
        if (skip == null || skip.isNull()) {
            return AfterMatchSkipStrategy.noSkip();
        }
        String kind = skip.get(0).asText();
        boolean throwOnMiss = skip.size() > 2 && skip.get(2).asBoolean();
        switch (kind) {
            case "no_skip":
                return AfterMatchSkipStrategy.noSkip();
            case "skip_to_next":
                return AfterMatchSkipStrategy.skipToNext();
            case "skip_past_last_event":
                return AfterMatchSkipStrategy.skipPastLastEvent();
            case "skip_to_first":
                return throwOnMiss
                        ? AfterMatchSkipStrategy.skipToFirst(skip.get(1).asText()).throwExceptionOnMiss()
                        : AfterMatchSkipStrategy.skipToFirst(skip.get(1).asText());
            case "skip_to_last":
                return throwOnMiss
                        ? AfterMatchSkipStrategy.skipToLast(skip.get(1).asText()).throwExceptionOnMiss()
                        : AfterMatchSkipStrategy.skipToLast(skip.get(1).asText());
            default:
                throw new OracleError("unknown skip strategy " + kind);
        }
    }

    static Duration ms(JsonNode n) {
        return Duration.ofMillis(n.asLong());
    }

    static boolean has(JsonNode call, int i) {
        return call.size() > i && !call.get(i).isNull();
    }

    /** Builds a pattern from its call list; skip is used by the first call (begin) only. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static Pattern<Event, ?> build(JsonNode calls, AfterMatchSkipStrategy skip) {
        Pattern p = null;
        for (int i = 0; i < calls.size(); i++) {
            JsonNode c = calls.get(i);
            String op = c.get(0).asText();
            JsonNode arg = c.size() > 1 ? c.get(1) : null;
            if (i == 0 && !op.equals("begin")) {
                throw new OracleError("a pattern starts with begin");
            }
            switch (op) {
                case "begin":
                    if (i != 0) {
                        throw new OracleError("begin inside a pattern");
                    }
                    if (arg.isArray()) {
                        Pattern group = build(arg, null);
                        p = skip == null ? Pattern.begin(group) : Pattern.begin(group, skip);
                    } else {
                        p = skip == null ? Pattern.begin(arg.asText()) : Pattern.begin(arg.asText(), skip);
                    }
                    break;
                case "next":
                    p = arg.isArray() ? p.next(build(arg, null)) : p.next(arg.asText());
                    break;
                case "followed_by":
                    p = arg.isArray() ? p.followedBy(build(arg, null)) : p.followedBy(arg.asText());
                    break;
                case "followed_by_any":
                    p = arg.isArray() ? p.followedByAny(build(arg, null)) : p.followedByAny(arg.asText());
                    break;
                case "not_next":
                    p = p.notNext(arg.asText());
                    break;
                case "not_followed_by":
                    p = p.notFollowedBy(arg.asText());
                    break;
                case "where":
                    p = p.where(condition(c));
                    break;
                case "or":
                    p = p.or(condition(c));
                    break;
                case "until":
                    p = p.until(condition(c));
                    break;
                case "times":
                    if (has(c, 3)) {
                        p = has(c, 2) ? p.times(c.get(1).asInt(), c.get(2).asInt(), ms(c.get(3)))
                                : p.times(c.get(1).asInt(), ms(c.get(3)));
                    } else {
                        p = has(c, 2) ? p.times(c.get(1).asInt(), c.get(2).asInt()) : p.times(c.get(1).asInt());
                    }
                    break;
                case "times_or_more":
                    p = has(c, 2) ? p.timesOrMore(c.get(1).asInt(), ms(c.get(2))) : p.timesOrMore(c.get(1).asInt());
                    break;
                case "one_or_more":
                    p = has(c, 1) ? p.oneOrMore(ms(c.get(1))) : p.oneOrMore();
                    break;
                case "optional":
                    p = p.optional();
                    break;
                case "greedy":
                    p = p.greedy();
                    break;
                case "consecutive":
                    p = p.consecutive();
                    break;
                case "allow_combinations":
                    p = p.allowCombinations();
                    break;
                case "within":
                    if (has(c, 2)) {
                        p = p.within(ms(c.get(1)), WithinType.valueOf(c.get(2).asText()));
                    } else {
                        p = p.within(ms(c.get(1)));
                    }
                    break;
                default:
                    throw new OracleError("unknown call " + op);
            }
        }
        return p;
    }

    // ------------------------------------------------------------------ output

    static String matchJson(Map<String, List<Event>> match) {
        ObjectNode o = JSON.createObjectNode();
        for (Map.Entry<String, List<Event>> en : match.entrySet()) {
            ArrayNode ids = o.putArray(en.getKey());
            for (Event e : en.getValue()) {
                ids.add(e.id);
            }
        }
        return o.toString();
    }

    /**
     * Match -> "M\tslot\tat\t{json}"; timeout -> "T\tslot\tat\tts\t{json}", both into OUT; at:
     * see emittedAt.
     */
    public static class Proc extends PatternProcessFunction<Event, String>
            implements TimedOutPartialMatchHandler<Event> {
        final int slot;
        final long shift;

        Proc(int slot, long shift) {
            this.slot = slot;
            this.shift = shift;
        }

        @Override
        public void processMatch(Map<String, List<Event>> match, Context ctx, Collector<String> out) {
            addOutput(slot, "M\t" + slot + "\t" + emittedAt(slot) + "\t" + matchJson(match));
        }

        @Override
        public void processTimedOutMatch(Map<String, List<Event>> match, Context ctx) {
            addOutput(
                    slot,
                    "T\t" + slot + "\t" + emittedAt(slot) + "\t" + (ctx.timestamp() - shift) + "\t" + matchJson(match));
        }
    }

    /** The same without TimedOutPartialMatchHandler (case field "timeout": false). */
    public static class ProcNoTimeout extends PatternProcessFunction<Event, String> {
        final int slot;

        ProcNoTimeout(int slot) {
            this.slot = slot;
        }

        @Override
        public void processMatch(Map<String, List<Event>> match, Context ctx, Collector<String> out) {
            addOutput(slot, "M\t" + slot + "\t" + emittedAt(slot) + "\t" + matchJson(match));
        }
    }

    public static class LateLine implements MapFunction<Event, String> {
        @Override
        public String map(Event e) {
            String line = "L\t" + e.slot + "\t" + e.id;
            addOutput(e.slot, line);
            return line;
        }
    }

    // ------------------------------------------------------------------ cases

    static class Case {
        JsonNode json;
        String id;
        List<Event> events = new ArrayList<>();
        long outOfOrderness;
        boolean timeout;
        ObjectNode result;
        Pattern<Event, ?> pattern;
    }

    static ObjectNode errorJson(Throwable t, String stage) {
        ObjectNode e = JSON.createObjectNode();
        e.put("type", t.getClass().getSimpleName());
        e.put("message", t.getMessage());
        e.put("stage", stage);
        return e;
    }

    static Throwable rootCause(Throwable t) {
        Throwable r = t;
        while (r.getCause() != null && r.getCause() != r) {
            r = r.getCause();
        }
        return r;
    }

    static Case parseCase(JsonNode j) {
        Case c = new Case();
        c.json = j;
        c.id = j.get("id").asText();
        c.outOfOrderness = j.has("out_of_orderness") ? j.get("out_of_orderness").asLong() : 0;
        c.timeout = !j.has("timeout") || j.get("timeout").asBoolean();
        c.result = JSON.createObjectNode();
        c.result.put("id", c.id);
        c.result.putNull("error");
        c.result.putArray("matches");
        c.result.putArray("timeouts");
        c.result.putArray("late");
        int idx = 0;
        for (JsonNode ev : j.get("events")) {
            Event e = new Event();
            e.id = ev.has("id") ? ev.get("id").asInt() : idx;
            e.key = ev.has("key") ? ev.get("key").asText() : "k";
            e.name = ev.get("name").asText();
            e.price = ev.has("price") ? ev.get("price").asDouble() : 0.0;
            e.volume = ev.has("volume") ? ev.get("volume").asDouble() : 0.0;
            e.ts = ev.get("ts").asLong();
            if (e.ts < 0 || e.ts >= OFFSET / 4) {
                throw new OracleError("event timestamps must be in [0, 2^38)");
            }
            e.idx = idx;
            c.events.add(e);
            idx++;
        }
        return c;
    }

    static Configuration configuration() {
        Configuration conf = new Configuration();
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        conf.setString("taskmanager.memory.network.min", "128mb");
        conf.setString("taskmanager.memory.network.max", "128mb");
        // any free port: several oracles (tests, benchmarks) may run at once
        conf.setString("rest.bind-port", "0");
        return conf;
    }

    static StreamExecutionEnvironment environment() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(configuration());
        env.setParallelism(1);
        return env;
    }

    /** One MiniCluster (one task manager, one slot) for all jobs of this process. */
    static MiniCluster CLUSTER;

    static void execute(StreamExecutionEnvironment env, String name) throws Exception {
        if (CLUSTER == null) {
            MiniClusterConfiguration cfg = new MiniClusterConfiguration.Builder()
                    .setConfiguration(configuration())
                    .setNumTaskManagers(1)
                    .setNumSlotsPerTaskManager(1)
                    .build();
            CLUSTER = new MiniCluster(cfg);
            CLUSTER.start();
        }
        StreamGraph graph = env.getStreamGraph();
        graph.setJobName(name);
        JobGraph job = graph.getJobGraph();
        CLUSTER.executeJobBlocking(job);
    }

    /** "chain" (default): reinterpretAsKeyedStream, the whole job is one task; "shuffle": keyBy. */
    static String KEYING = System.getProperty("flowcep.keying", "chain");

    static KeyedStream<Event, String> keyed(DataStream<Event> s) {
        if (KEYING.equals("shuffle")) {
            return s.keyBy(new KeyOf());
        }
        return DataStreamUtils.reinterpretAsKeyedStream(s, new KeyOf(), Types.STRING);
    }

    /** Runs the given (already built) cases in one job; throws if the job fails. */
    static void runJob(List<Case> cases) throws Exception {
        List<Event> all = new ArrayList<>();
        long[] ooo = new long[cases.size()];
        for (int slot = 0; slot < cases.size(); slot++) {
            Case c = cases.get(slot);
            ooo[slot] = c.outOfOrderness;
            for (Event e : c.events) {
                Event x = new Event();
                x.id = e.id;
                x.key = e.key;
                x.name = e.name;
                x.price = e.price;
                x.volume = e.volume;
                x.ts = e.ts;
                x.slot = slot;
                x.idx = e.idx;
                x.shift = slot * OFFSET;
                all.add(x);
            }
        }
        if (all.isEmpty()) {
            return;
        }
        SOURCE = all.toArray(new Event[0]);
        StreamExecutionEnvironment env = environment();
        DataStream<Event> events = env.fromSequence(0, SOURCE.length - 1)
                .map(new FromSource())
                .returns(TypeInformation.of(Event.class))
                .assignTimestampsAndWatermarks(perEventStrategy(ooo));
        OUT.clear();
        EVALS = new long[cases.size()];
        OUTPUTS = new int[cases.size()];
        MAX_EVALS = Long.getLong("flowcep.maxEvals", 1_000_000L);
        MAX_OUTPUTS = Integer.getInteger("flowcep.maxOutputs", 20_000);
        boolean any = false;
        for (int slot = 0; slot < cases.size(); slot++) {
            Case c = cases.get(slot);
            OutputTag<Event> lateTag = new OutputTag<>("late-" + slot, TypeInformation.of(Event.class));
            PatternStream<Event> ps = CEP.pattern(
                            keyed(events.filter(new SlotFilter(slot))), c.pattern)
                    .sideOutputLateData(lateTag);
            SingleOutputStreamOperator<String> matches;
            try {
                matches = c.timeout
                        ? ps.process(new Proc(slot, slot * OFFSET), Types.STRING)
                        : ps.process(new ProcNoTimeout(slot), Types.STRING);
            } catch (Exception | StackOverflowError ex) {
                // StackOverflowError: the compiler copies a PROCEED cycle without end (semantics.md 10.5)
                c.result.set("error", errorJson(ex, "compile"));
                continue;
            }
            any = true;
            matches.sinkTo(new DiscardingSink<>());
            matches.getSideOutput(lateTag).map(new LateLine()).returns(Types.STRING).sinkTo(new DiscardingSink<>());
        }
        if (!any) {
            return;
        }
        execute(env, "flowcep-oracle");
        List<String> lines = new ArrayList<>(OUT);
        for (Case c : cases) {
            clearOutputs(c);
        }
        boolean tagged = KEYING.equals("chain");
        for (Case c : cases) {
            if (tagged) {
                c.result.putArray("match_at");
                c.result.putArray("timeout_at");
            }
        }
        for (String line : lines) {
            String[] f = line.split("\t", 5);
            Case c = cases.get(Integer.parseInt(f[1]));
            switch (f[0]) {
                case "M":
                    ((ArrayNode) c.result.get("matches")).add(JSON.readTree(f[3]));
                    addAt(c, "match_at", f[2], tagged);
                    break;
                case "T": {
                    ArrayNode t = JSON.createArrayNode();
                    t.add(JSON.readTree(f[4]));
                    t.add(Long.parseLong(f[3]));
                    ((ArrayNode) c.result.get("timeouts")).add(t);
                    addAt(c, "timeout_at", f[2], tagged);
                    break;
                }
                case "L":
                    ((ArrayNode) c.result.get("late")).add(Integer.parseInt(f[2]));
                    break;
                default:
                    throw new IllegalStateException(line);
            }
        }
    }

    /** Appends when a result was emitted (null: at a later watermark, see emittedAt). */
    static void addAt(Case c, String field, String at, boolean tagged) {
        if (tagged) {
            int i = Integer.parseInt(at);
            ArrayNode a = (ArrayNode) c.result.get(field);
            if (i < 0) {
                a.addNull();
            } else {
                a.add(i);
            }
        }
    }

    static void clearOutputs(Case c) {
        c.result.putArray("matches");
        c.result.putArray("timeouts");
        c.result.putArray("late");
        c.result.remove("match_at");
        c.result.remove("timeout_at");
    }

    static void runCases(String in, String outPath, int batch) throws Exception {
        JsonNode root = readCases(in);
        List<Case> cases = new ArrayList<>();
        for (JsonNode j : root) {
            Case c = parseCase(j);
            try {
                c.pattern = build(j.get("pattern"), skipStrategy(j.get("skip")));
            } catch (OracleError ex) {
                throw ex;
            } catch (Throwable ex) {
                c.result.set("error", errorJson(ex, "build"));
            }
            cases.add(c);
        }
        long t0 = System.nanoTime();
        // Cases whose skip strategy may throw at run time go to small jobs of their own.
        // Cases with a timestamp <= 0 run alone (shift 0): Flink registers a case's window timer only
        // for partial matches starting at a timestamp > 0, which a shift would change.
        List<Case> safe = new ArrayList<>();
        List<Case> risky = new ArrayList<>();
        List<Case> solo = new ArrayList<>();
        for (Case c : cases) {
            if (c.pattern == null) {
                continue;
            }
            JsonNode skip = c.json.get("skip");
            boolean mayThrow = skip != null && skip.size() > 2 && skip.get(2).asBoolean();
            boolean zero = false;
            for (Event e : c.events) {
                zero |= e.ts <= 0;
            }
            (zero ? solo : mayThrow ? risky : safe).add(c);
        }
        for (Case c : solo) {
            runChunk(List.of(c));
        }
        for (int start = 0; start < safe.size(); start += batch) {
            runChunk(safe.subList(start, Math.min(safe.size(), start + batch)));
        }
        int small = Math.max(1, Math.min(batch, 8));
        for (int start = 0; start < risky.size(); start += small) {
            runChunk(risky.subList(start, Math.min(risky.size(), start + small)));
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        try (BufferedWriter w = Files.newBufferedWriter(Paths.get(outPath), StandardCharsets.UTF_8)) {
            for (Case c : cases) {
                w.write(c.result.toString());
                w.write("\n");
            }
        }
        System.err.printf("flowcep-oracle: %d cases, %d jobs, %.2f s%n", cases.size(), JOBS, secs);
        JOBS = 0;
    }

    static int JOBS = 0;

    /**
     * Runs cases in one job. If the job fails, the case that failed it is found (the slot of a
     * limit error, else the slot that last evaluated a condition, else by bisection), gets the
     * error, and the others run again.
     */
    static void runChunk(List<Case> chunk) {
        List<Case> todo = new ArrayList<>(chunk);
        while (!todo.isEmpty()) {
            try {
                JOBS++;
                LAST_SLOT = -1;
                runJob(todo);
                return;
            } catch (Exception ex) {
                Throwable root = rootCause(ex);
                if (todo.size() == 1) {
                    fail(todo.get(0), root);
                    return;
                }
                int suspect = root instanceof OracleLimitExceeded ? ((OracleLimitExceeded) root).slot : LAST_SLOT;
                if (suspect >= 0 && suspect < todo.size()) {
                    Case c = todo.remove(suspect);
                    if (root instanceof OracleLimitExceeded) {
                        fail(c, root);
                        continue;
                    }
                    try {
                        JOBS++;
                        runJob(List.of(c));
                    } catch (Exception ex2) {
                        fail(c, rootCause(ex2));
                    }
                    continue; // the suspect is done either way; run the others again
                }
                int mid = todo.size() / 2;
                runChunk(todo.subList(0, mid));
                runChunk(todo.subList(mid, todo.size()));
                return;
            }
        }
    }

    static void fail(Case c, Throwable root) {
        clearOutputs(c);
        ObjectNode err = errorJson(root, "runtime");
        StackTraceElement[] st = root.getStackTrace();
        if (st.length > 0) {
            err.put("at", st[0].getClassName() + "." + st[0].getMethodName() + ":" + st[0].getLineNumber());
        }
        c.result.set("error", err);
    }

    static JsonNode readCases(String path) throws IOException {
        String text = new String(Files.readAllBytes(Paths.get(path)), StandardCharsets.UTF_8).trim();
        if (text.startsWith("[")) {
            return JSON.readTree(text);
        }
        ArrayNode arr = JSON.createArrayNode();
        for (String line : text.split("\n")) {
            if (!line.isBlank()) {
                arr.add(JSON.readTree(line));
            }
        }
        return arr;
    }

    // ------------------------------------------------------------------ bench

    /** Counts matches and timeouts; records the end time when the CEP operator closes. */
    public static class CountingProc extends PatternProcessFunction<Event, String>
            implements TimedOutPartialMatchHandler<Event> {
        @Override
        public void processMatch(Map<String, List<Event>> match, Context ctx, Collector<String> out) {
            MATCHES.incrementAndGet();
        }

        @Override
        public void processTimedOutMatch(Map<String, List<Event>> match, Context ctx) {
            TIMEOUTS.incrementAndGet();
        }

        @Override
        public void open(org.apache.flink.api.common.functions.OpenContext context) throws Exception {
            super.open(context);
            CEP_OPEN_CPU_NANOS = threadCpuNanos();
        }

        @Override
        public void close() throws Exception {
            END_NANOS = System.nanoTime();
            END_CPU_NANOS = processCpuNanos();
            // this thread runs the CEP operator (and this function, chained to it) alone
            CEP_CLOSE_CPU_NANOS = threadCpuNanos();
            super.close();
        }
    }

    /** CPU time used by this JVM so far, every thread (task threads, JIT compilers, GC), or -1. */
    static long processCpuNanos() {
        java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        }
        return -1;
    }

    /** CPU time used so far by the calling thread, or -1. */
    static long threadCpuNanos() {
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        return threads.isCurrentThreadCpuTimeSupported() ? threads.getCurrentThreadCpuTime() : -1;
    }

    static Event[] readEventsCsv(String path) throws IOException {
        List<Event> out = new ArrayList<>();
        Map<String, String> interned = new HashMap<>();
        try (BufferedReader r = Files.newBufferedReader(Paths.get(path), StandardCharsets.UTF_8)) {
            String line;
            int idx = 0;
            while ((line = r.readLine()) != null) {
                if (line.isEmpty() || line.startsWith("key,")) {
                    continue;
                }
                String[] f = line.split(",", -1);
                Event e = new Event();
                e.id = idx++;
                e.key = interned.computeIfAbsent(f[0], k -> k);
                e.name = interned.computeIfAbsent(f[1], k -> k);
                e.price = Double.parseDouble(f[2]);
                e.volume = Double.parseDouble(f[3]);
                e.ts = Long.parseLong(f[4]);
                out.add(e);
            }
        }
        return out.toArray(new Event[0]);
    }

    static ObjectNode benchOnce(JsonNode spec, Event[] events) throws Exception {
        SOURCE = events;
        EVALS = new long[1];
        OUTPUTS = new int[1];
        MAX_EVALS = Long.MAX_VALUE;
        MAX_OUTPUTS = Integer.MAX_VALUE;
        MATCHES.set(0);
        TIMEOUTS.set(0);
        FIRST_NANOS = 0;
        END_NANOS = 0;
        FIRST_CPU_NANOS = 0;
        END_CPU_NANOS = 0;
        CEP_OPEN_CPU_NANOS = -1;
        CEP_CLOSE_CPU_NANOS = -1;
        Pattern<Event, ?> pattern = build(spec.get("pattern"), skipStrategy(spec.get("skip")));
        String time = spec.has("time") ? spec.get("time").asText() : "event";
        String wm = spec.has("watermarks") ? spec.get("watermarks").asText() : "per_event";
        long ooo = spec.has("out_of_orderness") ? spec.get("out_of_orderness").asLong() : 0;
        StreamExecutionEnvironment env = environment();
        DataStream<Event> stream = env.fromSequence(0, events.length - 1)
                .map(new FromSource())
                .returns(TypeInformation.of(Event.class));
        if (time.equals("event")) {
            if (wm.equals("periodic")) {
                stream = stream.assignTimestampsAndWatermarks(
                        WatermarkStrategy.<Event>forBoundedOutOfOrderness(Duration.ofMillis(ooo))
                                .withTimestampAssigner((e, prev) -> e.ts));
            } else {
                stream = stream.assignTimestampsAndWatermarks(perEventStrategy(new long[] {ooo}));
            }
        }
        PatternStream<Event> ps = CEP.pattern(stream.keyBy(new KeyOf()), pattern);
        if (time.equals("processing")) {
            ps = ps.inProcessingTime();
        }
        ps.process(new CountingProc(), Types.STRING).sinkTo(new DiscardingSink<>());
        long t0 = System.nanoTime();
        execute(env, "flowcep-bench");
        long t1 = System.nanoTime();
        double secs = (END_NANOS - FIRST_NANOS) / 1e9;
        ObjectNode r = JSON.createObjectNode();
        r.put("events", events.length);
        r.put("matches", MATCHES.get());
        r.put("timeouts", TIMEOUTS.get());
        r.put("seconds", secs);
        r.put("events_per_s", events.length / secs);
        if (FIRST_CPU_NANOS >= 0 && END_CPU_NANOS > FIRST_CPU_NANOS) {
            // the same interval in CPU time of the whole JVM: a parallelism-1 job still runs its
            // source and CEP tasks in two threads (keyBy breaks the chain), besides JIT and GC
            r.put("cpu_seconds", (END_CPU_NANOS - FIRST_CPU_NANOS) / 1e9);
        }
        if (CEP_OPEN_CPU_NANOS >= 0 && CEP_CLOSE_CPU_NANOS > CEP_OPEN_CPU_NANOS) {
            r.put("cep_thread_cpu_seconds", (CEP_CLOSE_CPU_NANOS - CEP_OPEN_CPU_NANOS) / 1e9);
        }
        r.put("job_seconds", (t1 - t0) / 1e9);
        return r;
    }

    static void bench(String specPath, String eventsPath) throws Exception {
        JsonNode spec = JSON.readTree(Files.readAllBytes(Paths.get(specPath)));
        Event[] events = readEventsCsv(eventsPath);
        ObjectNode result;
        if (events.length == 0) {
            result = JSON.createObjectNode();
            result.put("events", 0);
            result.put("matches", 0);
            result.put("seconds", 0.0);
            result.put("events_per_s", 0.0);
        } else {
            int warm = spec.has("warmup_events") ? spec.get("warmup_events").asInt() : 20000;
            ObjectNode warmup = null;
            if (warm > 0) {
                Event[] w = java.util.Arrays.copyOf(events, Math.min(warm, events.length));
                warmup = benchOnce(spec, w);
            }
            result = benchOnce(spec, events);
            if (warmup != null) {
                result.set("warmup", warmup);
            }
        }
        System.out.println(result.toString());
    }

    public static void main(String[] args) throws Exception {
        PrintStream stdout = System.out;
        if (args.length >= 3 && args[0].equals("cases")) {
            int batch = args.length > 3 ? Integer.parseInt(args[3]) : 64;
            runCases(args[1], args[2], batch);
        } else if (args.length >= 1 && args[0].equals("serve")) {
            // one request per stdin line: "IN.json OUT.jsonl BATCH"; answers "done" (or "error ...")
            BufferedReader in = new BufferedReader(new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null) {
                String[] f = line.trim().split(" ");
                if (f.length < 2) {
                    break;
                }
                try {
                    runCases(f[0], f[1], f.length > 2 ? Integer.parseInt(f[2]) : 100);
                    stdout.println("done");
                } catch (Throwable t) {
                    stdout.println("error " + t.toString().replace('\n', ' '));
                }
                stdout.flush();
            }
        } else if (args.length >= 3 && args[0].equals("bench")) {
            bench(args[1], args[2]);
        } else {
            stdout.println("usage: FlinkCepOracle cases IN.json OUT.jsonl [BATCH] | serve | bench SPEC.json EVENTS.csv");
            System.exit(2);
        }
        stdout.flush();
        System.exit(0);
    }
}
