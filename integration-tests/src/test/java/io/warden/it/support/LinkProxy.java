package io.warden.it.support;

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
 * A TCP proxy on one network link (say the link a ZooKeeper follower uses to reach its leader) that injects real faults
 * into the byte stream, in order, without reading it:
 * <ul>
 *   <li>{@link #delayDownstream(Duration)} / {@link #delayUpstream(Duration)}: every chunk that arrives from now on
 *   is held this long before it goes on. Order is kept (a chunk never overtakes an earlier one, even when the delay is
 *   lowered), so the receiver sees the same stream, late: a lagging follower.</li>
 *   <li>{@link #blackhole()}: bytes in both directions are dropped, sockets stay open (a one-sided partition as a
 *   firewall makes it); {@link #heal()} ends it and closes the starved connections so their ends reconnect.</li>
 * </ul>
 * "Upstream" is from the side that connects to the proxy towards the target; "downstream" is the replies.
 *
 * <p>Concurrency: an accept thread; per connection and direction a reader thread that timestamps chunks into a queue
 * and a writer thread that sends each when its time comes. The fault settings are volatile and read per chunk.
 */
public final class LinkProxy implements AutoCloseable {
    private final String name;
    private final int targetPort;
    private final ServerSocket listener;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile long upstreamDelayNanos;
    private volatile long downstreamDelayNanos;
    private volatile boolean blackholed;
    private volatile boolean closed;

    public LinkProxy(String name, int targetPort) {
        this.name = name;
        this.targetPort = targetPort;
        try {
            this.listener = new ServerSocket(0, 50, InetAddress.getByName(LoopbackPorts.HOST));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Thread accept = new Thread(this::acceptLoop, "link-proxy-" + name);
        accept.setDaemon(true);
        accept.start();
    }

    public int port() {
        return listener.getLocalPort();
    }

    public int targetPort() {
        return targetPort;
    }

    /** Holds every chunk towards the connecting side (the target's replies) this long from now on; zero: none. */
    public void delayDownstream(Duration delay) {
        downstreamDelayNanos = delay.toNanos();
    }

    /** Holds every chunk towards the target this long from now on; zero: none. */
    public void delayUpstream(Duration delay) {
        upstreamDelayNanos = delay.toNanos();
    }

    /** Drops every byte in both directions from now on; sockets stay open. */
    public void blackhole() {
        blackholed = true;
    }

    /** Ends a black hole (closing the connections that lost bytes) and every delay. */
    public void heal() {
        if (blackholed) {
            blackholed = false;
            for (Socket s : sockets) {
                closeQuietly(s);
            }
            sockets.clear();
        }
        upstreamDelayNanos = 0;
        downstreamDelayNanos = 0;
    }

    @Override
    public String toString() {
        return "LinkProxy[" + name + " :" + port() + " -> :" + targetPort + "]";
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
                Socket server = new Socket(LoopbackPorts.HOST, targetPort);
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

    private void pump(Socket from, Socket to, boolean upstream) {
        BlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
        String direction = upstream ? "up" : "down";
        Thread reader = new Thread(() -> {
            byte[] buf = new byte[16 * 1024];
            try (InputStream in = from.getInputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    if (blackholed) {
                        continue;
                    }
                    long delay = upstream ? upstreamDelayNanos : downstreamDelayNanos;
                    queue.add(new Chunk(System.nanoTime() + delay, Arrays.copyOf(buf, n)));
                }
            } catch (IOException ignored) {
                // closed: the writer closes the other side
            } finally {
                queue.add(END);
            }
        }, "link-proxy-" + name + "-" + direction + "-read");
        Thread writer = new Thread(() -> {
            try (OutputStream out = to.getOutputStream()) {
                while (true) {
                    Chunk chunk = queue.take();
                    if (chunk == END) {
                        break;
                    }
                    long wait = chunk.dueNanos - System.nanoTime();
                    if (wait > 0) {
                        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                    }
                    if (!blackholed) {
                        out.write(chunk.bytes);
                        out.flush();
                    }
                }
            } catch (IOException ignored) {
                // the other side went away
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "link-proxy-" + name + "-" + direction + "-write");
        reader.setDaemon(true);
        writer.setDaemon(true);
        reader.start();
        writer.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing
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

    private static void closeQuietly(ServerSocket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing
        }
    }
}
