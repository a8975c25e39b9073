package flowcep_test;

import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

/**
 * A Flink metric reporter for tests: it keeps every metric registered in this JVM, also after its
 * task ends, so that a test can read a finished local job's counters through the Py4J gateway.
 */
public class KeepingReporter implements MetricReporter, MetricReporterFactory {
    private static final Map<String, Metric> METRICS = new ConcurrentHashMap<>();

    @Override
    public MetricReporter createMetricReporter(Properties properties) {
        return new KeepingReporter();
    }

    @Override
    public void open(MetricConfig config) {}

    @Override
    public void close() {}

    @Override
    public void notifyOfAddedMetric(Metric metric, String name, MetricGroup group) {
        METRICS.put(group.getMetricIdentifier(name), metric);
    }

    @Override
    public void notifyOfRemovedMetric(Metric metric, String name, MetricGroup group) {}

    /** Every counter kept, by its full identifier. */
    public static Map<String, Long> counters() {
        Map<String, Long> out = new TreeMap<>();
        METRICS.forEach((id, metric) -> {
            if (metric instanceof Counter) {
                out.put(id, ((Counter) metric).getCount());
            }
        });
        return out;
    }
}
