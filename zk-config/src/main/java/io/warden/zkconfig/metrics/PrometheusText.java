package io.warden.zkconfig.metrics;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.util.Map;

/** The Prometheus text exposition format (version 0.0.4), for the few shapes {@link PrometheusMetricsProvider} needs. */
final class PrometheusText {
    private PrometheusText() {
    }

    /** One untyped sample per numeric value, named {@code zk_<name>} as {@code mntr} names it; others are skipped. */
    static void appendValues(StringBuilder out, Map<String, Object> values) {
        for (Map.Entry<String, Object> e : values.entrySet()) {
            if (e.getValue() instanceof Number number) {
                String name = metricName("zk_" + e.getKey());
                out.append("# TYPE ").append(name).append(" untyped\n");
                out.append(name).append(' ').append(number(number)).append('\n');
            }
        }
    }

    /** Heap and non-heap memory, garbage collections, threads and uptime of this JVM. */
    static void appendJvm(StringBuilder out) {
        var memory = ManagementFactory.getMemoryMXBean();
        out.append("# TYPE jvm_memory_bytes_used gauge\n");
        sample(out, "jvm_memory_bytes_used", "area", "heap", memory.getHeapMemoryUsage().getUsed());
        sample(out, "jvm_memory_bytes_used", "area", "nonheap", memory.getNonHeapMemoryUsage().getUsed());
        out.append("# TYPE jvm_memory_bytes_max gauge\n");
        MemoryUsage heap = memory.getHeapMemoryUsage();
        sample(out, "jvm_memory_bytes_max", "area", "heap", heap.getMax());
        out.append("# TYPE jvm_gc_collection_seconds summary\n");
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            sample(out, "jvm_gc_collection_seconds_count", "gc", gc.getName(), gc.getCollectionCount());
            sample(out, "jvm_gc_collection_seconds_sum", "gc", gc.getName(), gc.getCollectionTime() / 1000.0);
        }
        out.append("# TYPE jvm_threads_current gauge\n");
        out.append("jvm_threads_current ").append(ManagementFactory.getThreadMXBean().getThreadCount()).append('\n');
        out.append("# TYPE process_uptime_seconds gauge\n");
        out.append("process_uptime_seconds ").append(number(ManagementFactory.getRuntimeMXBean().getUptime() / 1000.0))
                .append('\n');
    }

    /** {@code [a-zA-Z_:][a-zA-Z0-9_:]*}: anything else becomes {@code _}. */
    static String metricName(String raw) {
        StringBuilder name = new StringBuilder(raw.length());
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'
                    || (i > 0 && c >= '0' && c <= '9');
            name.append(ok ? c : '_');
        }
        return name.toString();
    }

    static String number(Number n) {
        if (n instanceof Double || n instanceof Float) {
            double d = n.doubleValue();
            if (Double.isNaN(d)) {
                return "NaN";
            }
            if (Double.isInfinite(d)) {
                return d > 0 ? "+Inf" : "-Inf";
            }
            return Double.toString(d);
        }
        return n.toString();
    }

    private static void sample(StringBuilder out, String name, String label, String labelValue, Number value) {
        out.append(name).append('{').append(label).append("=\"").append(escapeLabel(labelValue)).append("\"} ")
                .append(number(value)).append('\n');
    }

    static String escapeLabel(String value) {
        return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }
}
