package io.warden.service.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;

/**
 * What an operator needs of the process beside Warden's own figures: heap and other memory pools
 * ({@code jvm_memory_used_bytes}, {@code jvm_memory_max_bytes}), garbage collection ({@code jvm_gc_pause_seconds}),
 * threads ({@code jvm_threads_live_threads}), classes, CPU ({@code process_cpu_usage}, {@code system_cpu_usage}),
 * uptime and file descriptors ({@code process_files_open_files}, {@code process_files_max_files}). Jetty's thread pool
 * and connections are bound by the HTTP API, which owns the server.
 *
 * <p>{@link #close} stops the GC binder's notification listener; the other binders hold nothing.
 */
public final class ProcessMetrics implements AutoCloseable {
    private final JvmGcMetrics gc = new JvmGcMetrics();

    public ProcessMetrics(MeterRegistry registry) {
        new JvmMemoryMetrics().bindTo(registry);
        gc.bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        new FileDescriptorMetrics().bindTo(registry);
    }

    @Override
    public void close() {
        gc.close();
    }
}
