package io.warden.service.watch;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy in front of one ZooKeeper server that can cut its clients off and let them back: {@link #partition()}
 * closes every connection and refuses new ones until {@link #heal()}. A client whose partition is shorter than its
 * ZooKeeper session timeout reconnects with the same session (Curator: SUSPENDED, then RECONNECTED), while clients
 * that reach the server directly go on changing things.
 *
 * <p>{@link #delayRequests} adds latency to what clients send (not to what they receive): a client's requests reach the
 * server late while the server's notifications to it keep flowing.
 *
 * <p>Concurrency: two daemon threads copy bytes per connection; {@code partitioned} and {@code requestDelayMillis}
 * are volatile and {@code sockets} a concurrent list.
 */
final class PartitionProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final int serverPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean partitioned;
    private volatile long requestDelayMillis;
    private volatile boolean closed;

    PartitionProxy(int serverPort) throws IOException {
        this.serverPort = serverPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        start("partition-proxy-accept", this::acceptLoop);
    }

    String connectString() {
        return "127.0.0.1:" + listener.getLocalPort();
    }

    /** Cuts every client off, and keeps refusing them until {@link #heal()}. */
    void partition() {
        partitioned = true;
        closeAll();
    }

    void heal() {
        partitioned = false;
    }

    /** From now on, each chunk a client sends is held this long before it is passed on (0: none). */
    void delayRequests(long millis) {
        requestDelayMillis = millis;
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                continue; // closed, or a failed accept: the loop condition decides
            }
            if (partitioned) {
                closeQuietly(client);
                continue;
            }
            try {
                Socket server = new Socket(InetAddress.getLoopbackAddress(), serverPort);
                sockets.add(client);
                sockets.add(server);
                start("partition-proxy-up", () -> pump(client, server, true));
                start("partition-proxy-down", () -> pump(server, client, false));
            } catch (IOException e) {
                closeQuietly(client);
            }
        }
    }

    private void pump(Socket from, Socket to, boolean requests) {
        try {
            InputStream in = from.getInputStream();
            OutputStream out = to.getOutputStream();
            byte[] buf = new byte[16 * 1024];
            for (int n; (n = in.read(buf)) >= 0; ) {
                long delay = requests ? requestDelayMillis : 0;
                if (delay > 0) {
                    Thread.sleep(delay); // injected latency, not synchronisation
                }
                out.write(buf, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // one side closed
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            // one side closed
        } finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private void closeAll() {
        for (Socket s : sockets) {
            closeQuietly(s);
        }
        sockets.clear();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    private static void start(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() throws IOException {
        closed = true;
        listener.close();
        closeAll();
    }
}
