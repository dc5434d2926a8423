package io.warden.service.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;

import java.lang.management.ManagementFactory;

/**
 * What an operator needs of the process beside Warden's own figures: heap and other memory pools
 * ({@code jvm_memory_used_bytes}, {@code jvm_memory_max_bytes}), garbage collection ({@code jvm_gc_pause_seconds}),
 * threads ({@code jvm_threads_live}), classes, CPU ({@code process_cpu_usage}, {@code system_cpu_usage},
 * {@code process_cpu_seconds_total}), uptime and file descriptors ({@code process_files_open},
 * {@code process_files_max}). Jetty's thread pool and connections are bound by the HTTP API, which owns the server.
 * The names are those {@link PrometheusNames} gives the binders' meters (the registry must have it).
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
        // The binder's own process.cpu.time counts nanoseconds (PrometheusNames denies it); this one counts seconds.
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            FunctionCounter.builder("process.cpu", os, b -> Math.max(0, b.getProcessCpuTime()) / 1e9)
                    .baseUnit("seconds")
                    .description("CPU time used by the gateway's process").register(registry);
        }
    }

    @Override
    public void close() {
        gc.close();
    }
}
