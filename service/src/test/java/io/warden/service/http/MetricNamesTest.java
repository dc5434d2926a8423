package io.warden.service.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.warden.service.Gateway;
import io.warden.service.support.WardenFixture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The observability pack names only what a gateway exports, under conventional Prometheus names: a real gateway is
 * started and used a little, its {@code /metrics} scraped, and every metric named by the alert rules
 * ({@code docs/observability/warden-alerts.yml}), the Grafana dashboard ({@code docs/observability/warden-dashboard.json})
 * and the user docs (README, docs/) must be among the exported names (a histogram's family name counts for its
 * {@code _bucket}, {@code _sum} and {@code _count} series). A rule that names a metric the gateway does not export can
 * never fire.
 */
class MetricNamesTest {
    /** The repository's root: Surefire runs in the module's directory. */
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    static final Path RULES = ROOT.resolve("docs/observability/warden-alerts.yml");
    static final Path DASHBOARD = ROOT.resolve("docs/observability/warden-dashboard.json");

    /** Names the rules may use that no gateway exports: Prometheus makes {@code up} itself for every target. */
    static final Set<String> NOT_EXPORTED_BY_GATEWAYS = Set.of("up");
    /**
     * Series a gateway exports only while something rare is true, so a short run cannot see them:
     * {@code warden_lock_too_large_entries{lock}} exists only while a lock has more entries than the gateway reads
     * (TooLargeLockTest covers it).
     */
    static final Set<String> ONLY_WHILE_RARE = Set.of("warden_lock_too_large_entries");
    /**
     * Metrics of the ZooKeeper servers' own exporter, which docs/operations.md lists for the ensemble beside the
     * {@code zk_*} ones; not the gateway's.
     */
    static final Set<String> ZOOKEEPER_SERVER_METRICS = Set.of("jvm_gc_collection_seconds", "jvm_memory_bytes_used");
    /** Prefixes of the gateway's metric names; docs are searched for names that start so. */
    static final Pattern DOC_METRIC = Pattern.compile("(?<![\\w$./-])(?:warden|jetty|jvm|process|system)_[a-z0-9_]*[a-z0-9]");
    /** A metric name shortened to its suffix ({@code `_max`}): a reader cannot tell what it is, nor can this test. */
    static final Pattern SHORTHAND = Pattern.compile("`(_[a-z][a-z0-9_]*[a-z0-9])(?:\\{[^}`]*\\})?`");

    private static WardenFixture fx;
    private static Scrape scrape;

    @BeforeAll
    static void startAGatewayAndUseIt() throws Exception {
        fx = new WardenFixture();
        Gateway gw = fx.gateway();
        HttpTestClient http = new HttpTestClient(gw.httpPort());
        String a = http.postJson("/v1/sessions", "client_id", "metrics-a").json().get("session_id").asText();
        String b = http.postJson("/v1/sessions", "client_id", "metrics-b").json().get("session_id").asText();
        long token = http.postJson("/v1/acquire", "session_id", a, "name", "m/x").json().get("token").asLong();
        http.postJson("/v1/acquire", "session_id", b, "name", "m/x", "wait_ms", 0);
        http.post("/v1/sessions/" + a + "/keepalive", "");
        http.get("/v1/locks/m/x");
        http.postJson("/v1/release", "session_id", a, "name", "m/x", "token", token);
        // The JVM's GC pause timer appears with the JVM's first collection, which a fresh test JVM may not have had
        // yet (a running gateway soon has): one is asked for, until the series shows.
        WardenFixture.await("the GC pause series after a collection", java.time.Duration.ofSeconds(20), () -> {
            System.gc();
            return http.get("/metrics").text().contains("jvm_gc_pause_seconds_count");
        });
        scrape = Scrape.of(http.get("/metrics").text());
    }

    @AfterAll
    static void stop() throws Exception {
        if (fx != null) {
            fx.close();
        }
    }

    @Test
    void alertRules_nameOnlyExportedMetrics() {
        Map<String, String> named = new TreeMap<>();
        for (JsonNode group : read(RULES, new ObjectMapper(new YAMLFactory())).path("groups")) {
            for (JsonNode rule : group.path("rules")) {
                String where = "rule " + rule.path("alert").asText(rule.path("record").asText());
                for (String name : PromQl.metricNames(rule.path("expr").asText())) {
                    named.putIfAbsent(name, where);
                }
            }
        }
        assertThat(named).as("metrics named by %s", RULES).hasSizeGreaterThan(10);
        assertThat(scrape.unknown(named)).as("metrics %s names that a gateway does not export (name=where)", RULES)
                .isEmpty();
    }

