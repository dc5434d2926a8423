package io.warden.service.http;

import static io.warden.service.http.RawHttp.escape;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.warden.service.Gateway;
import io.warden.service.api.Holder;
import io.warden.service.api.LockName;
import io.warden.service.api.LockSummary;
import io.warden.service.api.LockView;
import io.warden.service.api.Waiter;
import io.warden.service.api.Warden;
import io.warden.service.http.RawHttp.Reply;
import io.warden.service.http.RawHttp.Req;
import io.warden.service.support.WardenFixture;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An HTTP fuzz test: thousands of mutated requests over every endpoint of a real gateway on a real ZooKeeper
 * (contract §3: "No input may produce a 500, a hang, or a change to state"; §6: bad input gets a 4xx problem document
 * or a closed connection). Every request is written on a raw socket (full control over the request line, headers and
 * body bytes) with {@code Connection: close} and a short read timeout; the reply is read to its end (an event stream
 * or a 101 only to its headers).
 *
 * <p>Seeds: one valid request per call of the route table ({@link HttpApi}), with real ids created at the start: a
 * session {@code S1} (which holds nothing between requests) and a lease {@code L1} that holds
 * {@code default/fuzz-held} (so the lease API's 409 and a current {@code /v1/check} have something to see). Each
 * request is a seed with one to three mutations at the JSON, path/query, header or request-line level, from a
 * {@link Random} whose seed is printed ({@code -Dfuzz.seed=N} repeats a run; {@code -Dfuzz.count=N} sets the number
 * of requests, default 2,000).
 *
 * <p>Checks per reply: a status below 500 (a 503 would mean the engine is unavailable, which it never is here); a 4xx
 * is {@code application/problem+json} with {@code type, title, status, detail, code} and {@code status} equal to the
 * HTTP status; no reply within the timeout is a hang. A connection the server closes without any reply is accepted
 * only for request-line garbage (category {@code line}): a server may drop a peer that does not speak HTTP/1.1. For
 * everything else, a reply is owed.
 *
 * <p>"The zxid did not move": ZooKeeper's {@code srvr} four-letter word reports the server's last processed zxid,
 * which every write transaction (create, delete, setData, multi, and also session create/close) advances and nothing
 * else does: reads, watches and pings leave it alone. The fixture is one standalone server, so this single number
 * covers every client and every path, not only the chroot. It is read right before and right after each request;
 * requests go one at a time, and nothing in the gateway writes on its own meanwhile (its timers run on the fixture's
 * {@code ManualClock}, which this test never advances). A 4xx with a different zxid after it than before is a failure.
 * A 2xx may change state (a mutation can still be a valid acquire): then the test puts the state back (below) and
 * waits until the zxid is still before the next request, so such a change is never blamed on the next one.
 *
 * <p>State between requests (what makes every call answer at once, without advancing the clock): S1 alive, holding
 * and waiting nothing; L1 holding {@code default/fuzz-held}; no other session holding or waiting anywhere. Then every
 * acquire is on a free lock, except one naming {@code fuzz-held}, whose {@code wait_ms} the test sets to 0 so it gets
 * its answer (a 409, TIMED_OUT or QUEUED at once) instead of waiting for a clock that does not move.
 *
 * <p>Known, fixed elsewhere: {@link #KNOWN_ELSEWHERE} lists the findings that branches {@code edge} (Jetty-level and
 * request-line errors) and {@code edge2} (Content-Type / Content-Encoding checks, 415) fix; they are reported as
 * "known" in the output but do not fail the test. Remove entries as those branches are merged.
 */
class HttpFuzzTest {
    /** Fixed by default, so that `mvn verify` is repeatable; {@code -Dfuzz.seed=random} for a new one each run. */
    private static final long SEED = seed(System.getProperty("fuzz.seed"));

    private static long seed(String given) {
        if (given == null || given.isBlank()) {
            return 20_261_202L;
        }
        return given.equals("random") ? new Random().nextLong() : Long.parseLong(given.strip());
    }
    private static final int COUNT = Integer.getInteger("fuzz.count", 2000);
    private static final int READ_TIMEOUT_MS = 5_000;
    private static final int MAX_REPORTED = 20;
    private static final String HELD_RESOURCE = "fuzz-held";
    private static final String ABSENT_SESSION = "0123456789abcdef0123456789abcdef";
    private static final Pattern WAIT_MS = Pattern.compile("\"wait_ms\"\\s*:\\s*[0-9]+");

    @AutoClose
    private final WardenFixture fx = WardenFixture.create();
    private Gateway gateway;
    private Warden warden;

    private String s1;
    private String l1;
    private long l1Token;
    private long staleToken;
    private final List<String> failures = new ArrayList<>();
    private final Map<String, Integer> known = new LinkedHashMap<>();
    private final Map<String, Integer> statuses = new java.util.TreeMap<>();
    /** 2xx replies to bodies sent as something other than plain JSON (edge2 answers those 415; not a failure here). */
    private final Map<String, Integer> tolerated = new java.util.TreeMap<>();
    private long restoreNanos;
    private int restores;

    // ------------------------------------------------------------------ the run

    @Test
    @Timeout(value = 170, unit = TimeUnit.SECONDS)
    void mutatedRequests_neverA5xx_every4xxAProblem_noRejectedRequestMovesTheZxid() throws Exception {
        System.out.println("HttpFuzzTest: seed " + SEED + " (-Dfuzz.seed=" + SEED + "), " + COUNT + " requests");
        gateway = fx.gateway();
        warden = gateway.warden();
        setUpState();
        staleToken = staleToken();
        Random random = new Random(SEED);
        long started = System.nanoTime();
        int rejected = 0;
        long zxid = zxid();
        for (int i = 0; i < COUNT; i++) {
            Req req = mutate(random, seed(random));
            long before = zxid; // nothing writes between the last reading and this request (class comment)
            Reply reply = send(req);
            long after = zxid();
            statuses.merge(reply.status() < 0 ? reply.problem() : Integer.toString(reply.status()), 1, Integer::sum);
            String failure = judge(req, reply, before, after);
            if (reply.status() >= 400 && reply.status() < 500) {
                rejected++;
            }
            if (reply.status() >= 200 && reply.status() < 300 && "POST".equals(req.method) && notJson(req)) {
                req.mutations.stream().filter(m -> m.startsWith("Content-Type") || m.startsWith("Content-Encoding")
                        || m.equals("no Content-Type")).findFirst().ifPresent(m -> tolerated.merge(m, 1, Integer::sum));
                if (failure == null && req.body != null && req.body.length > 0) {
                    failure = "a body not sent as plain application/json was accepted (" + reply.status() + "): must be a 415";
                }
            }
            if (failure != null) {
                String knownAs = knownElsewhere(req, reply);
                if (knownAs != null) {
                    known.merge(knownAs, 1, Integer::sum);
                } else {
                    failures.add("#" + i + " " + failure + "\n    request: " + req + "\n    reply:   " + reply
                            + (before != after ? "\n    zxid:    0x" + Long.toHexString(before) + " -> 0x" + Long.toHexString(after) : ""));
                }
            }
            if (after != before) {
                long t = System.nanoTime();
                restoreState();
                restoreNanos += System.nanoTime() - t;
                restores++;
                zxid = zxid();
            } else {
                zxid = after;
            }
        }
        long ms = (System.nanoTime() - started) / 1_000_000;
        System.out.println("HttpFuzzTest: " + COUNT + " requests in " + ms + " ms, " + rejected + " rejected (4xx); statuses "
                + statuses + "; " + restores + " state restores in " + restoreNanos / 1_000_000 + " ms; known, fixed elsewhere: " + known
                + "; bodies not sent as plain JSON that were still accepted (2xx): " + tolerated);
        StringBuilder message = new StringBuilder(failures.size() + " of " + COUNT + " requests failed (seed " + SEED
                + "; rerun with -Dfuzz.seed=" + SEED + "):");
        failures.stream().limit(MAX_REPORTED).forEach(f -> message.append("\n").append(f));
        if (failures.size() > MAX_REPORTED) {
            message.append("\n... and ").append(failures.size() - MAX_REPORTED).append(" more");
        }
        java.nio.file.Path report = java.nio.file.Path.of("target", "http-fuzz-failures.txt");
        java.nio.file.Files.createDirectories(report.getParent());
        java.nio.file.Files.writeString(report, "seed " + SEED + "\n" + String.join("\n", failures) + "\n");
        assertThat(failures).as(message.toString()).isEmpty();
        assertThat(rejected).as("the mutations mostly produce rejected requests").isGreaterThan(COUNT / 2);
    }

    /** Whether the body went with a Content-Encoding or without the Content-Type {@code application/json}. */
    private static boolean notJson(Req req) {
        boolean json = req.headers.stream().anyMatch(h -> h[0].equalsIgnoreCase("Content-Type")
                && h[1].toLowerCase(Locale.ROOT).startsWith("application/json"));
        return !json || req.hasHeader("Content-Encoding");
    }

    /** What is wrong with this reply, or null. */
    private static String judge(Req req, Reply reply, long before, long after) {
        if (reply.status() < 0) {
            if (reply.problem().equals("CLOSED") && req.category.equals("line")) {
                return null; // request-line garbage: closing is an answer (see the class comment)
            }
            return "no reply (" + reply.problem() + ")";
        }
        if (reply.status() >= 500) {
            return "a " + reply.status();
        }
        if (reply.status() >= 400) {
            String bad = problemDocumentFault(req, reply);
            if (bad != null) {
                return "a " + reply.status() + " that is not a problem document: " + bad;
            }
            if (before != after) {
                return "a rejected request (" + reply.status() + ") changed ZooKeeper";
            }
        }
        return null;
    }

    private static String problemDocumentFault(Req req, Reply reply) {
        if (!reply.contentType().toLowerCase(Locale.ROOT).startsWith(Problems.CONTENT_TYPE)) {
            return "Content-Type '" + reply.contentType() + "'";
        }
        if (req.isHead()) {
            return null; // no body to a HEAD
        }
        JsonNode doc;
        try {
            doc = HttpTestClient.MAPPER.readTree(reply.body());
        } catch (IOException e) {
            return "not JSON: " + e.getMessage();
        }
        if (doc == null || !doc.isObject()) {
            return "not a JSON object";
        }
        for (String field : List.of("type", "title", "status", "detail", "code")) {
            if (!doc.hasNonNull(field)) {
                return "no '" + field + "'";
            }
        }
        if (doc.get("status").asInt() != reply.status()) {
            return "status " + doc.get("status") + " in the document";
        }
        return null;
    }

    // ------------------------------------------------------------------ known findings, fixed on other branches

    /**
     * Findings that other branches fix, by a narrow description of request and reply; each entry names its branch.
     * Null when the failure is not one of them. Remove entries once those branches are merged.
     */
    static String knownElsewhere(Req req, Reply reply) {
        for (Known k : KNOWN_ELSEWHERE) {
            if (k.matches(req, reply)) {
                return k.name;
            }
        }
        return null;
    }

    record Known(String name, java.util.function.BiPredicate<Req, Reply> test) {
        boolean matches(Req req, Reply reply) {
            return test.test(req, reply);
        }
    }

    /** A reply with neither a Content-Type nor a body: what Jetty writes when it rejects a request before any handler. */
    private static boolean bare(Reply reply) {
        return reply.contentType().isEmpty() && reply.body().length == 0;
    }

    /**
     * The findings the branches {@code edge} (Jetty-level and request-line errors) and {@code edge2} (Content-Type,
     * Content-Encoding: 415) fix, each as narrow as the request and the reply allow. Each entry can go once its branch
     * is merged; the fuzz test then checks those requests too.
     */
    /**
     * Findings fixed in other branches while this test was written; empty since they were merged (the edge's
     * request-line, parser and header errors are 400 problem documents, and bodies not sent as JSON are 415s). Kept so
     * that a finding waiting for a fix elsewhere has a narrow, named place.
     */
    static final List<Known> KNOWN_ELSEWHERE = List.of();

    // ------------------------------------------------------------------ seeds

    private Req seed(Random r) {
        List<Supplier<Req>> seeds = seeds();
        return seeds.get(r.nextInt(seeds.size())).get();
    }

    private List<Supplier<Req>> seeds() {
        String s = s1;
        return List.of(
                () -> new Req("open session", "POST", "/v1/sessions", "{\"client_id\":\"fuzz\",\"ttl_ms\":30000,\"lock_delay_ms\":0}"),
                () -> new Req("read session", "GET", "/v1/sessions/" + s, null),
                () -> new Req("read absent session", "GET", "/v1/sessions/" + ABSENT_SESSION, null),
                () -> new Req("keepalive", "POST", "/v1/sessions/" + s + "/keepalive", "{\"ttl_ms\":60000}"),
                () -> new Req("keepalive empty", "POST", "/v1/sessions/" + s + "/keepalive", null),
                () -> new Req("keepalive websocket", "GET", "/v1/sessions/" + s + "/keepalive", null)
                        .header("Upgrade", "websocket").header("Connection", "Upgrade").header("Sec-WebSocket-Version", "7"),
                () -> new Req("close session", "DELETE", "/v1/sessions/" + s, null),
                () -> new Req("close absent session", "DELETE", "/v1/sessions/" + ABSENT_SESSION, null),
                () -> new Req("acquire", "POST", "/v1/acquire", "{\"session_id\":\"" + s + "\",\"name\":\"fuzz/a\",\"mode\":\"SHARED\","
                        + "\"wait_ms\":1000,\"request_id\":\"r-" + Long.toHexString(System.nanoTime()) + "\",\"on_timeout\":\"KEEP\"}"),
                () -> new Req("acquire minimal", "POST", "/v1/acquire", "{\"session_id\":\"" + s + "\",\"name\":\"fuzz/b/c\"}"),
                () -> new Req("acquire held", "POST", "/v1/acquire", "{\"session_id\":\"" + s + "\",\"name\":\"default/" + HELD_RESOURCE
                        + "\",\"wait_ms\":0,\"on_timeout\":\"CANCEL\"}"),
                () -> new Req("release token", "POST", "/v1/release", "{\"session_id\":\"" + s + "\",\"name\":\"fuzz/a\",\"token\":" + staleToken + "}"),
                () -> new Req("release request", "POST", "/v1/release", "{\"session_id\":\"" + s + "\",\"name\":\"fuzz/a\",\"request_id\":\"r-1\"}"),
                () -> new Req("lock", "GET", "/v1/locks/default/" + HELD_RESOURCE, null),
                () -> new Req("lock deep", "GET", "/v1/locks/fuzz/a/b/c", null),
                () -> new Req("locks", "GET", "/v1/locks?namespace=fuzz&prefix=a&limit=10&after=fuzz/a", null),
                () -> new Req("locks all", "GET", "/v1/locks", null),
                () -> new Req("check", "GET", "/v1/check?name=default/" + HELD_RESOURCE + "&token=" + l1Token, null),
                () -> new Req("namespaces", "GET", "/v1/namespaces", null),
                () -> new Req("watch name", "GET", "/v1/watch?name=fuzz/a&since_revision=1", null),
                () -> new Req("watch prefix", "GET", "/v1/watch?prefix=fuzz/", null).header("Accept", "text/event-stream"),
                () -> new Req("watch session", "GET", "/v1/watch?session_id=" + s, null).header("Last-Event-ID", "5"),
                () -> new Req("lease acquire", "POST", "/lock/acquire", "{\"resource\":\"fuzz-r\",\"client_id\":\"c\",\"ttl\":5000,\"wait_ms\":100}"),
                () -> new Req("lease acquire held", "POST", "/lock/acquire", "{\"resource\":\"" + HELD_RESOURCE + "\",\"client_id\":\"c\",\"ttl\":5000}"),
                () -> new Req("lease release", "POST", "/lock/release", "{\"resource\":\"fuzz-r\",\"lease_id\":\"" + l1 + "\"}"),
                () -> new Req("lease renew", "POST", "/lock/renew", "{\"lease_id\":\"" + l1 + "\",\"ttl\":60000}"),
                () -> new Req("health live", "GET", "/health/live", null),
                () -> new Req("health ready", "GET", "/health/ready", null),
                () -> new Req("metrics", "GET", "/metrics", null));
    }

    // ------------------------------------------------------------------ mutations

    private static final String[] CATEGORIES = {"json", "json", "json", "path", "path", "header", "header", "line"};

    private Req mutate(Random r, Req req) {
        int n = 1 + r.nextInt(3);
        for (int i = 0; i < n; i++) {
            String category = CATEGORIES[r.nextInt(CATEGORIES.length)];
            if (i == 0) {
                req.category = category;
            } else if (!req.category.equals(category)) {
                req.category = req.category.equals("line") || category.equals("line") ? "line" : "mixed";
            }
            String m = switch (category) {
                case "json" -> mutateJson(r, req);
                case "path" -> mutatePath(r, req);
                case "header" -> mutateHeader(r, req);
                default -> mutateLine(r, req);
            };
            req.mutations.add(m);
        }
        // Keep every acquire answerable at once (the class comment): the held lock is never waited for.
        if (req.body != null && req.bodyText().contains(HELD_RESOURCE)) {
            String neutral = WAIT_MS.matcher(req.bodyText()).replaceAll("\"wait_ms\":0");
            req.body = neutral.getBytes(StandardCharsets.UTF_8);
        }
        return req;
    }

    // --- JSON level

    private static final String[] FIELDS = {"client_id", "ttl_ms", "lock_delay_ms", "session_id", "name", "mode", "wait_ms",
            "request_id", "on_timeout", "token", "resource", "lease_id", "ttl", "Name", "", "__proto__", "name\u0000", "x"};

    private String mutateJson(Random r, Req req) {
        String text = req.bodyText();
        Map<String, String> fields = text == null ? null : parseFlat(text);
        int choice = r.nextInt(fields == null ? 6 : 16);
        if (fields == null) {
            fields = new LinkedHashMap<>();
            choice += 10; // whole-body mutations only
        }
        List<String> keys = new ArrayList<>(fields.keySet());
        switch (choice) {
            case 0 -> {
                if (keys.isEmpty()) {
                    return "drop nothing";
                }
                String k = keys.get(r.nextInt(keys.size()));
                fields.remove(k);
                setBody(req, flat(fields));
                return "drop " + k;
            }
            case 1 -> {
                if (keys.isEmpty()) {
                    return "duplicate nothing";
                }
                String k = keys.get(r.nextInt(keys.size()));
                String body = flat(fields);
                setBody(req, body.substring(0, body.length() - 1) + ",\"" + k + "\":" + value(r) + "}");
                return "duplicate " + k;
            }
            case 2 -> {
                if (keys.isEmpty()) {
                    return "rename nothing";
                }
                String k = keys.get(r.nextInt(keys.size()));
                String v = fields.remove(k);
                String to = r.nextBoolean() ? FIELDS[r.nextInt(FIELDS.length)] : k.toUpperCase(Locale.ROOT);
                fields.put(to, v);
                setBody(req, flat(fields));
                return "rename " + k + " -> " + escape(to.getBytes(StandardCharsets.UTF_8), 40);
            }
            case 3, 4, 5, 6 -> {
                String k = keys.isEmpty() || r.nextInt(4) == 0 ? FIELDS[r.nextInt(FIELDS.length)] : keys.get(r.nextInt(keys.size()));
                String v = value(r);
                fields.put(k, v);
                setBody(req, flat(fields));
                return "set " + k + " = " + escape(v.getBytes(StandardCharsets.UTF_8), 60);
            }
            case 7 -> {
                String k = FIELDS[r.nextInt(FIELDS.length)];
                fields.put(k, value(r));
                setBody(req, flat(fields));
                return "add " + k;
            }
            case 8 -> {
                if (keys.isEmpty()) {
                    return "nest nothing";
                }
                String k = keys.get(r.nextInt(keys.size()));
                int depth = 1 + r.nextInt(r.nextBoolean() ? 10 : 3000);
                fields.put(k, "[".repeat(depth) + fields.get(k) + "]".repeat(depth));
                setBody(req, flat(fields));
                return "nest " + k + " " + depth + " deep";
            }
            case 9 -> {
                setBody(req, "[" + flat(fields) + "]");
                return "array instead of object";
            }
            default -> {
                return wholeBody(r, req, choice - 10);
            }
        }
    }

    private String wholeBody(Random r, Req req, int choice) {
        byte[] body = req.body == null ? "{}".getBytes(StandardCharsets.UTF_8) : req.body;
        switch (choice) {
            case 0 -> {
                req.body = new byte[0];
                return "empty body";
            }
            case 1 -> {
                String[] garbage = {"}", " {}", "x", "\u0000", ",", "]]", "\n{\"a\":1}", " // c", "\uFEFF"};
                String g = garbage[r.nextInt(garbage.length)];
                req.body = concat(body, g.getBytes(StandardCharsets.UTF_8));
                return "trailing " + escape(g.getBytes(StandardCharsets.UTF_8), 20);
            }
            case 2 -> {
                byte[][] bad = {{(byte) 0xff}, {(byte) 0xc3, 0x28}, {(byte) 0xed, (byte) 0xa0, (byte) 0x80}, {(byte) 0xe2, (byte) 0x82},
                        {(byte) 0xf8, (byte) 0x88, (byte) 0x80, (byte) 0x80, (byte) 0x80}, {(byte) 0xc0, (byte) 0xaf}, {0}};
                byte[] b = bad[r.nextInt(bad.length)];
                int at = r.nextInt(body.length + 1);
                req.body = concat(concat(java.util.Arrays.copyOf(body, at), b), java.util.Arrays.copyOfRange(body, at, body.length));
                return "invalid UTF-8 " + escape(b, 20) + " at " + at;
            }
            case 3 -> {
                int at = r.nextInt(body.length + 1);
                req.body = java.util.Arrays.copyOf(body, at);
                return "truncated at " + at;
            }
            case 4 -> {
                String[] whole = {"null", "\"x\"", "42", "true", "[]", "{}", "{\"a\":", "\uFEFF{}", "{'a':1}", "{\"a\":1}}"};
                String w = whole[r.nextInt(whole.length)];
                setBody(req, w);
                return "body " + escape(w.getBytes(StandardCharsets.UTF_8), 20);
            }
            default -> {
                req.body = ("{\"client_id\":\"" + "x".repeat(70_000) + "\"}").getBytes(StandardCharsets.UTF_8);
                return "huge body";
            }
        }
    }

    /** A JSON value (as text) of a wrong type, a number out of range, or a string the fields should refuse. */
    private String value(Random r) {
        String[] values = {"null", "true", "false", "0", "-1", "1", "1.5", "1e3", "-0", "99999999999999999999999",
                "9223372036854775807", "9223372036854775808", "-9223372036854775808", "300001", "60001", "2147483648",
                "[]", "{}", "[1]", "{\"a\":1}", "\"\"", "\" \"", "\"1000\"", "\"SHARED\"", "\"EXCLUSIVE\"", "\"KEEP\"",
                "\"exclusive\"", "\"fuzz/a\"", "\"fuzz\"", "\"Fuzz/A\"", "\"fuzz//a\"", "\"fuzz/a/\"", "\"/fuzz/a\"",
                "\"fuzz/../a\"", "\"fuzz/.a\"", "\"fuzz/a b\"", "\"fuzz/a\\u0000\"", "\"a\\u202eb\"", "\"a\\u200bb\"",
                "\"a\\ud800b\"", "\"a\\udc00\"", "\"\\ud83d\\ude00\"", "\"a\u202eb\"", "\"a\u200bb\"", "\"caf\u00e9\"",
                "\"a\\nb\"", "\"a\tb\"", "\"" + ABSENT_SESSION + "\"", "\"" + ABSENT_SESSION.toUpperCase(Locale.ROOT) + "\"",
                "\"" + s1 + "\"", "\"" + l1 + "\"", "\"../../etc/passwd\"", "\"%ff\"", "\"r-1\"", "\"x y\"",
                "\"" + "x".repeat(129) + "\"", "\"" + "a".repeat(513) + "\"", "\"" + "z".repeat(5000) + "\"",
                "\"fuzz/" + "b/".repeat(12) + "c\"", Long.toString(staleToken), Long.toString(l1Token), "\"" + l1Token + "\""};
        return values[r.nextInt(values.length)];
    }

    // --- path and query level

    private String mutatePath(Random r, Req req) {
        String t = req.target;
        int q = t.indexOf('?');
        String path = q < 0 ? t : t.substring(0, q);
        String query = q < 0 ? null : t.substring(q + 1);
        String[] junk = {"%ff", "%", "%zz", "%2", "%00", "%2e%2e", "..", ".", "%2f", "%5c", ";x=1", "\u00e9", "%c3%28", "+", "*",
                "%e2%80%ae", "~", "%20", "|", "\"", "{x}", "<a>"};
        switch (r.nextInt(12)) {
            case 0 -> {
                int at = r.nextInt(path.length() + 1);
                String j = junk[r.nextInt(junk.length)];
                path = path.substring(0, at) + j + path.substring(at);
                req.target = path + (query == null ? "" : "?" + query);
                return "insert " + j + " in path at " + at;
            }
            case 1 -> {
                req.target = path.replaceFirst("/", "//") + (query == null ? "" : "?" + query);
                return "double slash";
            }
            case 2 -> {
                req.target = path + "/../.." + path + (query == null ? "" : "?" + query);
                return "dot-dot segments";
            }
            case 3 -> {
                req.target = path + "/" + "a".repeat(r.nextBoolean() ? 600 : 9000) + (query == null ? "" : "?" + query);
                return "very long path";
            }
            case 4 -> {
                req.target = t + (q < 0 ? "?" : "&") + (query != null && r.nextBoolean() ? query : "limit=5&limit=6");
                return "repeated params";
            }
            case 5 -> {
                req.target = t + (q < 0 ? "?" : "&") + new String[] {"debug=1", "x", "=", "&&", "a=%ff", "%=1", "name=%zz",
                        "a=" + "b".repeat(3000), "since_revision=-1", "token=1e3", "limit=0", "prefix=a%20b"}[r.nextInt(12)];
                return "extra param";
            }
            case 6 -> {
                req.target = path + (path.endsWith("/") ? "" : "/") + (query == null ? "" : "?" + query);
                return "trailing slash";
            }
            case 7 -> {
                req.target = path.toUpperCase(Locale.ROOT) + (query == null ? "" : "?" + query);
                return "upper-case path";
            }
            case 8 -> {
                String id = new String[] {"nope", ABSENT_SESSION.toUpperCase(Locale.ROOT), "%30" + ABSENT_SESSION.substring(1),
                        ABSENT_SESSION + "0", "..", "%2e%2e", "", "0123456789abcdef0123456789abcde\u00e9"}[r.nextInt(8)];
                req.target = t.replace(s1, id).replace(ABSENT_SESSION, id);
                return "id -> " + escape(id.getBytes(StandardCharsets.UTF_8), 40);
            }
            case 9 -> {
                req.target = "/v1/locks/" + new String[] {"fuzz", "Fuzz/a", "fuzz/_a", "fuzz/a%20b", "fuzz/a%2Fb", "fuzz//a",
                        "fuzz/a/", "fuzz/%ff", "fuzz/a%00", "fuzz/" + "x".repeat(600), "fuzz/" + "a/".repeat(10) + "b", "%2e%2e/x",
                        "fuzz/a+b", "fuzz/%e2%80%ae", "fuzz/a?name=x", "fuzz/a#frag"}[r.nextInt(16)];
                return "lock name path";
            }
            case 10 -> {
                String[] checks = {"name=fuzz/a&token=", "name=&token=1", "token=1&name=fuzz/a&token=2", "name=fuzz/a&token=-1",
                        "name=fuzz/a&token=99999999999999999999", "name=fuzz%2fa&token=1", "name=fuzz/a&token=0x10",
                        "name=fuzz/a&token=%ff", "name=fuzz/a&token=1&x=1", "namespace=A", "limit=1001", "after=%",
                        "name=fuzz/a&prefix=fuzz/", "since_revision=abc&name=fuzz/a", "session_id=nope"};
                req.target = path + "?" + checks[r.nextInt(checks.length)];
                return "query " + req.target;
            }
            default -> {
                req.target = t + "#frag";
                return "fragment";
            }
        }
    }

    // --- header level

    private String mutateHeader(Random r, Req req) {
        switch (r.nextInt(16)) {
            case 0 -> {
                req.removeHeader("Content-Type");
                return "no Content-Type";
            }
            case 1 -> {
                req.removeHeader("Content-Type");
                String ct = new String[] {"text/plain", "application/xml", "multipart/form-data; boundary=x",
                        "application/x-www-form-urlencoded", "garbage", "", "application/json; charset=latin-1",
                        "application/json; charset=utf-16", "*/*"}[r.nextInt(9)];
                req.header("Content-Type", ct);
                return "Content-Type " + ct;
            }
            case 2 -> {
                String ce = new String[] {"gzip", "deflate", "br", "identity, gzip", "x"}[r.nextInt(5)];
                req.header("Content-Encoding", ce);
                return "Content-Encoding " + ce;
            }
            case 3 -> {
                byte[] body = req.body == null ? new byte[0] : req.body;
                String cl = new String[] {Integer.toString(body.length + 5), Integer.toString(Math.max(0, body.length - 3)), "-1",
                        "abc", "99999999999999999999", " 1", "0x10"}[r.nextInt(7)];
                req.removeHeader("Content-Length");
                req.header("Content-Length", cl);
                if (req.body == null) {
                    req.body = new byte[0];
                }
                req.frame = false;
                return "Content-Length " + cl + " for " + body.length + " bytes";
            }
            case 4 -> {
                byte[] body = req.body == null ? new byte[0] : req.body;
                req.header("Content-Length", Integer.toString(body.length));
                req.header("Content-Length", Integer.toString(body.length + 1));
                req.body = body;
                req.frame = false;
                return "two Content-Lengths";
            }
            case 5, 6 -> {
                byte[] body = req.body == null ? new byte[0] : req.body;
                String[] chunkings = {
                        Integer.toHexString(body.length) + "\r\n" + latin(body) + "\r\n0\r\n\r\n",
                        "zz\r\n" + latin(body) + "\r\n0\r\n\r\n",
                        Integer.toHexString(body.length + 10) + "\r\n" + latin(body) + "\r\n0\r\n\r\n",
                        Integer.toHexString(body.length) + "\r\n" + latin(body) + "0\r\n\r\n",
                        Integer.toHexString(body.length) + ";ext=1\r\n" + latin(body) + "\r\n0\r\nX-Trailer: 1\r\n\r\n",
                        "-1\r\n\r\n",
                        "ffffffffffffffff\r\n" + latin(body) + "\r\n0\r\n\r\n",
                        Integer.toHexString(body.length) + "\r\n" + latin(body) + "\r\n",
                };
                int which = r.nextInt(chunkings.length);
                req.body = chunkings[which].getBytes(StandardCharsets.ISO_8859_1);
                req.removeHeader("Content-Length");
                req.header("Transfer-Encoding", r.nextInt(5) == 0 ? "gzip, chunked" : "chunked");
                if (r.nextInt(3) == 0) {
                    req.header("Content-Length", Integer.toString(body.length));
                    req.mutations.add("both Content-Length and Transfer-Encoding");
                }
                req.frame = false;
                return "chunked #" + which;
            }
            case 7 -> {
                req.header("X-Huge", "h".repeat(r.nextBoolean() ? 9000 : 70_000));
                return "huge header";
            }
            case 8 -> {
                for (int i = 0; i < 200; i++) {
                    req.header("X-Many-" + i, "v");
                }
                return "200 headers";
            }
            case 9, 10 -> {
                String m = new String[] {"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE", "CONNECT", "FOO",
                        "get", "PRI"}[r.nextInt(12)];
                req.method = m;
                return "method " + m;
            }
            case 11 -> {
                req.host = false;
                return "no Host";
            }
            case 12 -> {
                req.header("Host", "other.example:1");
                return "second Host";
            }
            case 13 -> {
                req.header("Expect", "100-continue");
                return "Expect";
            }
            case 14 -> {
                req.header(new String[] {"X Bad", "X:Colon", "", "X-\u00e9"}[r.nextInt(4)], "v");
                return "bad header name";
            }
            default -> {
                req.header("Upgrade", new String[] {"websocket", "h2c", "foo"}[r.nextInt(3)]).header("Connection", "Upgrade");
                return "Upgrade";
            }
        }
    }

    // --- request-line level

    private String mutateLine(Random r, Req req) {
        String[] lines = {
                "FO(O " + req.target + " HTTP/1.1",
                req.method + " HTTP/1.1",
                "OPTIONS * HTTP/1.1",
                "GET " + req.target,
                req.method + " " + req.target + " HTTP/2.0",
                req.method + " " + req.target + " HTTP/1.2",
                req.method + " " + req.target + " HTTP/0.9",
                req.method + "  " + req.target + "  HTTP/1.1",
                req.method + "\t" + req.target + "\tHTTP/1.1",
                req.method + " " + req.target + " http/1.1",
                req.method + " http://127.0.0.1" + req.target + " HTTP/1.1",
                req.method + " " + req.target.substring(1) + " HTTP/1.1",
                req.method + " " + req.target + " HTTP/1.1 extra",
                "",
                req.method,
                req.method + " " + req.target + " HTTP/1.0",
                "\u0000\u0001\u0002",
                "PRI * HTTP/2.0",
        };
        int which = r.nextInt(lines.length);
        req.line = lines[which];
        return "request line #" + which;
    }

    // ------------------------------------------------------------------ state

    private void setUpState() throws Exception {
        s1 = openSession();
        JsonNode lease = json(send(new Req("setup", "POST", "/lock/acquire",
                "{\"resource\":\"" + HELD_RESOURCE + "\",\"client_id\":\"holder\",\"ttl\":120000}")), 200);
        l1 = lease.get("lease_id").asText();
        l1Token = lease.get("fencing_token").asLong();
        settle();
    }

    private String openSession() {
        return json(send(new Req("setup", "POST", "/v1/sessions", "{\"client_id\":\"fuzz\",\"ttl_ms\":120000}")), 201)
                .get("session_id").asText();
    }

    /** A token that S1 held once and released. */
    private long staleToken() throws Exception {
        JsonNode acquired = json(send(new Req("setup", "POST", "/v1/acquire", "{\"session_id\":\"" + s1 + "\",\"name\":\"fuzz/a\"}")), 200);
        long token = acquired.get("token").asLong();
        warden.release(s1, LockName.parse("fuzz/a"), token).get(10, TimeUnit.SECONDS);
        settle();
        return token;
    }

    /**
     * Puts the state back (class comment) after a request that may have changed it: every session but S1 and L1 that
     * holds or waits is closed, S1's holds are released and its waits cancelled, and S1 and L1 are made again if a
     * request closed them. Then waits until the zxid is still.
     */
    private void restoreState() throws Exception {
        for (int round = 0; round < 5; round++) {
            boolean changed = false;
            for (LockSummary summary : warden.locks(null, null, 1000, null).get(10, TimeUnit.SECONDS).locks()) {
                LockName name = LockName.parse(summary.name());
                LockView view = warden.lock(name).get(10, TimeUnit.SECONDS);
                for (Holder h : view.holders()) {
                    if (h.sessionId().equals(l1) && summary.name().equals("default/" + HELD_RESOURCE)) {
                        continue;
                    }
                    changed = true;
                    if (h.sessionId().equals(s1)) {
                        warden.release(s1, name, h.token()).get(10, TimeUnit.SECONDS);
                    } else {
                        closeQuietly(h.sessionId());
                    }
                }
                for (Waiter w : view.waiters()) {
                    changed = true;
                    if (w.sessionId().equals(s1)) {
                        warden.cancel(s1, name, w.requestId()).get(10, TimeUnit.SECONDS);
                    } else {
                        closeQuietly(w.sessionId());
                    }
                }
            }
            if (!changed) {
                break;
            }
        }
        if (!alive(s1)) {
            s1 = openSession();
        }
        if (!alive(l1) || warden.lock(LockName.parse("default/" + HELD_RESOURCE)).get(10, TimeUnit.SECONDS).holders().isEmpty()) {
            closeQuietly(l1);
            setUpLease();
        }
        settle();
    }

    private void setUpLease() {
        JsonNode lease = json(send(new Req("setup", "POST", "/lock/acquire",
                "{\"resource\":\"" + HELD_RESOURCE + "\",\"client_id\":\"holder\",\"ttl\":120000}")), 200);
        l1 = lease.get("lease_id").asText();
        l1Token = lease.get("fencing_token").asLong();
    }

    private boolean alive(String sessionId) {
        try {
            warden.session(sessionId).get(10, TimeUnit.SECONDS);
            return true;
        } catch (Exception e) {
            return false;
        }
    }

    private void closeQuietly(String sessionId) {
        try {
            warden.closeSession(sessionId).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            // gone already
        }
    }

    /** Waits until the zxid stays the same for 30 ms (a change a 2xx caused, landing late, is not blamed on the next request). */
    private void settle() throws Exception {
        long last = zxid();
        long stableSince = System.nanoTime();
        while (System.nanoTime() - stableSince < 30_000_000L) {
            Thread.sleep(5);
            long now = zxid();
            if (now != last) {
                last = now;
                stableSince = System.nanoTime();
            }
        }
    }

    /** The ZooKeeper server's last processed zxid ({@link WardenFixture#lastZxid}; see the class comment). */
    private long zxid() throws IOException {
        return fx.lastZxid();
    }

    private static JsonNode json(Reply reply, int status) {
        assertThat(reply.status()).as(reply.toString()).isEqualTo(status);
        try {
            return HttpTestClient.MAPPER.readTree(reply.body());
        } catch (IOException e) {
            throw new AssertionError(reply.toString(), e);
        }
    }

    private Reply send(Req req) {
        return RawHttp.send(gateway.httpPort(), req, READ_TIMEOUT_MS);
    }

    // ------------------------------------------------------------------ helpers

    private static void setBody(Req req, String body) {
        req.body = body.getBytes(StandardCharsets.UTF_8);
        if (!req.hasHeader("Content-Type")) {
            req.header("Content-Type", "application/json");
        }
    }

    /**
     * A flat JSON object's fields as raw value texts, in order; null when {@code text} is not such an object (our
     * seeds are). Values are strings without escaped quotes, numbers, or literals.
     */
    static Map<String, String> parseFlat(String text) {
        Matcher m = Pattern.compile("\"([^\"]*)\":(\"[^\"]*\"|[^,}]*)").matcher(text);
        if (!text.startsWith("{") || !text.endsWith("}")) {
            return null;
        }
        Map<String, String> fields = new LinkedHashMap<>();
        while (m.find()) {
            fields.put(m.group(1), m.group(2));
        }
        return fields;
    }

    static String flat(Map<String, String> fields) {
        StringBuilder b = new StringBuilder("{");
        for (Map.Entry<String, String> e : fields.entrySet()) {
            if (b.length() > 1) {
                b.append(',');
            }
            b.append('"').append(e.getKey()).append("\":").append(e.getValue());
        }
        return b.append('}').toString();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    private static String latin(byte[] b) {
        return new String(b, StandardCharsets.ISO_8859_1);
    }
}
