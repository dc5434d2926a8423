package io.warden.service.http;

import io.warden.service.api.AcquireRequest;
import io.warden.service.api.LockName;
import io.warden.service.api.Mode;
import io.warden.service.api.MultiAcquireRequest;
import io.warden.service.api.OnDeadlock;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.WardenException;
import io.warden.service.config.WardenConfig;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * Turns raw request parts (body bytes, query parameters) into validated values, per call of docs/api.md.
 * Pure: nothing here reaches the engine, so a rejected request changes no state. Every rejection is an
 * {@link WardenException.InvalidArgumentException} naming the offending field.
 */
final class Requests {
    private final Json json;
    private final WardenConfig config;

    Requests(Json json, WardenConfig config) {
        this.json = json;
        this.config = config;
    }

    record OpenSession(String clientId, long ttlMs, long lockDelayMs) {
    }

    record Keepalive(Long ttlMs) {
    }

    /**
     * Exactly one of {@code token} (release a hold) and {@code requestId} (cancel a request) is set. {@code name} is null
     * for a release of a whole request by its {@code requestId} (every name of a multi-lock request).
     */
    record Release(String sessionId, LockName name, Long token, String requestId) {
    }

    /** {@code PUT /v1/namespaces/{namespace}/cell}: the target cell and how long the old cell's holds may take to end. */
    /** {@code PUT /v1/cells/{cell}}: the new cell's ensemble, and its chroot (null: the gateways'). */
    record AddCell(String zk, String chroot) {
    }

    record Move(String cell, long deadlineMs) {
    }

    record Revoke(LockName name, long token, long graceMs, String reason) {
    }

    record ListLocks(String namespace, String prefix, int limit, String after) {
    }

    record Check(LockName name, long token) {
    }

    record LeaseAcquire(String resource, LockName name, String clientId, long ttlMs, long waitMs) {
    }

    record LeaseRelease(String resource, LockName name, String leaseId) {
    }

    record LeaseRenew(String leaseId, long ttlMs) {
    }

    // --- /v1 -------------------------------------------------------------------------------------------

    OpenSession openSession(byte[] body) {
        JsonBody b = JsonBody.parse(json, body, Set.of("client_id", "ttl_ms", "lock_delay_ms"));
        String clientId = Fields.clientId("client_id", b.requiredString("client_id"));
        Long ttl = b.optionalLong("ttl_ms", 1, Long.MAX_VALUE);
        Long lockDelay = b.optionalLong("lock_delay_ms", 0, Fields.MAX_LOCK_DELAY_MS);
        return new OpenSession(clientId,
                ttl != null ? ttl : config.sessionTtlDefault().toMillis(),
                lockDelay != null ? lockDelay : 0);
    }

    /** The keepalive body is optional; {@code {"ttl_ms": n}} also changes the session's TTL. */
    Keepalive keepalive(byte[] body) {
        JsonBody b = JsonBody.parseOptional(json, body, Set.of("ttl_ms"));
        return new Keepalive(b.optionalLong("ttl_ms", 1, Long.MAX_VALUE));
    }

    /**
     * Whether the acquire body names several locks ({@code names}): a multi-lock acquire ({@link #multiAcquire}). A body
     * that is not a JSON object is not, and {@link #acquire} says what is wrong with it.
     */
    boolean isMultiAcquire(byte[] body) {
        try {
            com.fasterxml.jackson.databind.JsonNode tree = json.readTree(body);
            return tree != null && tree.isObject() && tree.hasNonNull("names");
        } catch (Exception e) {
            return false;
        }
    }

    /**
     * A multi-lock acquire: {@code names} (2 to 64 distinct lock names) instead of {@code name}, EXCLUSIVE or SHARED, with
     * no {@code permits} (a semaphore takes one name).
     */
    MultiAcquireRequest multiAcquire(byte[] body) {
        JsonBody b = JsonBody.parse(json, body,
                Set.of("session_id", "name", "names", "mode", "permits", "wait_ms", "request_id", "on_timeout",
                        "on_deadlock"));
        String sessionId = Fields.sessionId("session_id", b.requiredString("session_id"));
        if (b.has("name")) {
            throw WardenException.invalid("names", "give either name (one lock) or names (several locks), not both");
        }
        List<String> texts = b.optionalStrings("names", MultiAcquireRequest.MAX_NAMES);
        List<LockName> names = new java.util.ArrayList<>(texts.size());
        for (String text : texts) {
            names.add(Fields.lockName("names", text));
        }
        if (b.has("permits")) {
            throw WardenException.invalid("permits", "a multi-lock request takes no permits: a SEMAPHORE takes one name");
        }
        String modeText = b.optionalString("mode");
        Mode mode = modeText == null ? Mode.EXCLUSIVE : Fields.mode("mode", modeText);
        Long waitMs = b.optionalLong("wait_ms", 0, AcquireRequest.MAX_WAIT_MS);
        String requestIdText = b.optionalString("request_id");
        String requestId = requestIdText == null ? newRequestId() : Fields.requestId("request_id", requestIdText);
        String onTimeoutText = b.optionalString("on_timeout");
        OnTimeout onTimeout = onTimeoutText == null ? OnTimeout.CANCEL : Fields.onTimeout("on_timeout", onTimeoutText);
        String onDeadlockText = b.optionalString("on_deadlock");
        OnDeadlock onDeadlock = onDeadlockText == null ? OnDeadlock.WAIT : Fields.onDeadlock("on_deadlock", onDeadlockText);
        return new MultiAcquireRequest(sessionId, names, mode, waitMs == null ? 0 : waitMs, requestId, onTimeout,
                requestIdText != null, onDeadlock);
    }

