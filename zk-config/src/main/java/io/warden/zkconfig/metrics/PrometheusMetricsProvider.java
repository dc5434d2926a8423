package io.warden.zkconfig.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BiConsumer;
import org.apache.zookeeper.metrics.MetricsContext;
import org.apache.zookeeper.metrics.MetricsProvider;
import org.apache.zookeeper.metrics.MetricsProviderLifeCycleException;
import org.apache.zookeeper.metrics.impl.DefaultMetricsProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ZooKeeper {@link MetricsProvider} that serves the server's metrics in the Prometheus text format on
 * {@code http://<httpHost>:<httpPort>/metrics}.
 *
 * <p>ZooKeeper's own {@code zookeeper-prometheus-metrics} module is not published where this project gets its
 * dependencies, so Warden ships this one. It keeps every value in ZooKeeper's {@link DefaultMetricsProvider} (the
 * one {@code mntr} reads) and renders exactly the numeric values {@code mntr} shows, under the same names
 * ({@code zk_znode_count}, {@code zk_avg_latency}, ...). Summaries are therefore {@code zk_avg_X}, {@code zk_min_X},
 * {@code zk_max_X}, {@code zk_cnt_X}, {@code zk_sum_X} rather than quantiles.
 *
 * <p>Settings ({@code metricsProvider.<key>} in {@code zoo.cfg}; an unknown key stops the server):
 * {@code httpHost} (default {@code 0.0.0.0}), {@code httpPort} (default 7000; 0 = any free port) and
 * {@code exportJvmInfo} (default {@code true}: heap, GC, threads). These are the key names of ZooKeeper's
 * provider, so a {@code zoo.cfg} can switch between the two by changing {@code metricsProvider.className} only.
 *
 * <p>Concurrency: ZooKeeper calls {@code configure}, {@code start} and {@code stop} from its start-up and shutdown
 * threads; {@code stop} may come more than once. The HTTP server and its executor are guarded by {@code this}.
 * Metric updates go straight to {@link DefaultMetricsProvider}, which is thread-safe; scrapes run on one thread.
 */
public final class PrometheusMetricsProvider implements MetricsProvider {
    /** The {@code metricsProvider.*} keys this provider reads (without the prefix). */
    public static final Set<String> CONFIG_KEYS = Set.of("httpHost", "httpPort", "exportJvmInfo");

    private static final Logger LOG = LoggerFactory.getLogger(PrometheusMetricsProvider.class);
    private static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final DefaultMetricsProvider values = new DefaultMetricsProvider();
    private String httpHost = "0.0.0.0";
    private int httpPort = 7000;
    private boolean exportJvmInfo = true;
    // Guarded by this.
    private HttpServer server;
    private ExecutorService executor;

    @Override
    public void configure(Properties configuration) throws MetricsProviderLifeCycleException {
        for (String key : configuration.stringPropertyNames()) {
            String value = configuration.getProperty(key).trim();
            switch (key) {
                case "httpHost" -> httpHost = requireNonEmpty(key, value);
                case "httpPort" -> httpPort = parsePort(value);
                case "exportJvmInfo" -> exportJvmInfo = parseBoolean(key, value);
                default -> throw new MetricsProviderLifeCycleException("unknown setting metricsProvider." + key
                        + " for " + getClass().getName() + " (known: metricsProvider." + String.join(", metricsProvider.",
                        new java.util.TreeSet<>(CONFIG_KEYS)) + ")");
            }
        }
    }

    @Override
    public synchronized void start() throws MetricsProviderLifeCycleException {
        if (server != null) {
            return;
        }
        try {
            HttpServer http = HttpServer.create(new InetSocketAddress(httpHost, httpPort), 0);
            http.createContext("/metrics", this::handle);
            executor = Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "prometheus-metrics-http");
                t.setDaemon(true);
                return t;
            });
            http.setExecutor(executor);
            http.start();
            server = http;
        } catch (IOException | RuntimeException e) {
            if (executor != null) {
                executor.shutdownNow();
                executor = null;
            }
            throw new MetricsProviderLifeCycleException("cannot serve Prometheus metrics on " + httpHost + ":" + httpPort
                    + ": " + e.getMessage(), e);
        }
        LOG.info("Prometheus metrics on http://{}:{}/metrics", httpHost, port());
    }

    /** The port the metrics endpoint listens on (the chosen one when {@code httpPort} is 0); -1 before start. */
    public synchronized int port() {
        return server == null ? -1 : server.getAddress().getPort();
    }

    @Override
    public MetricsContext getRootContext() {
        return values.getRootContext();
    }

    @Override
    public synchronized void stop() {
        if (server != null) {
            server.stop(0);
            server = null;
        }
        if (executor != null) {
            executor.shutdownNow();
            executor = null;
        }
        values.stop();
    }

    @Override
    public void dump(BiConsumer<String, Object> sink) {
        values.dump(sink);
    }

    @Override
    public void resetAllValues() {
        values.resetAllValues();
    }

    /** The page a scrape gets: every numeric value of {@link #dump}, then (optionally) the JVM's. */
    String render() {
        TreeMap<String, Object> sorted = new TreeMap<>();
        values.dump(sorted::put);
        StringBuilder out = new StringBuilder(16 * 1024);
        PrometheusText.appendValues(out, sorted);
        if (exportJvmInfo) {
            PrometheusText.appendJvm(out);
        }
        return out.toString();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String method = exchange.getRequestMethod();
            if (!method.equals("GET") && !method.equals("HEAD")) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                exchange.sendResponseHeaders(405, -1);
                return;
            }
            byte[] body = render().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", CONTENT_TYPE);
            if (method.equals("HEAD")) {
                exchange.sendResponseHeaders(200, -1);
                return;
            }
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream os = exchange.getResponseBody()) {
                os.write(body);
            }
        } catch (RuntimeException e) {
            LOG.warn("Prometheus scrape failed", e);
        }
    }

    private static String requireNonEmpty(String key, String value) throws MetricsProviderLifeCycleException {
        if (value.isEmpty()) {
            throw new MetricsProviderLifeCycleException("metricsProvider." + key + " is empty");
        }
        return value;
    }

    private static int parsePort(String value) throws MetricsProviderLifeCycleException {
        try {
            int port = Integer.parseInt(value);
            if (port >= 0 && port <= 65535) {
                return port;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new MetricsProviderLifeCycleException("metricsProvider.httpPort \"" + value + "\" is not a port (0-65535)");
    }

    private static boolean parseBoolean(String key, String value) throws MetricsProviderLifeCycleException {
        return switch (value) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new MetricsProviderLifeCycleException("metricsProvider." + key + " \"" + value
                    + "\" is not true or false");
        };
    }
}
