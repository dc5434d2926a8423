package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.Gateway;
import io.warden.service.config.WardenConfig;
import io.warden.service.support.WardenFixture;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * 300 connections that sent their headers and one byte of a 1000-byte body
 * pinned all 250 Jetty threads (each blocked in {@code readNBytes} until the 335 s connection idle timeout), so
 * {@code /health/live} timed out and a session kept alive every second on a 5 s TTL expired. Bodies are now read
 * without a thread and within {@code body-read-timeout-ms}; connections per client address are capped.
 *
 * <p>Real sockets on a real gateway with the real clock (the session must survive on wall time). The attackers
 * connect from 127.0.0.2 (all of 127/8 is loopback on Linux) so the per-address limit they meet is not the one the
 * well-behaved client on 127.0.0.1 meets.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class SlowBodyTest {
    private static final String HEAD = "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "Content-Length: 1000\r\n\r\n";

    @AutoClose
    private final WardenFixture fx = WardenFixture.create();
    private final List<Socket> attackers = new ArrayList<>();

    @AutoClose
    private final AutoCloseable closeAttackers = () -> {
        for (Socket s : attackers) {
            s.close();
        }
    };

    private Gateway start(WardenConfig config) {
        Gateway g = Gateway.start(config);
        closeLater.add(g);
        return g;
    }

    private final List<Gateway> closeLater = new ArrayList<>();

    @AutoClose
    private final AutoCloseable closeGateways = () -> closeLater.forEach(Gateway::close);

    private Socket slowBody(int port, String from) throws IOException {
        Socket s = new Socket();
        s.bind(new InetSocketAddress(InetAddress.getByName(from), 0));
        s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
        s.getOutputStream().write((HEAD + "{").getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        attackers.add(s);
        return s;
    }

    /** What the server sent until it closed the connection or {@code limit} passed (then null if nothing came). */
    private static String readReply(Socket s, Duration limit) throws IOException {
        s.setSoTimeout((int) limit.toMillis());
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        InputStream in = s.getInputStream();
        byte[] buf = new byte[4096];
        try {
            for (int n; (n = in.read(buf)) >= 0; ) {
                out.write(buf, 0, n);
            }
        } catch (SocketTimeoutException e) {
            if (out.size() == 0) {
                return null;
            }
        } catch (IOException e) {
            // reset after the reply: what came is what we have
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void issue12_slowBodies_neitherStallHealthNorExpireAKeptAliveSession() throws Exception {
        Gateway g = start(fx.config().toBuilder().bodyReadTimeout(Duration.ofSeconds(3)).maxConnectionsPerIp(1000).build());
        HttpTestClient http = new HttpTestClient(g.httpPort());
        HttpTestClient.Reply opened = http.postJson("/v1/sessions", "client_id", "survivor", "ttl_ms", 5000);
        assertThat(opened.status()).as(opened.toString()).isEqualTo(201);
        String sid = opened.json().get("session_id").asText();

        for (int i = 0; i < 300; i++) {
            slowBody(g.httpPort(), "127.0.0.2");
        }
        // 8 s of keepalives every second on a 5 s TTL, across the 3 s body deadline: the session must live through it.
        for (int i = 0; i < 8; i++) {
            long t0 = System.nanoTime();
            HttpTestClient.Reply live = http.send("GET", "/health/live", null, null, Duration.ofSeconds(1));
            assertThat(live.status()).as("/health/live during 300 slow bodies: " + live).isEqualTo(200);
            HttpTestClient.Reply kept = http.send("POST", "/v1/sessions/" + sid + "/keepalive", new byte[0],
                    "application/json", Duration.ofSeconds(1));
            assertThat(kept.status()).as("keepalive during 300 slow bodies: " + kept).isEqualTo(200);
            long left = 1000 - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            if (left > 0) {
                Thread.sleep(left);
            }
        }
        assertThat(http.get("/v1/sessions/" + sid).status()).isEqualTo(200);

        // Past the deadline each slow body was answered 408 with a problem naming the body, and its connection closed.
        String reply = readReply(attackers.get(0), Duration.ofSeconds(10));
        assertThat(reply).as("the reply to a body that never came").isNotNull().startsWith("HTTP/1.1 408");
        assertThat(reply).contains("application/problem+json").contains("\"field\":\"body\"");
        assertThat(g.registry().get("warden.http.body.timeouts").counter().count()).isGreaterThanOrEqualTo(300);
    }

    @Test
    void connectionsPerIp_pastTheLimitAreClosed_otherAddressesStillServed() throws Exception {
        Gateway g = start(fx.config().toBuilder().maxConnectionsPerIp(5).bodyReadTimeout(Duration.ofSeconds(60)).build());
        List<Socket> six = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            six.add(slowBody(g.httpPort(), "127.0.0.3"));
        }
        // Jetty may open them in any order (several selectors): exactly one of the six is closed unanswered.
        List<Socket> closed = new ArrayList<>();
        WardenFixture.await("one of six connections from one address is closed", Duration.ofSeconds(20), () -> {
            closed.clear();
            for (Socket s : six) {
                if (closedByServer(s)) {
                    closed.add(s);
                }
            }
            return !closed.isEmpty();
        });
        Thread.sleep(500); // not a synchronisation: a second close would have to come within it to be seen
        long stillOpen = six.stream().filter(s -> !closedByServer(s)).count();
        assertThat(stillOpen).as("connections admitted (max-connections-per-ip 5)").isEqualTo(5);
        HttpTestClient http = new HttpTestClient(g.httpPort());
        assertThat(http.send("GET", "/health/live", null, null, Duration.ofSeconds(1)).status()).isEqualTo(200);
        assertThat(g.registry().get("warden.http.connections.refused").counter().count()).isEqualTo(1);

        // A closed connection gives its slot back.
        six.stream().filter(s -> !closed.contains(s)).findFirst().orElseThrow().close();
        WardenFixture.await("a slot is free again", Duration.ofSeconds(20), () -> {
            try {
                Socket again = slowBody(g.httpPort(), "127.0.0.3");
                Thread.sleep(200);
                return !closedByServer(again);
            } catch (IOException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        });
    }

    /** Whether the server has closed {@code s} (a read sees the end of the stream) or it is still open. */
    private static boolean closedByServer(Socket s) {
        try {
            s.setSoTimeout(50);
            return s.getInputStream().read() == -1;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset
        }
    }
}
