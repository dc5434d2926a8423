package io.warden.console.model;

import java.util.List;

/**
 * The gateway serving the console, the cell's live gateways, and the ZooKeeper servers of its connect string.
 *
 * @param ready       whether this gateway takes requests (connected, registered, not draining)
 * @param leader      whether this gateway is the cell's leader (it adopts the sessions of vanished gateways)
 * @param zkConnected whether this gateway's ZooKeeper client is connected now
 */
public record Health(String gatewayId, boolean ready, boolean leader, List<String> gateways, boolean zkConnected,
                     String zkConnectString, List<ZkServer> servers) {
    public Health {
        gateways = List.copyOf(gateways);
        servers = List.copyOf(servers);
    }

    /**
     * What one ZooKeeper server says of itself (its {@code srvr} four-letter word).
     *
     * @param mode        leader, follower, observer, standalone; or null when it did not answer
     * @param zxid        its last zxid, or null
     * @param connections its client connections, or null
     * @param error       why it did not answer, or null
     */
    public record ZkServer(String address, String mode, Long zxid, Integer connections, String error) {
        public boolean reachable() {
            return error == null;
        }
    }
}
