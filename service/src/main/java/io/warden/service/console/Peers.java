package io.warden.service.console;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.Zk;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Asks the other live gateways for the TTLs left of the sessions they track. Heartbeats are never written to
 * ZooKeeper, so only the tracking gateway knows how close a session is to expiring; each gateway publishes its URL in
 * its {@code /gateways} node and serves {@link #PATH}. A gateway that does not answer within {@link #TIMEOUT} leaves
 * its sessions' TTL unknown (the console says so); nothing else depends on the answer.
 *
 * <p>Thread-safety: immutable apart from the thread-safe {@link HttpClient}; safe from any thread.
 */
final class Peers {
    static final String PATH = "/console/peer/tracked-sessions";
    static final Duration TIMEOUT = Duration.ofSeconds(1);
    private static final Logger log = LoggerFactory.getLogger(Peers.class);

    /** The reply of {@link #PATH}. */
    record Tracked(@JsonProperty("gateway_id") String gatewayId, Map<String, Long> sessions) {
    }

    /** The data of a {@code /gateways/{id}} node. */
    record Registration(@JsonProperty("gateway_id") String gatewayId, String url) {
    }

    private final Zk zk;
    private final String self;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();

    Peers(Zk zk, String self) {
        this.zk = zk;
        this.self = self;
    }

    /** Session id to ms left, from every gateway in {@code gateways} but this one that answers in time. */
    CompletableFuture<Map<String, Long>> trackedRemainingMs(List<String> gateways) {
        List<CompletableFuture<Map<String, Long>>> asks = new ArrayList<>();
        for (String g : gateways) {
            if (!g.equals(self)) {
                asks.add(ask(g));
            }
        }
        return CompletableFuture.allOf(asks.toArray(CompletableFuture[]::new)).thenApply(v -> {
            Map<String, Long> all = new HashMap<>();
            asks.forEach(a -> all.putAll(a.join()));
            return all;
        });
    }

    private CompletableFuture<Map<String, Long>> ask(String gateway) {
        return zk.data(CellPaths.gateway(gateway)).thenCompose(ds -> {
            Registration r = Json.readOrNull(ds.data(), Registration.class);
            if (r == null || r.url() == null) {
                return CompletableFuture.completedFuture(Map.<String, Long>of()); // an older gateway, or not yet serving
            }
            HttpRequest request = HttpRequest.newBuilder(URI.create(r.url() + PATH)).timeout(TIMEOUT).GET().build();
            return http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray()).thenApply(reply -> {
                Tracked t = reply.statusCode() == 200 ? Json.readOrNull(reply.body(), Tracked.class) : null;
                return t == null || t.sessions() == null ? Map.<String, Long>of() : t.sessions();
            });
        }).exceptionally(err -> {
            log.debug("gateway {} did not say what its sessions' TTLs are: {}", gateway, Zk.unwrap(err).toString());
            return Map.of();
        });
    }
}
