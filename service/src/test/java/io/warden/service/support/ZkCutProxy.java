package io.warden.service.support;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A TCP proxy between ZooKeeper clients and one server that can lose a reply on purpose: once {@link #cutAfterNext(int)}
 * is armed, it forwards the next request of that kind (say {@code multi}) to the server and then closes the connection before the reply
 * comes back — the "applied, but the reply was lost" case. The client reconnects through the proxy (same ZooKeeper
 * session) and Curator sends the request again.
 *
 * <p>It reads the ZooKeeper framing only: each packet is a 4-byte length and a body; the first packet of a connection
 * is the connect request, every later request body starts with an xid and an op code.
 *
 * <p>Concurrency: two daemon threads per connection copy bytes; {@link #armed} and {@link #cut} are the shared state.
 */
public final class ZkCutProxy implements AutoCloseable {
    /** ZooKeeper op codes this proxy can cut after. */
    public static final int CREATE2 = 15;
    public static final int MULTI = 14;
    private final ServerSocket listener;
    private final int serverPort;
    /** The op code to cut after, or 0 when not armed. */
    private final java.util.concurrent.atomic.AtomicInteger armed = new java.util.concurrent.atomic.AtomicInteger();
    private final AtomicBoolean cut = new AtomicBoolean();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    public ZkCutProxy(int serverPort) throws IOException {
        this.serverPort = serverPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::acceptLoop, "zk-cut-proxy-accept");
        accept.setDaemon(true);
        accept.start();
    }

    public String connectString() {
        return "127.0.0.1:" + listener.getLocalPort();
    }

    /** The next request with this op code reaches the server, and its connection is closed before the reply. */
    public void cutAfterNext(int opCode) {
        cut.set(false);
        armed.set(opCode);
    }

    /** Whether an armed cut has happened. */
    public boolean hasCut() {
        return cut.get();
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), serverPort);
                sockets.add(client);
                sockets.add(server);
                start("zk-cut-proxy-up", () -> upstream(client, server));
                start("zk-cut-proxy-down", () -> copy(server, client));
            } catch (IOException e) {
                if (!closed) {
                    continue;
                }
                return;
            }
        }
    }

    private static void start(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    /** Client to server, packet by packet, watching for the multi to cut after. */
    private void upstream(Socket client, Socket server) {
        try (client; server) {
            DataInputStream in = new DataInputStream(client.getInputStream());
            OutputStream out = server.getOutputStream();
            boolean first = true;
            while (true) {
                int length = in.readInt();
                byte[] body = in.readNBytes(length);
                if (body.length < length) {
                    return;
                }
                out.write(new byte[]{(byte) (length >>> 24), (byte) (length >>> 16), (byte) (length >>> 8), (byte) length});
                out.write(body);
                out.flush();
                int op = !first && length >= 8 ? readInt(body, 4) : 0;
                first = false;
                if (op != 0 && armed.compareAndSet(op, 0)) {
                    // Drop the client's side at once, so the reply cannot reach it; keep the server's side open a
                    // moment so the server reads and applies the request rather than seeing a closed connection.
                    client.close();
                    cut.set(true);
                    Thread.sleep(300);
                    return;
                }
            }
        } catch (IOException | InterruptedException e) {
            // connection over
        }
    }

    /** Server to client, as is. */
    private static void copy(Socket server, Socket client) {
        try (server; client) {
            server.getInputStream().transferTo(client.getOutputStream());
        } catch (IOException e) {
            // connection over
        }
    }

    private static int readInt(byte[] b, int at) {
        return (b[at] & 0xff) << 24 | (b[at + 1] & 0xff) << 16 | (b[at + 2] & 0xff) << 8 | b[at + 3] & 0xff;
    }

    @Override
    public void close() throws IOException {
        closed = true;
        listener.close();
        for (Socket s : sockets) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }
}
