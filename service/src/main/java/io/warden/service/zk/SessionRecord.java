package io.warden.service.zk;

import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.ArrayList;
import java.util.List;

/**
 * The durable session record at {@code /sessions/{id}}. {@code gateway} and {@code incarnation} name the gateway run
 * that tracks its TTL ({@link io.warden.service.session.Owner}): a gateway restarted under the same id is another incarnation, so an old run that
 * was only partitioned sees, when it hears from ZooKeeper again, that the record is no longer its own.
 * {@code principal} is the auth-file principal that opened the session (docs/api.md, authorization: the session is
 * its), or null for a session opened in open mode (absent from records written by gateways that predate auth files),
 * which only admins may use once an auth file is in force. {@code address} is the client address that opened it (for
 * the per-owner session quota in open mode, and operators).
 *
 * <p>{@code cells}: the other cells (ZooKeeper ensembles of the same gateways) in which the session also has a record,
 * in the order it joined them. Only the record in the session's home cell (where it was opened) lists them; a record
 * made by joining another cell lists none. Never null: absent from the JSON when empty, and from records written by
 * gateways that predate cells, which read as empty.
 *
 * <p>Immutable ({@code cells} is an unmodifiable copy).
 */
public record SessionRecord(String clientId, long ttlMs, long lockDelayMs, String gateway, String incarnation,
                            @JsonInclude(JsonInclude.Include.NON_NULL) String principal,
                            @JsonInclude(JsonInclude.Include.NON_NULL) String address,
                            @JsonInclude(JsonInclude.Include.NON_EMPTY) List<String> cells) {
    /**
     * The quota owner of records that name neither a principal nor an address (written by gateways that predate auth
     * files).
     */
    public static final String UNKNOWN_OWNER = "(unknown)";

    public SessionRecord {
        cells = cells == null ? List.of() : List.copyOf(cells);
    }

    /**
     * Whose quotas a session of {@code principal} opened from {@code address} counts against: {@code "principal X"},
     * else (open mode) {@code "address A"}, else {@link #UNKNOWN_OWNER}. The same key for the session quota
     * ({@code SessionQuotas}) and the request quota ({@code lock.RequestQuotas}).
     */
    public static String quotaOwner(String principal, String address) {
        return principal != null ? "principal " + principal : address != null ? "address " + address : UNKNOWN_OWNER;
    }

    public SessionRecord(String clientId, long ttlMs, long lockDelayMs, String gateway, String incarnation) {
        this(clientId, ttlMs, lockDelayMs, gateway, incarnation, null, null, List.of());
    }

    /** A record that lists no other cells. */
    public SessionRecord(String clientId, long ttlMs, long lockDelayMs, String gateway, String incarnation,
                         String principal, String address) {
        this(clientId, ttlMs, lockDelayMs, gateway, incarnation, principal, address, List.of());
    }

    /** This record as the gateway run {@code gateway}/{@code incarnation} owns it. */
    public SessionRecord withOwner(String gateway, String incarnation) {
        return new SessionRecord(clientId, ttlMs, lockDelayMs, gateway, incarnation, principal, address, cells);
    }

    /** This record with a TTL of {@code ttl} milliseconds. */
    public SessionRecord withTtl(long ttl) {
        return new SessionRecord(clientId, ttl, lockDelayMs, gateway, incarnation, principal, address, cells);
    }

    /** This record listing {@code cell} among its other cells (after those it lists); itself when it lists it already. */
    public SessionRecord withCell(String cell) {
        if (cells.contains(cell)) {
            return this;
        }
        List<String> more = new ArrayList<>(cells.size() + 1);
        more.addAll(cells);
        more.add(cell);
        return new SessionRecord(clientId, ttlMs, lockDelayMs, gateway, incarnation, principal, address, more);
    }
}