    AcquireRequest acquire(byte[] body) {
        JsonBody b = JsonBody.parse(json, body,
                Set.of("session_id", "name", "mode", "permits", "wait_ms", "request_id", "on_timeout",
                        "on_deadlock"));
        String sessionId = Fields.sessionId("session_id", b.requiredString("session_id"));
        LockName name = Fields.lockName("name", b.requiredString("name"));
        String modeText = b.optionalString("mode");
        Mode mode = modeText == null ? Mode.EXCLUSIVE : Fields.mode("mode", modeText);
        // Whether permits go with the mode is AcquireRequest's check (a 400 naming "permits").
        Long permits = b.optionalLong("permits", AcquireRequest.MIN_PERMITS, AcquireRequest.MAX_PERMITS);
        Long waitMs = b.optionalLong("wait_ms", 0, AcquireRequest.MAX_WAIT_MS);
        String requestIdText = b.optionalString("request_id");
        String requestId = requestIdText == null ? newRequestId() : Fields.requestId("request_id", requestIdText);
        String onTimeoutText = b.optionalString("on_timeout");
        OnTimeout onTimeout = onTimeoutText == null ? OnTimeout.CANCEL : Fields.onTimeout("on_timeout", onTimeoutText);
        String onDeadlockText = b.optionalString("on_deadlock");
        OnDeadlock onDeadlock = onDeadlockText == null ? OnDeadlock.WAIT : Fields.onDeadlock("on_deadlock", onDeadlockText);
        return new AcquireRequest(sessionId, name, mode, waitMs == null ? 0 : waitMs, requestId, onTimeout,
                requestIdText != null, permits == null ? 0 : permits.intValue(), onDeadlock);
    }

    Release release(byte[] body) {
        JsonBody b = JsonBody.parse(json, body, Set.of("session_id", "name", "token", "request_id"));
        String sessionId = Fields.sessionId("session_id", b.requiredString("session_id"));
        Long token = b.optionalLong("token", 1, Long.MAX_VALUE);
        String requestIdText = b.optionalString("request_id");
        String requestId = requestIdText == null ? null : Fields.requestId("request_id", requestIdText);
        String nameText = b.optionalString("name");
        if (nameText == null && token == null && requestId != null) {
            return new Release(sessionId, null, null, requestId); // the whole request, every name of it
        }
        LockName name = Fields.lockName("name", nameText == null ? b.requiredString("name") : nameText);
        if ((token == null) == (requestId == null)) {
            throw WardenException.invalid(token == null ? "token" : "request_id",
                    "give exactly one of token (release a hold) or request_id (cancel a queued request)");
        }
        return new Release(sessionId, name, token, requestId);
    }

    /** Every field is required: a revoke says what it asks of whom, how soon, and why (for the holder and the audit log). */
    /** The longest a move may wait for the old cell's holds before ending them. */
    static final long MAX_MOVE_DEADLINE_MS = 300_000;
    /** What a move waits for the old cell's holds when the body does not say. */
    static final long DEFAULT_MOVE_DEADLINE_MS = 30_000;
    private static final java.util.regex.Pattern CELL_NAME = io.warden.service.config.CellAddress.NAME;

    /** {@code POST /v1/cells/{cell}/token-floor}: the token every later token of the cell must be above. */
    long raiseFloor(byte[] body) {
        JsonBody b = JsonBody.parse(json, body, Set.of("above"));
        return b.requiredLong("above", 1, Long.MAX_VALUE);
    }

    /** The cell's name, from the path: the same rule as the cells setting's names. */
    static String cellName(String field, String name) {
        String problem = io.warden.service.config.CellAddress.nameProblem(name);
        if (problem != null) {
            throw WardenException.invalid(field, problem);
        }
        return name;
    }

    AddCell addCell(byte[] body) {
        JsonBody b = JsonBody.parse(json, body, Set.of("zk", "chroot"));
        String zk = b.requiredString("zk");
        String problem = io.warden.service.config.CellAddress.zkProblem(zk);
        if (problem != null) {
            throw WardenException.invalid("zk", problem);
        }
        String chroot = b.optionalString("chroot");
        problem = chroot == null ? null : io.warden.service.config.CellAddress.chrootProblem(chroot);
        if (problem != null) {
            throw WardenException.invalid("chroot", problem);
        }
        return new AddCell(zk, chroot);
    }

