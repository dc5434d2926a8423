package io.warden.client;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP relay in front of one gateway that reads the HTTP/1.1 requests going through it (request line, headers,
 * {@code Content-Length} body) and applies faults to chosen ones: hold a request back before passing it on, cut the
 * connection after a while, or answer in the gateway's place (e.g. a 500 from a broken proxy). It records every request
 * it saw. {@link #cut()} drops every connection and turns new ones away until {@link #restore()}. A WebSocket upgrade
 * or an SSE stream is relayed as it is once its request has gone through.
 *
 * <p>Real faults on a real connection, in front of a real gateway; the client under test cannot tell them from a slow
 * network, a broken gateway or a partition.
 *
 * <p>Concurrency: rules and the request log are copy-on-write lists; every connection has two threads of its own.
 */
final class FaultRelay implements AutoCloseable {
    /** A request as the relay read it. */
    record Request(String line, String body, long arrivedNanos) {
    }

    /** What to do with a matching request. */
    sealed interface Action permits Delay, CutAfter, Answer, Blackhole {
    }

    /** Pass the request on after {@code ms}. */
    record Delay(long ms) implements Action {
    }

    /** Hold the request for {@code ms}, then close the connection without passing it on. */
    record CutAfter(long ms) implements Action {
    }

    /** Answer in the gateway's place, without passing the request on. */
    record Answer(int status, String contentType, String body) implements Action {
    }

    /** Never pass the request on, never answer; the connection stays open. */
    record Blackhole() implements Action {
    }

    private record Rule(String prefix, Action action, AtomicInteger left) {
    }

    private final ServerSocket server;
    private volatile int targetPort;
    private final List<Rule> rules = new CopyOnWriteArrayList<>();
    private final List<Request> seen = new CopyOnWriteArrayList<>();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicInteger delayedPassed = new AtomicInteger();
    private volatile boolean refusing;

    FaultRelay(int targetPort) throws IOException {
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.targetPort = targetPort;
        Thread acceptor = new Thread(this::accept, "fault-relay-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** From now on, new connections go to {@code port} (e.g. a gateway started after the relay). */
    void target(int port) {
        this.targetPort = port;
    }

    String url() {
        return "http://127.0.0.1:" + server.getLocalPort();
    }

    /** Applies {@code action} to the next {@code times} requests whose request line starts with {@code prefix}. */
    FaultRelay on(String prefix, Action action, int times) {
        rules.add(new Rule(prefix, action, new AtomicInteger(times)));
        return this;
    }

    /** Applies {@code action} to every later request whose request line starts with {@code prefix}. */
    FaultRelay always(String prefix, Action action) {
        return on(prefix, action, Integer.MAX_VALUE);
    }

    void clearRules() {
        rules.clear();
    }

    /** Drops every open connection; new ones are closed at once until {@link #restore()}. */
    void cut() {
        refusing = true;
        sockets.forEach(FaultRelay::quietly);
        sockets.clear();
    }

    void restore() {
        refusing = false;
    }

    /** The requests seen so far whose request line starts with {@code prefix}, in arrival order. */
    List<Request> requests(String prefix) {
        List<Request> out = new ArrayList<>();
        for (Request r : seen) {
            if (r.line().startsWith(prefix)) {
                out.add(r);
            }
        }
        return out;
    }

    /** How many delayed requests have been passed on after their delay. */
    int delayedPassed() {
        return delayedPassed.get();
    }

    private Action actionFor(String line) {
        for (Rule r : rules) {
            if (line.startsWith(r.prefix()) && r.left().getAndDecrement() > 0) {
                return r.action();
            }
        }
        return null;
    }

    private void accept() {
        while (!server.isClosed()) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            if (refusing) {
                quietly(client);
                continue;
            }
            try {
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                sockets.add(client);
                sockets.add(upstream);
                start(() -> relayRequests(client, upstream), "relay-up");
                start(() -> copy(upstream, client), "relay-down");
            } catch (IOException e) {
                quietly(client); // the gateway is down: so is the relay
            }
        }
    }

    private void relayRequests(Socket client, Socket upstream) {
        try (InputStream in = client.getInputStream(); OutputStream out = upstream.getOutputStream()) {
            while (true) {
                byte[] head = readHead(in);
                if (head == null) {
                    return;
                }
                String headText = new String(head, StandardCharsets.ISO_8859_1);
                String line = headText.substring(0, headText.indexOf("\r\n"));
                String lower = headText.toLowerCase(Locale.ROOT);
                int length = contentLength(lower);
                byte[] body = in.readNBytes(length);
                seen.add(new Request(line, new String(body, StandardCharsets.UTF_8), System.nanoTime()));
                Action action = actionFor(line);
                if (action instanceof Delay d) {
                    sleep(d.ms());
                    delayedPassed.incrementAndGet();
                } else if (action instanceof CutAfter c) {
                    sleep(c.ms());
                    return;
                } else if (action instanceof Answer a) {
                    byte[] bytes = a.body().getBytes(StandardCharsets.UTF_8);
                    String response = "HTTP/1.1 " + a.status() + " Fault\r\nContent-Type: " + a.contentType()
                            + "\r\nContent-Length: " + bytes.length + "\r\n\r\n";
                    OutputStream toClient = client.getOutputStream();
                    toClient.write(response.getBytes(StandardCharsets.ISO_8859_1));
                    toClient.write(bytes);
                    toClient.flush();
                    continue;
                } else if (action instanceof Blackhole) {
                    in.transferTo(OutputStream.nullOutputStream());
                    return;
                }
                out.write(head);
                out.write(body);
                out.flush();
                if (lower.contains("\r\nupgrade:")) {
                    in.transferTo(out); // a WebSocket from here on: frames, not requests
                    return;
                }
            }
        } catch (IOException e) {
            // closed
        } finally {
            quietly(client);
            quietly(upstream);
        }
    }

    /** The request head up to and including the blank line, or null at the end of the stream. */
    private static byte[] readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        int b;
        while ((b = in.read()) >= 0) {
            head.write(b);
            matched = (b == '\r' && (matched == 0 || matched == 2)) || (b == '\n' && (matched == 1 || matched == 3))
                    ? matched + 1 : (b == '\r' ? 1 : 0);
            if (matched == 4) {
                return head.toByteArray();
            }
        }
        return null;
    }

    private static int contentLength(String lowerHead) {
        int i = lowerHead.indexOf("\r\ncontent-length:");
        if (i < 0) {
            return 0;
        }
        int start = i + "\r\ncontent-length:".length();
        int end = lowerHead.indexOf("\r\n", start);
        return Integer.parseInt(lowerHead.substring(start, end).trim());
    }

    private void copy(Socket from, Socket to) {
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            byte[] buf = new byte[16384];
            int n;
            while ((n = in.read(buf)) > 0) {
                out.write(buf, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // closed
        } finally {
            quietly(from);
            quietly(to);
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void start(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    private static void quietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        sockets.forEach(FaultRelay::quietly);
    }
}
