package io.warden.service.console;

import io.warden.console.model.Health;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Asks each ZooKeeper server of a connect string about itself with the {@code srvr} four-letter word (in ZooKeeper's
 * default {@code 4lw.commands.whitelist}): its mode (leader, follower, standalone), last zxid and connection count.
 *
 * <p>Through a TLS-only server (zk-tls-truststore) the probe is a TLS connection made with the gateway's own stores:
 * ZooKeeper's Netty port answers four-letter words after the handshake.
 *
 * <p>Concurrency: the probes are blocking socket calls, run on a small pool of daemon threads owned here (never on a
 * request or ZooKeeper thread); {@link #close} stops it.
 */
final class ZkServers implements AutoCloseable {
    static final int TIMEOUT_MS = 1000;
    private static final Pattern MODE = Pattern.compile("(?m)^Mode: (\\S+)");
    private static final Pattern ZXID = Pattern.compile("(?m)^Zxid: 0x([0-9a-fA-F]+)");
    private static final Pattern CONNECTIONS = Pattern.compile("(?m)^Connections: (\\d+)");

    private final List<String> servers;
    private final ExecutorService pool;
    private final io.warden.service.zk.ZkSecurity.SocketMaker sockets;

    ZkServers(String connectString) {
        this(connectString, Socket::new);
    }

    ZkServers(String connectString, io.warden.service.zk.ZkSecurity.SocketMaker sockets) {
        this.servers = parse(connectString);
        this.sockets = sockets;
        this.pool = Executors.newFixedThreadPool(Math.min(4, Math.max(1, servers.size())), r -> {
            Thread t = new Thread(r, "warden-console-zk-probe");
            t.setDaemon(true);
            return t;
        });
    }

    static List<String> parse(String connectString) {
        String hosts = connectString;
        int slash = hosts.indexOf('/');
        if (slash >= 0) {
            hosts = hosts.substring(0, slash);
        }
        List<String> out = new ArrayList<>();
        for (String s : hosts.split(",")) {
            if (!s.isBlank()) {
                out.add(s.strip().contains(":") ? s.strip() : s.strip() + ":2181");
            }
        }
        return out;
    }

    /** One probe of every server, in the connect string's order. */
    CompletableFuture<List<Health.ZkServer>> probe() {
        List<CompletableFuture<Health.ZkServer>> probes = new ArrayList<>();
        for (String s : servers) {
            probes.add(CompletableFuture.supplyAsync(() -> probe(s), pool));
        }
        return CompletableFuture.allOf(probes.toArray(CompletableFuture[]::new))
                .thenApply(v -> probes.stream().map(CompletableFuture::join).toList());
    }

    private Health.ZkServer probe(String address) {
        int colon = address.lastIndexOf(':');
        String host = address.substring(0, colon).replace("[", "").replace("]", "");
        try (Socket socket = sockets.make()) {
            socket.connect(new InetSocketAddress(host, Integer.parseInt(address.substring(colon + 1))), TIMEOUT_MS);
            socket.setSoTimeout(TIMEOUT_MS);
            socket.getOutputStream().write("srvr".getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            String reply = readAll(socket.getInputStream());
            Matcher mode = MODE.matcher(reply);
            if (!mode.find()) {
                String first = reply.lines().findFirst().orElse("no reply").strip();
                return new Health.ZkServer(address, null, null, null, first.isEmpty() ? "no reply to srvr" : first);
            }
            Matcher zxid = ZXID.matcher(reply);
            Matcher conns = CONNECTIONS.matcher(reply);
            return new Health.ZkServer(address, mode.group(1),
                    zxid.find() ? Long.parseUnsignedLong(zxid.group(1), 16) : null,
                    conns.find() ? Integer.parseInt(conns.group(1)) : null, null);
        } catch (IOException | RuntimeException e) {
            return new Health.ZkServer(address, null, null, null, e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    private static String readAll(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[4096];
        int n;
        while (out.size() < 64 * 1024 && (n = in.read(buf)) > 0) {
            out.write(buf, 0, n);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        pool.shutdownNow();
    }
}
