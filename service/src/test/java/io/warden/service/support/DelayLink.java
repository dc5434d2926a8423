package io.warden.service.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * A TCP relay in front of one ZooKeeper server that delays what goes through it, both ways, keeping the order (a delay
 * line, not a sleep per chunk: throughput is kept, only latency is added). A gateway connected through it is a gateway
 * with a slow link to ZooKeeper: its requests arrive late, and it hears of every change late. The same idea as the
 * integration tests' {@code LinkProxy}, for the service's in-process tests.
 *
 * <p>Concurrency: an accept thread; per connection and direction a reader that timestamps chunks into a queue and a
 * writer that sends each when due. The delays are volatile, read per chunk; {@code sockets} is a concurrent list.
 */
public final class DelayLink implements AutoCloseable {
    private final int targetPort;
    private final ServerSocket listener;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile long upNanos;
    private volatile long downNanos;
    private volatile boolean closed;

    public DelayLink(int targetPort, Duration up, Duration down) {
        this.targetPort = targetPort;
        this.upNanos = up.toNanos();
        this.downNanos = down.toNanos();
        try {
            this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Thread accept = new Thread(this::acceptLoop, "delay-link-accept");
        accept.setDaemon(true);
        accept.start();
    }

    public String connectString() {
        return "127.0.0.1:" + listener.getLocalPort();
    }

    /** From now on, chunks towards ZooKeeper wait {@code up}, and chunks back wait {@code down}. */
    public void delay(Duration up, Duration down) {
        upNanos = up.toNanos();
        downNanos = down.toNanos();
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return;
            }
            try {
                Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(server);
                pump(client, server, true);
                pump(server, client, false);
            } catch (IOException e) {
                closeQuietly(client);
            }
        }
    }

    private record Chunk(long dueNanos, byte[] bytes) {
    }

    private static final Chunk END = new Chunk(0, new byte[0]);

    private void pump(Socket from, Socket to, boolean up) {
        BlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            byte[] buf = new byte[16 * 1024];
            try (InputStream in = from.getInputStream()) {
                for (int n; (n = in.read(buf)) >= 0; ) {
                    queue.add(new Chunk(System.nanoTime() + (up ? upNanos : downNanos), Arrays.copyOf(buf, n)));
                }
            } catch (IOException ignored) {
                // closed: the writer closes the other side
            } finally {
                queue.add(END);
            }
        }, "delay-link-" + (up ? "up" : "down") + "-read");
        Thread writer = new Thread(() -> {
            try (OutputStream out = to.getOutputStream()) {
                while (true) {
                    Chunk chunk = queue.take();
                    if (chunk == END) {
                        break;
                    }
                    long wait = chunk.dueNanos - System.nanoTime();
                    if (wait > 0) {
                        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000)); // injected latency, not synchronisation
                    }
                    out.write(chunk.bytes);
                    out.flush();
                }
            } catch (IOException ignored) {
                // the other side went away
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "delay-link-" + (up ? "up" : "down") + "-write");
        reader.setDaemon(true);
        writer.setDaemon(true);
        reader.start();
        writer.start();
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    @Override
    public void close() {
        closed = true;
        closeQuietly(listener);
        for (Socket s : sockets) {
            closeQuietly(s);
        }
        sockets.clear();
    }
}
