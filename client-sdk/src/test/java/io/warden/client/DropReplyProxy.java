package io.warden.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy in front of one gateway that lets a chosen request through and drops its reply: the request reaches
 * the gateway and is applied, the client's connection is cut before any byte of the answer. Requests are matched
 * by the start of their request line (e.g. {@code "POST /v1/acquire"}); the first {@code drops} matches lose their
 * replies, everything else is relayed as is.
 */
final class DropReplyProxy implements AutoCloseable {
    private final ServerSocket server;
    private final int targetPort;
    private final byte[] trigger;
    private final AtomicInteger dropsLeft;
    private final AtomicInteger dropped = new AtomicInteger();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    DropReplyProxy(int targetPort, String requestLinePrefix, int drops) throws IOException {
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.targetPort = targetPort;
        this.trigger = requestLinePrefix.getBytes(StandardCharsets.US_ASCII);
        this.dropsLeft = new AtomicInteger(drops);
        Thread acceptor = new Thread(this::accept, "drop-reply-proxy");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    String url() {
        return "http://127.0.0.1:" + server.getLocalPort();
    }

    int dropped() {
        return dropped.get();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                sockets.add(client);
                sockets.add(upstream);
                Connection c = new Connection(client, upstream);
                start(c::relayRequests, "proxy-up");
                start(c::relayReplies, "proxy-down");
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private static void start(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    /** One client connection and its upstream; HTTP/1.1 without pipelining, so a reply follows its request. */
    private final class Connection {
        private final Socket client;
        private final Socket upstream;
        private volatile boolean dropNextReply;

        Connection(Socket client, Socket upstream) {
            this.client = client;
            this.upstream = upstream;
        }

        void relayRequests() {
            byte[] buf = new byte[16384];
            try (InputStream in = client.getInputStream(); OutputStream out = upstream.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) > 0) {
                    if (startsWith(buf, n, trigger) && dropsLeft.getAndDecrement() > 0) {
                        dropNextReply = true; // before the request goes on, so its reply cannot slip through
                    }
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // connection closed
            } finally {
                closeBoth();
            }
        }

        void relayReplies() {
            byte[] buf = new byte[16384];
            try (InputStream in = upstream.getInputStream(); OutputStream out = client.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) > 0) {
                    if (dropNextReply) {
                        dropped.incrementAndGet();
                        return; // the gateway answered; the client never sees it
                    }
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // connection closed
            } finally {
                closeBoth();
            }
        }

        private void closeBoth() {
            quietly(client);
            quietly(upstream);
        }
    }

    private static boolean startsWith(byte[] buf, int n, byte[] prefix) {
        if (n < prefix.length) {
            return false;
        }
        for (int i = 0; i < prefix.length; i++) {
            if (buf[i] != prefix[i]) {
                return false;
            }
        }
        return true;
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
        sockets.forEach(DropReplyProxy::quietly);
    }
}
