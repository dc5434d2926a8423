package io.warden.service.session;

import io.warden.service.zk.LockDelayRecord;
import io.warden.service.zk.SessionRecord;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * One run of a gateway: its id (configured, or generated) and an incarnation drawn at start. Records name their owner
 * by both, so that a gateway restarted under a fixed {@code --gateway-id} while its earlier run is only partitioned is
 * not taken for that earlier run: the old run, hearing from ZooKeeper again, sees another incarnation and lets go.
 *
 * <p>Immutable.
 */
public record Owner(String gatewayId, String incarnation) {
    public static Owner newIncarnation(String gatewayId) {
        byte[] b = new byte[6];
        new SecureRandom().nextBytes(b);
        return new Owner(gatewayId, HexFormat.of().formatHex(b));
    }

    /** Whether the record names exactly this run. */
    boolean owns(SessionRecord r) {
        return r != null && gatewayId.equals(r.gateway()) && incarnation.equals(r.incarnation());
    }

    boolean owns(LockDelayRecord r) {
        return r != null && gatewayId.equals(r.gateway()) && incarnation.equals(r.incarnation());
    }

    @Override
    public String toString() {
        return gatewayId + "#" + incarnation;
    }
}
