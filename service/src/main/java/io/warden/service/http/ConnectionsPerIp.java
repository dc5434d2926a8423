package io.warden.service.http;

import io.micrometer.core.instrument.Counter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * At most {@code limit} open connections per client address ({@code max-connections-per-ip}); a connection past it is
 * closed as soon as it opens, unanswered, and counted (otherwise one host could open enough connections to pin every
 * thread or descriptor). Held acquires and watch streams count: they are connections. (A WebSocket upgrade ends the
 * HTTP connection, and with it that count; whether the WebSocket connection is counted again depends on Jetty handing
 * it these listeners. Either way every count added is taken off once.)
 *
 * <p>Concurrency: Jetty calls {@link #onOpened} and {@link #onClosed} on its selector and pool threads, once each
 * per connection. {@code open} maps an address to its open connections; an entry is removed when its count drops to
 * zero (inside {@code compute}, atomic per key), so the map holds at most one entry per address with an open
 * connection: it is bounded by the connector's open connections. {@code counted} holds the admitted connections
 * (refused ones never enter it, so a refused connection's close cannot take off a count it never added).
 */
final class ConnectionsPerIp implements Connection.Listener {
    private static final Logger log = LoggerFactory.getLogger(ConnectionsPerIp.class);

    private final int limit;
    private final Counter refused;
    private final Map<InetAddress, Integer> open = new ConcurrentHashMap<>();
    /** The connections counted in {@code open}, with their address: each leaves on its onClosed; bounded by the open connections. */
    private final Map<Connection, InetAddress> counted = new ConcurrentHashMap<>();

    ConnectionsPerIp(int limit, Counter refused) {
        this.limit = limit;
        this.refused = refused;
    }

    @Override
    public void onOpened(Connection connection) {
        InetAddress address = address(connection.getEndPoint());
        if (address == null) {
            return;
        }
        boolean[] admitted = new boolean[1];
        open.compute(address, (a, n) -> {
            int count = n == null ? 0 : n;
            admitted[0] = count < limit;
            if (admitted[0]) {
                counted.put(connection, a); // before the count is visible, so an onClosed racing in finds it
            }
            return admitted[0] ? count + 1 : n;
        });
        if (admitted[0]) {
            return;
        }
        // Never counted: whether or not Jetty tells onClosed about a connection closed while it opens, nothing leaks.
        refused.increment();
        log.debug("refused a connection from {}: it has {} open (max-connections-per-ip)", address, limit);
        connection.getEndPoint().close();
    }

    @Override
    public void onClosed(Connection connection) {
        // By now the endpoint no longer knows its remote address: take the one recorded on opening.
        InetAddress address = counted.remove(connection);
        if (address != null) {
            open.computeIfPresent(address, (a, n) -> n <= 1 ? null : n - 1);
        }
    }

    private static InetAddress address(EndPoint endPoint) {
        SocketAddress remote = endPoint.getRemoteSocketAddress();
        return remote instanceof InetSocketAddress inet ? inet.getAddress() : null;
    }
}