    @Test
    void dashboard_queriesOnlyExportedMetrics() {
        JsonNode dashboard = read(DASHBOARD, new ObjectMapper());
        Map<String, String> named = new TreeMap<>();
        List<JsonNode> queries = new ArrayList<>();
        dashboard.findParents("expr").forEach(target -> queries.add(target.get("expr")));
        for (JsonNode variable : dashboard.path("templating").path("list")) {
            if (variable.path("query").has("query")) {
                queries.add(variable.path("query").path("query"));
            }
        }
        for (JsonNode query : queries) {
            for (String name : PromQl.metricNames(query.asText())) {
                named.putIfAbsent(name, query.asText());
            }
        }
        assertThat(named).as("metrics queried by %s", DASHBOARD).hasSizeGreaterThan(10);
        assertThat(scrape.unknown(named)).as("metrics %s queries that a gateway does not export (name=query)", DASHBOARD)
                .isEmpty();
    }

    @Test
    void docs_nameOnlyExportedMetrics_inFull() throws IOException {
        Set<String> ansibleNames = ansibleNames();
        Map<String, String> named = new TreeMap<>();
        List<String> shorthands = new ArrayList<>();
        for (Path doc : docs()) {
            List<String> lines = Files.readAllLines(doc);
            for (int i = 0; i < lines.size(); i++) {
                String where = ROOT.relativize(doc) + ":" + (i + 1);
                Matcher m = DOC_METRIC.matcher(lines.get(i));
                while (m.find()) {
                    String name = m.group();
                    if (!ansibleNames.contains(name) && !ZOOKEEPER_SERVER_METRICS.contains(name)) {
                        named.putIfAbsent(name, where);
                    }
                }
                Matcher s = SHORTHAND.matcher(lines.get(i));
                while (s.find()) {
                    shorthands.add(where + ": `" + s.group(1) + "`");
                }
            }
        }
        assertThat(named).as("metrics named in the docs").hasSizeGreaterThan(20);
        assertThat(scrape.unknown(named)).as("metrics the docs name that a gateway does not export (name=file:line)")
                .isEmpty();
        assertThat(shorthands).as("metric names shortened to a suffix: write each name out in full").isEmpty();
    }

    @Test
    void exportedNames_followPrometheusConventions() {
        Set<String> units = Set.of("seconds", "bytes", "ratio", "threads", "classes", "connections", "files", "buffers",
                "messages");
        Set<String> subSecond = Set.of("ns", "us", "ms", "nanoseconds", "microseconds", "milliseconds");
        List<String> bad = new ArrayList<>();
        for (String name : scrape.samples()) {
            List<String> parts = Arrays.asList(name.split("_"));
            for (String unit : units) {
                if (parts.stream().filter(unit::equals).count() > 1) {
                    bad.add(name + ": unit " + unit + " twice");
                }
            }
            if (parts.stream().anyMatch(subSecond::contains)) {
                bad.add(name + ": a time unit other than seconds");
            }
            if (name.endsWith("_total") && !"counter".equals(scrape.typeOf(name))) {
                bad.add(name + ": _total on a " + scrape.typeOf(name));
            }
            if (!name.endsWith("_total") && "counter".equals(scrape.typeOf(name))) {
                bad.add(name + ": a counter without _total");
            }
        }
        assertThat(bad).isEmpty();
        assertThat(scrape.samples()).contains("jetty_connections_current", "jetty_connections_max",
                "jetty_connections_received_bytes_count", "jetty_connections_sent_bytes_sum", "jvm_threads_live",
                "jvm_classes_currently_loaded", "jvm_classes_loaded_total", "process_files_open", "process_files_max",
                "process_cpu_seconds_total");
    }

    @Test
    void latencies_areHistograms_soQuantilesCombineAcrossGateways() {
        for (String family : List.of("warden_http_requests_seconds", "warden_acquire_seconds", "warden_handoff_seconds",
                "warden_zk_operation_seconds", "warden_queue_depth")) {
            assertThat(scrape.types()).as(family).containsEntry(family, "histogram");
        }
        assertThat(scrape.samples()).contains("warden_http_requests_seconds_bucket");
    }

    @Test
    void everyWardenFamily_hasATrueHelp() {
        for (String family : scrape.types().keySet()) {
            if (family.startsWith("warden_")) {
                assertThat(scrape.helps().get(family)).as("HELP of " + family).isNotBlank();
            }
        }
        // One HELP per name: it must speak of every label value, not of the one registered first.
        assertThat(scrape.helps().get("warden_auth_reloads_total")).contains("ok", "refused");
        assertThat(scrape.helps().get("warden_watches")).contains("names", "sessions");
    }

    @Test
    void buildInfo_carriesTheArtifactVersion() throws IOException {
        String pom = Files.readString(ROOT.resolve("service/pom.xml"));
        Matcher parent = Pattern.compile("<parent>.*?<version>([^<]+)</version>.*?</parent>", Pattern.DOTALL).matcher(pom);
        assertThat(parent.find()).as("the parent's version in service/pom.xml").isTrue();
        assertThat(scrape.text()).contains("warden_build_info{version=\"" + parent.group(1) + "\"} 1");
    }

