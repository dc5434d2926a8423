package io.warden.service.http;

import io.warden.service.auth.Caller;
import java.util.function.UnaryOperator;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.CheckResult;
import io.warden.service.api.CloseResult;
import io.warden.service.api.Holder;
import io.warden.service.api.LockPage;
import io.warden.service.api.LockSummary;
import io.warden.service.api.LockView;
import io.warden.service.api.Mode;
import io.warden.service.api.NamespaceStats;
import io.warden.service.api.SessionGrant;
import io.warden.service.api.SessionView;
import io.warden.service.api.Waiter;
import io.warden.service.watch.Resync;
import io.warden.service.watch.WatchEvent;
import java.util.List;
import java.util.Map;

/**
 * The JSON replies of docs/api.md, as records written by {@link Json} in snake_case. Null members are left
 * out (optional {@code token}, {@code position}; {@code revision} when the engine reports none); a member
 * the contract says is {@code null} when empty carries {@code @JsonInclude(ALWAYS)}.
 */
final class Replies {
    private Replies() {
    }

    /** {@code revision} appears when the answer reflects a ZooKeeper zxid (always positive). */
    static Long rev(long zxid) {
        return zxid > 0 ? zxid : null;
    }

    record SessionCreated(String sessionId, long ttlMs, long keepaliveIntervalMs, Long revision) {
        static SessionCreated of(SessionGrant g) {
            return new SessionCreated(g.sessionId(), g.ttlMs(), g.keepaliveIntervalMs(), rev(g.revision()));
        }
    }

    record SessionHold(String name, Mode mode, long token) {
    }

    record SessionWait(String name, Mode mode, String requestId) {
    }

    record Session(String sessionId, String clientId, long ttlMs, long ttlMsRemaining, long lockDelayMs,
                   List<SessionHold> holds, List<SessionWait> waiting, Long revision) {
        static Session of(SessionView v) {
            return new Session(v.sessionId(), v.clientId(), v.ttlMs(), v.ttlMsRemaining(), v.lockDelayMs(),
                    v.holds().stream().map(h -> new SessionHold(h.name(), h.mode(), h.token())).toList(),
                    v.waiting().stream().map(w -> new SessionWait(w.name(), w.mode(), w.requestId())).toList(),
                    rev(v.revision()));
        }
    }

    record Keepalive(long ttlMsRemaining) {
    }

    record Closed(List<String> released, List<String> cancelled, Long revision) {
        static Closed of(CloseResult c) {
            return new Closed(c.released(), c.cancelled(), rev(c.revision()));
        }
    }

    /**
     * A holder; {@code session_id}/{@code client_id} are absent for a plain Curator holder, {@code expired} unless true;
     * {@code principal} (with an auth file) owns the session, and {@code session_id} is absent for a caller that is
     * neither that principal nor an admin of the lock's namespace (docs/api.md, authorization).
     */
    record HolderReply(String sessionId, String clientId, String principal, Mode mode, long token, Boolean expired) {
        static HolderReply of(Holder h) {
            return new HolderReply(h.sessionId(), h.clientId(), h.principal(), h.mode(), h.token(),
                    h.expired() ? Boolean.TRUE : null);
        }

        static List<HolderReply> all(List<Holder> holders) {
            return holders.stream().map(HolderReply::of).toList();
        }

        static List<HolderReply> all(List<Holder> holders, UnaryOperator<Holder> shown) {
            return holders.stream().map(shown).map(HolderReply::of).toList();
        }
    }

    /** A waiter; as a holder, without {@code session_id} (nor {@code request_id}) for a caller who may not see it. */
    record WaiterReply(String sessionId, String clientId, String principal, Mode mode, String requestId, int position) {
        static WaiterReply of(Waiter w) {
            return new WaiterReply(w.sessionId(), w.clientId(), w.principal(), w.mode(), w.requestId(), w.position());
        }

