package io.warden.zkconfig;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.zkconfig.metrics.PrometheusMetricsProvider;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Properties;
import org.apache.zookeeper.metrics.MetricsContext;
import org.apache.zookeeper.metrics.MetricsProviderLifeCycleException;
import org.junit.jupiter.api.Test;

class PrometheusMetricsProviderTest {
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private static Properties props(String... kv) {
        Properties p = new Properties();
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    @Test
    void configure_unknownOrBadSetting_failsNamingIt() {
        assertThatThrownBy(() -> new PrometheusMetricsProvider().configure(props("httpPrt", "7000")))
                .isInstanceOf(MetricsProviderLifeCycleException.class).hasMessageContaining("metricsProvider.httpPrt");
        assertThatThrownBy(() -> new PrometheusMetricsProvider().configure(props("httpPort", "70000")))
                .isInstanceOf(MetricsProviderLifeCycleException.class).hasMessageContaining("70000");
        assertThatThrownBy(() -> new PrometheusMetricsProvider().configure(props("exportJvmInfo", "yes")))
                .isInstanceOf(MetricsProviderLifeCycleException.class).hasMessageContaining("yes");
    }

    @Test
    void metricsEndpoint_servesTheMntrValuesAndTheJvm() throws Exception {
        PrometheusMetricsProvider provider = new PrometheusMetricsProvider();
        provider.configure(props("httpHost", "127.0.0.1", "httpPort", "0"));
        provider.start();
        try {
            MetricsContext root = provider.getRootContext();
            root.getCounter("packets_received").add(3);
            root.registerGauge("znode_count", () -> 42);
            root.getSummary("read_latency", MetricsContext.DetailLevel.BASIC).add(7);
            URI uri = URI.create("http://127.0.0.1:" + provider.port() + "/metrics");
            HttpResponse<String> page = http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.headers().firstValue("Content-Type")).hasValue("text/plain; version=0.0.4; charset=utf-8");
            assertThat(page.body()).contains("# TYPE zk_packets_received untyped\nzk_packets_received 3\n",
                    "zk_znode_count 42\n", "zk_cnt_read_latency 1\n", "zk_max_read_latency 7\n",
                    "jvm_memory_bytes_used{area=\"heap\"} ", "jvm_threads_current ");
            java.util.Map<String, Object> mntr = new java.util.HashMap<>();
            provider.dump(mntr::put);
            assertThat(mntr).containsEntry("packets_received", 3L).containsEntry("znode_count", 42);
            HttpResponse<String> post = http.send(HttpRequest.newBuilder(uri).POST(HttpRequest.BodyPublishers.noBody()).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(post.statusCode()).isEqualTo(405);
        } finally {
            provider.stop();
            provider.stop();
        }
        assertThat(provider.port()).isEqualTo(-1);
    }

    @Test
    void start_portInUse_failsNamingTheAddress() throws Exception {
        try (var taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            PrometheusMetricsProvider provider = new PrometheusMetricsProvider();
            provider.configure(props("httpHost", "127.0.0.1", "httpPort", Integer.toString(taken.getLocalPort())));
            assertThatThrownBy(provider::start).isInstanceOf(MetricsProviderLifeCycleException.class)
                    .hasMessageContaining("127.0.0.1:" + taken.getLocalPort());
            provider.stop();
        }
    }
}
