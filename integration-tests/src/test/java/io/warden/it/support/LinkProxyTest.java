package io.warden.it.support;

import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The proxy's faults are ones TCP can have: bytes that are lost on a connection are never followed by later bytes on
 * that connection (TCP cannot skip a gap and go on; a reply dropped in the middle of a stream ends what the other side
 * may see of it). A proxy that let bytes through again after dropping some made a stream look like it skipped events,
 * which no real network can do.
 */
class LinkProxyTest {
    /** Rounds of drop-then-heal against a target that writes without pause: the race of the heal shows in a few. */
    private static final int ROUNDS = 20;
    /**
     * Idle connections through the proxy, made before the streaming one: the heal closes connections one by one, as a
     * link with many clients has them (a gateway's client link carries every client's calls and streams).
     */
    private static final int IDLE = 300;

    @Test
    void dropReplies_thenHeal_neverDeliversBytesAfterAGap() throws Exception {
        List<String> gaps = new ArrayList<>();
        try (ServerSocket target = new ServerSocket(0, IDLE + 50, InetAddress.getByName(LoopbackPorts.HOST));
             LinkProxy proxy = new LinkProxy("test", target.getLocalPort())) {
            for (int round = 0; round < ROUNDS; round++) {
                List<Socket> idle = new ArrayList<>();
                try {
                    for (int i = 0; i < IDLE; i++) {
                        idle.add(new Socket(LoopbackPorts.HOST, proxy.port()));
                        idle.add(target.accept());
                    }
                    String gap = round(target, proxy);
                    if (gap != null) {
                        gaps.add("round " + round + ": " + gap);
                    }
                } finally {
                    for (Socket s : idle) {
                        s.close();
                    }
                }
            }
        }
        assertThat(gaps).as("lines received after a gap in the stream").isEmpty();
    }

    /** One connection: lines numbered from 0, replies dropped for a while, then healed; what came after a gap, if any. */
    private static String round(ServerSocket target, LinkProxy proxy) throws Exception {
        try (Socket client = new Socket(LoopbackPorts.HOST, proxy.port()); Socket server = target.accept()) {
            AtomicBoolean stop = new AtomicBoolean();
            Thread writer = new Thread(() -> {
                try (OutputStream out = server.getOutputStream()) {
                    for (long i = 0; !stop.get(); i++) {
                        out.write((i + "\n").getBytes(StandardCharsets.US_ASCII));
                        out.flush();
                    }
                } catch (IOException closed) {
                    // the proxy closed it at the heal
                }
            }, "link-proxy-test-writer");
            writer.start();
            BufferedReader in = new BufferedReader(new InputStreamReader(client.getInputStream(), StandardCharsets.US_ASCII));
            long expected = 0;
            String line;
            // Some lines through, then the replies dropped, then the heal (which closes the connection).
            while (expected < 100 && (line = in.readLine()) != null) {
                expected = check(line, expected);
                if (expected < 0) {
                    return "line " + line + " out of order";
                }
            }
            proxy.dropReplies();
            Thread healer = new Thread(() -> {
                Await.sleepQuietly(Duration.ofMillis(20));
                proxy.heal();
            }, "link-proxy-test-healer");
            healer.start();
            String gap = null;
            try {
                while ((line = in.readLine()) != null) {
                    long next = check(line, expected);
                    if (next < 0) {
                        gap = "line " + line + " after line " + (expected - 1);
                        break;
                    }
                    expected = next;
                }
            } catch (IOException reset) {
                // the heal closed the connection
            }
            healer.join();
            stop.set(true);
            writer.join(5000);
            return gap;
        }
    }

    /** The next line expected after {@code line}, or -1 when {@code line} is not the one expected (or is cut short). */
    private static long check(String line, long expected) {
        try {
            return Long.parseLong(line) == expected ? expected + 1 : -1;
        } catch (NumberFormatException partial) {
            return -1;
        }
    }
}
