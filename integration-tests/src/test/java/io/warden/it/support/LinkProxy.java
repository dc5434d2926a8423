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
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A TCP proxy on one network link (say the link a ZooKeeper follower uses to reach its leader) that injects real faults
 * into the byte stream, in order, without reading it:
 * <ul>
 *   <li>{@link #delayDownstream(Duration)} / {@link #delayUpstream(Duration)}: every chunk that arrives from now on
 *   is held this long before it goes on. Order is kept (a chunk never overtakes an earlier one, even when the delay is
 *   lowered), so the receiver sees the same stream, late: a lagging follower.</li>
 *   <li>{@link #blackhole()}: bytes in both directions are dropped, sockets stay open (a one-sided partition as a
 *   firewall makes it); {@link #heal()} ends it and closes the starved connections so their ends reconnect.</li>
 *   <li>{@link #dropReplies()}: requests go through, replies are dropped (lost replies: the target acts, the caller
 *   never hears); {@link #heal()} ends it likewise.</li>
 *   <li>Either way a connection that lost a chunk carries nothing more that way until it is closed: TCP never
 *   delivers bytes after a gap.</li>
 *   <li>{@link #reset()}: closes every connection now (both ends see it at once); new ones are made as usual.</li>
 *   <li>{@link #retarget(int)}: new connections go to another port (a process restarted elsewhere).</li>
 * </ul>
 * "Upstream" is from the side that connects to the proxy towards the target; "downstream" is the replies.
 *
 * <p>Concurrency: an accept thread; per connection and direction a reader thread that timestamps chunks into a queue
 * and a writer thread that sends each when its time comes. The fault settings are volatile and read per chunk; each
 * direction's "lost" flag is shared by its two threads and only ever goes from false to true.
 */
public final class LinkProxy implements AutoCloseable {
    /** How long a new connection waits for its target to listen before it is closed. */
    static final Duration CONNECT_PATIENCE = Duration.ofSeconds(3);
    private final String name;
    private volatile int targetPort;
    private final ServerSocket listener;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile long upstreamDelayNanos;
    private volatile long downstreamDelayNanos;
    private volatile boolean blackholed;
    private volatile boolean repliesDropped;
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

    /** Drops every byte towards the connecting side (the target's replies) from now on; requests still arrive. */
    public void dropReplies() {
        repliesDropped = true;
    }

    /** Closes every open connection through the proxy. */
    public void reset() {
        for (Socket s : sockets) {
            closeQuietly(s);
        }
        sockets.clear();
    }

    /** New connections go to {@code port} from now on; open ones stay where they are. */
    public void retarget(int port) {
        targetPort = port;
    }

    /** Whether any fault is on (a black hole, dropped replies or a delay). */
    public boolean faulty() {
        return blackholed || repliesDropped || upstreamDelayNanos != 0 || downstreamDelayNanos != 0;
    }

    /** Ends a black hole or dropped replies (closing the connections that lost bytes) and every delay. */
    public void heal() {
        if (blackholed || repliesDropped) {
            // Closed before the faults end: a starved connection never carries another byte (each also stops at its
            // first lost chunk, see pump).
            List<Socket> starved = List.copyOf(sockets);
            for (Socket s : starved) {
                closeQuietly(s);
            }
            sockets.removeAll(starved);
            blackholed = false;
            repliesDropped = false;
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
            Thread connect = new Thread(() -> connect(client), "link-proxy-" + name + "-connect");
            connect.setDaemon(true);
            connect.start();
        }
    }

    /**
     * Connects an accepted connection to the target. A target that is not listening yet (a ZooKeeper server that is
     * about to lead) is tried again for up to {@link #CONNECT_PATIENCE}, the accepted side waiting meanwhile: a caller
     * without the proxy would have been refused and tried again, and one that is accepted then closed at once (an EOF
     * straight after connecting) gives up sooner than it should — a follower goes back to electing, over and over.
     */
    private void connect(Socket client) {
        long until = System.nanoTime() + CONNECT_PATIENCE.toNanos();
        while (!closed) {
            try {
                Socket server = new Socket(LoopbackPorts.HOST, targetPort);
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(server);
                pump(client, server, true);
                pump(server, client, false);
                return;
            } catch (IOException e) {
                if (System.nanoTime() - until > 0 || client.isClosed()) {
                    closeQuietly(client);
                    return;
                }
                Await.sleepQuietly(Duration.ofMillis(50));
            }
        }
        closeQuietly(client);
    }

    private record Chunk(long dueNanos, byte[] bytes) {
    }

    private static final Chunk END = new Chunk(0, new byte[0]);

    /**
     * Carries one direction of one connection. Once a chunk of it is dropped, every later one is dropped too, fault or
     * no fault: TCP never delivers bytes after a gap, so a stream that lost a reply shows nothing more until it is
     * closed (as the heal does), rather than going on as if the lost bytes had never been sent.
     */
    private void pump(Socket from, Socket to, boolean upstream) {
        BlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
        String direction = upstream ? "up" : "down";
        AtomicBoolean lost = new AtomicBoolean();
        Thread reader = new Thread(() -> {
            byte[] buf = new byte[16 * 1024];
            try (InputStream in = from.getInputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    if (lost.get() || dropping(upstream)) {
                        lost.set(true);
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
                    if (lost.get() || dropping(upstream)) {
                        lost.set(true);
                    } else {
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
                sockets.remove(from);
                sockets.remove(to);
            }
        }, "link-proxy-" + name + "-" + direction + "-write");
        reader.setDaemon(true);
        writer.setDaemon(true);
        reader.start();
        writer.start();
    }

    /** Whether a fault drops the chunks going this way now. */
    private boolean dropping(boolean upstream) {
        return blackholed || (!upstream && repliesDropped);
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
