package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.warden.service.Gateway;
import io.warden.service.support.WardenFixture;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A keepalive WebSocket client that sends empty frames and never reads the replies grew the heap
 * from 51 MB to 654 MB in 25 s with 3 sockets. The 16-unanswered limit counted heartbeats the engine had not
 * answered, not replies queued for a client that does not read them. Now the replies queued but not yet written are
 * capped per socket ({@link KeepaliveSockets#MAX_BACKLOG}) and such a client is closed with 1008.
 *
 * <p>A raw-socket WebSocket client with a small receive window: it writes masked empty text frames and reads nothing
 * until the gateway says it has closed it. It writes a burst only once the gateway has answered all but the last burst
 * (counted by {@code warden.keepalives}), so the heartbeats never pile up unanswered and only the backlog limit can
 * close it, while the replies come fast enough to fill the socket's buffers. Pacing by time ("a burst every 100 us, the engine keeps up") failed on a loaded machine: the
 * heartbeats piled up unanswered, the gateway closed the socket for that instead, and the next write broke the pipe.
 *
 * <p>Near the limit it sends one heartbeat at a time, each once the one before was answered, so the heartbeat that
 * closes the socket is the last one sent. Jetty closes the connection as soon as a close frame with a code other than
 * 1000 or 1001 is written, and a connection closed with bytes it has not read is reset: the reset threw away the close
 * frame before the client read it when bursts were still being sent after the gateway had decided to close (6 runs in
 * 20 under load).
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class KeepaliveBacklogTest {
    /**
     * Heartbeats per write. A burst is written once at most one burst is unanswered (by the count of answered
     * keepalives, which runs at most one heartbeat ahead of the socket's own count): at most 2 x 7 + 1 = 15 in flight,
     * below the 16 unanswered that close a socket, so only the backlog limit can close it.
     */
    private static final int BURST = 7;

    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    @Test
    void issue12_clientThatNeverReads_isClosedWith1008_andItsBacklogStaysBounded() throws Exception {
        Gateway g = fx.gateway();
        MeterRegistry registry = g.registry();
        String sid = WardenFixture.session(g.warden(), "never-reads", 30_000);
        try (Socket s = new Socket()) {
            s.setReceiveBufferSize(4096); // before connecting: the window the gateway sees stays small
            s.setTcpNoDelay(true);
            s.connect(new InetSocketAddress("127.0.0.1", g.httpPort()), 5000);
            OutputStream out = s.getOutputStream();
            DataInputStream in = new DataInputStream(s.getInputStream());
            handshake(out, in, "/v1/sessions/" + sid + "/keepalive");

            byte[] frame = {(byte) 0x81, (byte) 0x80, 1, 2, 3, 4}; // FIN, text, masked, empty
            byte[] burst = new byte[BURST * frame.length];
            for (int i = 0; i < BURST; i++) {
                System.arraycopy(frame, 0, burst, i * frame.length, frame.length);
            }
            double maxBacklog = 0;
            long sent = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(45);
            while (closedForBacklog(registry) == 0) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("not closed for its backlog within 45 s (the gateway's largest backlog seen: "
                            + maxBacklog + " replies)");
                }
                // Bursts while the backlog has room for every reply in flight; then one heartbeat at a time, so that
                // what closes the socket is the one heartbeat just sent and nothing is sent after it.
                boolean burstFits = KeepaliveSockets.MAX_BACKLOG - backlog(registry) >= 2 * BURST;
                long answeredBy = burstFits ? sent - BURST : sent;
                long answerDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (keepalives(registry) < answeredBy && closedForBacklog(registry) == 0) {
                    if (System.nanoTime() > answerDeadline) {
                        throw new AssertionError("the gateway answered " + keepalives(registry) + " of the first "
                                + answeredBy + " heartbeats in 30 s");
                    }
                    Thread.sleep(0, 50_000); // a short poll: the replies must come fast enough to fill the buffers
                }
                if (closedForBacklog(registry) > 0) {
                    break;
                }
                try {
                    out.write(burstFits ? burst : frame);
                } catch (IOException e) {
                    throw new AssertionError("the gateway closed the connection while heartbeats were being written ("
                            + sent + " sent, " + keepalives(registry) + " answered, closed for the backlog: "
                            + closedForBacklog(registry) + ")", e);
                }
                sent += burstFits ? BURST : 1;
                maxBacklog = Math.max(maxBacklog, backlog(registry));
            }
            assertThat(maxBacklog).as("replies the gateway held queued for this client").isLessThanOrEqualTo(KeepaliveSockets.MAX_BACKLOG);

            // Now read: the replies it did queue, then the close frame.
            WsTestClient.Closed close = readUntilClose(in);
            assertThat(close.code()).as("close code").isEqualTo(1008);
            assertThat(close.reason()).contains("not being read");
        }
    }

    private static double closedForBacklog(MeterRegistry registry) {
        Counter c = registry.find("warden.ws.closed.backlog").counter();
        return c == null ? 0 : c.count();
    }

    /** Keepalives the gateway has answered, whatever their result. */
    private static double keepalives(MeterRegistry registry) {
        return registry.find("warden.keepalives").counters().stream().mapToDouble(Counter::count).sum();
    }

    private static double backlog(MeterRegistry registry) {
        Gauge b = registry.find("warden.ws.backlog.max.frames").gauge();
        return b == null ? 0 : b.value();
    }

    private static void handshake(OutputStream out, DataInputStream in, String path) throws IOException {
        String key = Base64.getEncoder().encodeToString("0123456789abcdef".getBytes(StandardCharsets.US_ASCII));
        out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
            head.write(in.readUnsignedByte());
        }
        assertThat(head.toString(StandardCharsets.US_ASCII)).startsWith("HTTP/1.1 101")
                .doesNotContainIgnoringCase("Set-Cookie"); // no HTTP session kept per upgrade (HttpEdgeTest)
    }

    /** Reads server frames (unmasked) until a close frame. */
    private static WsTestClient.Closed readUntilClose(DataInputStream in) throws IOException {
        while (true) {
            int b0 = in.readUnsignedByte();
            int len = in.readUnsignedByte() & 0x7f;
            if (len == 126) {
                len = in.readUnsignedShort();
            } else if (len == 127) {
                len = (int) in.readLong();
            }
            byte[] payload = new byte[len];
            in.readFully(payload);
            if ((b0 & 0x0f) == 0x8) {
                return new WsTestClient.Closed(((payload[0] & 0xff) << 8) | (payload[1] & 0xff),
                        new String(payload, 2, len - 2, StandardCharsets.UTF_8));
            }
        }
    }
}