    Move move(byte[] body) {
        JsonBody b = JsonBody.parse(json, body, Set.of("cell", "deadline_ms"));
        String cell = b.requiredString("cell");
        if (!CELL_NAME.matcher(cell).matches()) {
            throw io.warden.service.api.WardenException.invalid("cell", "must be default or a cell name matching "
                    + CELL_NAME.pattern());
        }
        Long deadline = b.optionalLong("deadline_ms", 0, MAX_MOVE_DEADLINE_MS);
        return new Move(cell, deadline == null ? DEFAULT_MOVE_DEADLINE_MS : deadline);
    }

    Revoke revoke(byte[] body) {
        JsonBody b = JsonBody.parse(json, body, Set.of("name", "token", "grace_ms", "reason"));
        LockName name = Fields.lockName("name", b.requiredString("name"));
        long token = b.requiredLong("token", 1, Long.MAX_VALUE);
        long graceMs = b.requiredLong("grace_ms", 0, io.warden.service.api.RevokeResult.MAX_GRACE_MS);
        String reason = Fields.reason("reason", b.requiredString("reason"));
        return new Revoke(name, token, graceMs, reason);
    }

    ListLocks listLocks(Map<String, List<String>> query) {
        QueryParams q = QueryParams.of(query, Set.of("namespace", "prefix", "limit", "after"));
        String namespace = q.optional("namespace");
        if (namespace != null) {
            LockName.validateNamespace("namespace", namespace);
        }
        String prefix = q.optional("prefix");
        if (prefix != null) {
            checkNameFragment("prefix", prefix);
        }
        String after = q.optional("after");
        if (after != null) {
            checkNameFragment("after", after);
        }
        String limitText = q.optional("limit");
        int limit = limitText == null ? Fields.DEFAULT_PAGE : (int) Fields.parseLong("limit", limitText, 1, Fields.MAX_PAGE);
        return new ListLocks(namespace, prefix, limit, after);
    }

    Check check(Map<String, List<String>> query) {
        QueryParams q = QueryParams.of(query, Set.of("name", "token"));
        LockName name = Fields.lockName("name", q.required("name"));
        long token = Fields.parseLong("token", q.required("token"), 1, Long.MAX_VALUE);
        return new Check(name, token);
    }

    void noQuery(Map<String, List<String>> query) {
        QueryParams.of(query, Set.of());
    }

    // --- lease API ---------------------------------------------------------------------------------------

    LeaseAcquire leaseAcquire(byte[] body) {
        JsonBody b = JsonBody.parse(json, body, Set.of("resource", "client_id", "ttl", "wait_ms"));
        String resource = b.requiredString("resource");
        LockName name = leaseName(resource);
        String clientId = Fields.clientId("client_id", b.requiredString("client_id"));
        long ttl = b.requiredLong("ttl", 1, Long.MAX_VALUE);
        Long waitMs = b.optionalLong("wait_ms", 0, AcquireRequest.MAX_WAIT_MS);
        return new LeaseAcquire(resource, name, clientId, ttl, waitMs == null ? 0 : waitMs);
    }

    LeaseRelease leaseRelease(byte[] body) {
        JsonBody b = JsonBody.parse(json, body, Set.of("resource", "lease_id"));
        String resource = b.requiredString("resource");
        LockName name = leaseName(resource);
        String leaseId = Fields.sessionId("lease_id", b.requiredString("lease_id"));
        return new LeaseRelease(resource, name, leaseId);
    }

    LeaseRenew leaseRenew(byte[] body) {
        JsonBody b = JsonBody.parse(json, body, Set.of("lease_id", "ttl"));
        String leaseId = Fields.sessionId("lease_id", b.requiredString("lease_id"));
        long ttl = b.requiredLong("ttl", 1, Long.MAX_VALUE);
        return new LeaseRenew(leaseId, ttl);
    }

    /** A lease {@code resource} is a lock path (1-8 segments) inside the configured lease namespace. */
    private LockName leaseName(String resource) {
        if (resource.isEmpty()) {
            throw WardenException.invalid("resource", "must not be empty");
        }
        return LockName.parse("resource", config.leaseNamespace() + "/" + resource);
    }

    /** {@code prefix} and {@code after} are (parts of) lock names: same characters, same length limit. */
    private static void checkNameFragment(String field, String value) {
        if (value.length() > LockName.MAX_LENGTH) {
            throw WardenException.invalid(field, "is at most " + LockName.MAX_LENGTH + " characters, got " + value.length());
        }
        if (!value.matches("[A-Za-z0-9._:/-]*")) {
            throw WardenException.invalid(field, "may only contain characters of lock names [A-Za-z0-9._:/-], got '"
                    + Fields.abbreviate(value) + "'");
        }
    }

    private static String newRequestId() {
        return "auto-" + UUID.randomUUID();
    }
}