        static WaiterReply of(Waiter w, Caller caller, String namespace) {
            return of(Access.seesSessionOf(caller, w.principal(), namespace) ? w : w.withoutSessionId());
        }
    }

    /**
     * The acquire answer. {@code request_id} is not in the contract's table; it is echoed so a client that let
     * the gateway pick one can still cancel or re-poll a QUEUED request.
     */
    record Acquired(AcquireResult.Status status, Long token, Integer position, String requestId,
                    List<HolderReply> holders, Long revision, String cell) {
        static Acquired of(AcquireResult r, String requestId) {
            return of(r, requestId, UnaryOperator.identity());
        }

        static Acquired of(AcquireResult r, String requestId, UnaryOperator<Holder> shown) {
            return new Acquired(r.status(), r.token(), r.position(), requestId, HolderReply.all(r.holders(), shown),
                    rev(r.revision()), r.cell());
        }
    }

    /**
     * The answer to a multi-lock acquire: {@code tokens} (name to token) when GRANTED, {@code holders} per name, and
     * {@code position} on the first name the request does not hold yet when QUEUED.
     */
    record MultiAcquired(AcquireResult.Status status, Map<String, Long> tokens, Integer position, String requestId,
                         Map<String, List<HolderReply>> holders, Long revision, String cell) {
        static MultiAcquired of(io.warden.service.api.MultiAcquireResult r, String requestId,
                                java.util.function.BiFunction<Holder, String, Holder> shown) {
            Map<String, List<HolderReply>> holders = new java.util.LinkedHashMap<>();
            r.holders().forEach((name, hs) -> {
                String ns = name.substring(0, name.indexOf('/'));
                holders.put(name, HolderReply.all(hs, h -> shown.apply(h, ns)));
            });
            return new MultiAcquired(r.status(), r.tokens(), r.position(), requestId, holders, rev(r.revision()), r.cell());
        }
    }

    record Released(boolean released) {
    }

    /** {@code session_id} is null for a plain Curator client's hold. */
    record Revoked(String name, long token, @JsonInclude(JsonInclude.Include.ALWAYS) String sessionId, long graceMs,
                   String reason, boolean repeated, Long revision) {
        static Revoked of(io.warden.service.api.RevokeResult r) {
            return new Revoked(r.name(), r.token(), r.sessionId(), r.graceMs(), r.reason(), r.repeated(), rev(r.revision()));
        }
    }

    /** {@code permits}: a semaphore's, left out for a lock. */
    record Lock(String name, LockView.LockMode mode, Integer permits, List<HolderReply> holders, List<WaiterReply> waiters,
                Long revision) {
        static Lock of(LockView v) {
            return of(v, Caller.OPEN, null);
        }

        static Lock of(LockView v, Caller caller, String namespace) {
            return new Lock(v.name(), v.mode(), v.permits() > 0 ? v.permits() : null,
                    HolderReply.all(v.holders(), h -> Access.shown(caller, h, namespace)),
                    v.waiters().stream().map(w -> WaiterReply.of(w, caller, namespace)).toList(), rev(v.revision()));
        }
    }

    /**
     * One lock of a listing. A lock too large for the gateway to read has {@code too_large: true} and {@code entries}, no
     * {@code mode}, and 0 holders and waiters (not known).
     */
    record LockEntry(String name, LockView.LockMode mode, int holders, int waiters, Boolean tooLarge, Integer entries) {
        static LockEntry of(LockSummary s) {
            boolean big = s.tooLargeEntries() > 0;
            return new LockEntry(s.name(), s.mode(), s.holders(), s.waiters(), big ? Boolean.TRUE : null,
                    big ? s.tooLargeEntries() : null);
        }
    }

    /** A page of live locks; {@code next_after} is absent on the last page. */
    record Locks(List<LockEntry> locks, String nextAfter, Long revision) {
        static Locks of(LockPage p) {
            return new Locks(p.locks().stream().map(LockEntry::of).toList(), p.nextAfter(), rev(p.revision()));
        }
    }