    private static JsonNode read(Path file, ObjectMapper mapper) {
        try {
            return mapper.readTree(file.toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** README and the user docs: every Markdown file at the root and under docs/. */
    private static List<Path> docs() throws IOException {
        List<Path> docs = new ArrayList<>();
        try (Stream<Path> top = Files.list(ROOT); Stream<Path> under = Files.walk(ROOT.resolve("docs"))) {
            Stream.concat(top, under).filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
        }
        assertThat(docs).contains(ROOT.resolve("README.md"), ROOT.resolve("docs/operations.md"));
        return docs;
    }

    /** Every {@code warden_*} word of the Ansible role (its variables, which the docs name too). */
    private static Set<String> ansibleNames() throws IOException {
        Set<String> names = new TreeSet<>();
        Pattern word = Pattern.compile("\\bwarden_[a-z0-9_]+");
        try (Stream<Path> files = Files.walk(ROOT.resolve("ansible"))) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                Matcher m = word.matcher(new String(Files.readAllBytes(f), java.nio.charset.StandardCharsets.ISO_8859_1));
                while (m.find()) {
                    names.add(m.group());
                }
            }
        }
        return names;
    }

    /** A scrape of {@code /metrics} (Prometheus text format): sample names, and families by TYPE and HELP. */
    record Scrape(String text, Set<String> samples, Map<String, String> types, Map<String, String> helps) {
        static Scrape of(String text) {
            Set<String> samples = new TreeSet<>();
            Map<String, String> types = new LinkedHashMap<>();
            Map<String, String> helps = new LinkedHashMap<>();
            for (String line : text.split("\n")) {
                if (line.startsWith("# TYPE ")) {
                    String[] p = line.split(" ", 4);
                    types.put(p[2], p[3]);
                } else if (line.startsWith("# HELP ")) {
                    String[] p = line.split(" ", 4);
                    helps.put(p[2], p.length > 3 ? p[3] : "");
                } else if (!line.isBlank() && !line.startsWith("#")) {
                    samples.add(line.split("[{ ]", 2)[0]);
                }
            }
            return new Scrape(text, samples, types, helps);
        }

        /** The type of the family {@code sample} belongs to. */
        String typeOf(String sample) {
            for (String suffix : List.of("", "_total", "_bucket", "_count", "_sum", "_created", "_info")) {
                if (sample.endsWith(suffix)) {
                    String type = types.get(sample.substring(0, sample.length() - suffix.length()));
                    if (type != null) {
                        return type;
                    }
                }
            }
            return "untyped";
        }

        /** Of {@code named} (name to where it was named), those this scrape has neither as a sample nor a histogram. */
        Map<String, String> unknown(Map<String, String> named) {
            Map<String, String> unknown = new TreeMap<>(named);
            unknown.keySet().removeIf(n -> samples.contains(n) || "histogram".equals(types.get(n))
                    || "summary".equals(types.get(n)) || NOT_EXPORTED_BY_GATEWAYS.contains(n) || ONLY_WHILE_RARE.contains(n));
            return unknown;
        }
    }

    /** Metric names in a PromQL expression: identifiers that are not functions, keywords, labels or durations. */
    static final class PromQl {
        private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool", "by", "without", "on",
                "ignoring", "group_left", "group_right", "offset", "inf", "nan", "atan2");
        private static final Pattern IDENTIFIER = Pattern.compile("(?<![\\w.:$])([a-zA-Z_:][a-zA-Z0-9_:]*)(\\s*\\()?");

        static Set<String> metricNames(String expr) {
            String s = expr.replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"", "\"\"").replaceAll("'(?:[^'\\\\]|\\\\.)*'", "''")
                    .replaceAll("\\{[^\\}]*\\}", " ")
                    .replaceAll("\\[[^\\]]*\\]", " ")
                    .replaceAll("\\b(?:by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " ")
                    .replaceAll("\\boffset\\s+\\w+", " ")
                    .replaceAll("label_values\\(\\s*([a-zA-Z_:][a-zA-Z0-9_:]*)[^)]*\\)", "$1");
            Set<String> names = new TreeSet<>();
            Matcher m = IDENTIFIER.matcher(s);
            while (m.find()) {
                if (m.group(2) == null && !KEYWORDS.contains(m.group(1).toLowerCase())) {
                    names.add(m.group(1));
                }
            }
            return names;
        }
    }

    @Test
    void promQl_metricNames_skipsFunctionsLabelsAndDurations() {
        assertThat(PromQl.metricNames("histogram_quantile(0.99, sum by (le, route) (rate(a_bucket{job=\"w\",route!~\"x|y\"}"
                + "[5m]))) > on (instance) group_left 0.8 * b and c offset 1h unless up == 1e3"))
                .containsExactly("a_bucket", "b", "c", "up");
        assertThat(PromQl.metricNames("label_values(warden_build_info{job=\"warden\"}, instance)"))
                .containsExactly("warden_build_info");
    }
}
