package io.warden.service.metrics;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;

import java.util.Map;
import java.util.Set;

/**
 * Gives the meters of Micrometer's JVM, process and Jetty binders conventional Prometheus names. Micrometer appends a
 * meter's base unit to its name, and the binders give counts units of their own, so without this the gateway would
 * export {@code jetty_connections_current_connections}, {@code jvm_threads_live_threads},
 * {@code jvm_classes_loaded_count_classes_total}, {@code jetty_connections_bytes_in_bytes} and
 * {@code process_cpu_time_ns_total} (nanoseconds, not the base unit). Prometheus names carry a unit only when it is a
 * base unit (seconds, bytes, ratio), once, before {@code _total}. So this filter:
 * <ul>
 *   <li>drops count-like base units ({@code threads}, {@code classes}, {@code connections}, ...): a count has no unit,
 *       e.g. {@code jetty_connections_current}, {@code jvm_threads_live}, {@code process_files_open};</li>
 *   <li>turns {@code percent} into {@code ratio}: those binders report fractions in [0, 1];</li>
 *   <li>renames the few meters that carry their unit inside the name, or would then collide: {@code jvm_classes_loaded}
 *       (a gauge) becomes {@code jvm_classes_currently_loaded} and the counter of classes loaded since start
 *       {@code jvm_classes_loaded_total} (the names of Prometheus' own JVM collector), Jetty's bytes in and out
 *       {@code jetty_connections_received_bytes} and {@code jetty_connections_sent_bytes};</li>
 *   <li>denies meters counted in nanoseconds or milliseconds ({@code process.cpu.time}, {@code jvm.gc.cpu.time}): a
 *       filter cannot rescale values; {@link ProcessMetrics} exports {@code process_cpu_seconds_total} instead,
 *       Prometheus' standard name.</li>
 * </ul>
 * Warden's own meters are named conventionally where they are made; none uses a unit this filter changes.
 */
public final class PrometheusNames {
    /** Units that only say what is counted: a count has no unit in a Prometheus name. */
    static final Set<String> COUNT_UNITS = Set.of("threads", "classes", "buffers", "files", "connections", "messages",
            "tasks", "events", "sessions", "operations", "objects", "rows");
    static final Map<String, String> RENAMES = Map.of(
            "jvm.classes.loaded", "jvm.classes.currently.loaded",
            "jvm.classes.loaded.count", "jvm.classes.loaded",
            "jetty.connections.bytes.in", "jetty.connections.received",
            "jetty.connections.bytes.out", "jetty.connections.sent");
    /** Time units other than the base unit (seconds): meters in them are not exported. */
    static final Set<String> SUB_SECOND_UNITS = Set.of("ns", "us", "ms", "nanoseconds", "microseconds", "milliseconds");

    private PrometheusNames() {
    }

    /** Adds the filter to {@code registry}; call it before any meter is registered (filters apply to later meters only). */
    public static <R extends MeterRegistry> R applyTo(R registry) {
        registry.config().meterFilter(MeterFilter.deny(
                id -> id.getBaseUnit() != null && SUB_SECOND_UNITS.contains(id.getBaseUnit())));
        registry.config().meterFilter(new MeterFilter() {
            @Override
            public Meter.Id map(Meter.Id id) {
                return conventional(id);
            }
        });
        return registry;
    }

    static Meter.Id conventional(Meter.Id id) {
        Meter.Id mapped = id;
        String rename = RENAMES.get(id.getName());
        if (rename != null) {
            mapped = mapped.withName(rename);
        }
        String unit = mapped.getBaseUnit();
        if (unit != null && COUNT_UNITS.contains(unit)) {
            mapped = mapped.withBaseUnit(null);
        } else if ("percent".equals(unit)) {
            mapped = mapped.withBaseUnit("ratio");
        }
        return mapped;
    }
}