    record Check(boolean current, @JsonInclude(JsonInclude.Include.ALWAYS) Long latestToken, Long revision) {
        static Check of(CheckResult c) {
            return new Check(c.current(), c.latestToken(), rev(c.revision()));
        }
    }

    /** {@code too_large_locks}: of {@code locks}, those too large to read, whose holds and waits are not counted. */
    record Namespace(String namespace, int locks, int holders, int waiters, int sessions, int tooLargeLocks) {
        static Namespace of(NamespaceStats s) {
            return new Namespace(s.namespace(), s.locks(), s.holders(), s.waiters(), s.sessions(), s.tooLargeLocks());
        }
    }

    record Namespaces(List<Namespace> namespaces) {
        static Namespaces of(List<NamespaceStats> stats) {
            return new Namespaces(stats.stream().map(Namespace::of).toList());
        }
    }

    // --- watches ------------------------------------------------------------------------------------------

    /**
     * One event of {@code GET /v1/watch}; {@code session_id} is absent for a queue node that is not Warden's, and on a
     * redacted stream (with an auth file, a watcher that is not an admin of the watched namespace: docs/api.md,
     * authorization).
     */
    record WatchEventReply(long revision, WatchEvent.Type type, String name, String sessionId, String clientId, Mode mode,
                           long token) {
        static WatchEventReply of(WatchEvent e) {
            return new WatchEventReply(e.revision(), e.type(), e.name(), e.sessionId(), e.clientId(), e.mode(), e.token());
        }

        static WatchEventReply redacted(WatchEvent e) {
            return new WatchEventReply(e.revision(), e.type(), e.name(), null, e.clientId(), e.mode(), e.token());
        }
    }

    /**
     * A lock's state inside a RESYNC event: the shape of {@code GET /v1/locks/{name}} without its own revision. A lock too
     * large for the gateway to follow has {@code too_large: true} and {@code entries}, no {@code mode}, and empty lists
     * (its holders and waiters are not known; it is not free).
     */
    record ResyncLock(String name, LockView.LockMode mode, List<HolderReply> holders, List<WaiterReply> waiters,
                      Boolean tooLarge, Integer entries) {
        static ResyncLock of(LockView v, boolean redacted) {
            return new ResyncLock(v.name(), v.mode(),
                    HolderReply.all(v.holders(), h -> redacted ? h.withoutSessionId() : h),
                    v.waiters().stream().map(w -> WaiterReply.of(redacted ? w.withoutSessionId() : w)).toList(),
                    v.tooLarge() ? Boolean.TRUE : null, v.tooLarge() ? v.tooLargeEntries() : null);
        }
    }

    /** The RESYNC event: the current state of the watched locks, exact as of {@code revision}. */
    record ResyncReply(long revision, String type, List<ResyncLock> locks) {
        static final String TYPE = "RESYNC";

        static ResyncReply of(Resync r) {
            return of(r, false);
        }

        static ResyncReply of(Resync r, boolean redacted) {
            return new ResyncReply(r.revision(), TYPE, r.locks().stream().map(v -> ResyncLock.of(v, redacted)).toList());
        }
    }

    // --- lease API ---------------------------------------------------------------------------------------

    record LeaseGranted(String leaseId, long fencingToken, long ttl, Long revision) {
    }

    /** The {@code holder} member of a lease 409; {@code client_id} is null for a holder that is not a Warden session. */
    record LeaseHolder(@JsonInclude(JsonInclude.Include.ALWAYS) String clientId) {
    }

    record LeaseTtl(long ttl) {
    }

    /** {@code detail}: why a gateway is not ready, when there is more to say (its cell was rolled back); else absent. */
    record Health(String status, String detail) {
        Health(String status) {
            this(status, null);
        }
    }
}
