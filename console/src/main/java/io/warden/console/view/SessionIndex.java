package io.warden.console.view;

import io.warden.console.model.CellSnapshot;
import io.warden.console.model.LockState;
import io.warden.console.model.QueuedRequest;
import io.warden.console.model.SessionState;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Every session of a snapshot joined with its holds and waits, for the sessions pages.
 *
 * <p>Concurrency: immutable after {@link #of}; safe to share.
 */
public final class SessionIndex {
    private static final Comparator<SessionRow> ORDER =
            Comparator.comparing(SessionRow::clientId).thenComparing(SessionRow::sessionId);

    private final Map<String, SessionRow> rows;
    private final Map<String, List<String>> namespacesBySession;

    private SessionIndex(Map<String, SessionRow> rows, Map<String, List<String>> namespacesBySession) {
        this.rows = rows;
        this.namespacesBySession = namespacesBySession;
    }

    public static SessionIndex of(CellSnapshot cell) {
        Map<String, SessionState> states = new LinkedHashMap<>();
        for (SessionState s : cell.sessions()) {
            states.put(s.sessionId(), s);
        }
        Map<String, List<SessionRow.Hold>> holds = new HashMap<>();
        Map<String, List<SessionRow.Wait>> waits = new HashMap<>();
        Map<String, List<String>> namespaces = new HashMap<>();
        Map<String, SessionRow.MultiRequest> multis = multiRequests(cell);
        for (LockState lock : cell.locks()) {
            for (QueuedRequest r : lock.queue()) {
                if (r.sessionId() == null) {
                    continue; // a direct-mode (plain Curator) node belongs to no Warden session
                }
                SessionRow.MultiRequest multi = r.requestId() == null ? null : multis.get(key(r));
                if (r.holds()) {
                    holds.computeIfAbsent(r.sessionId(), k -> new ArrayList<>())
                            .add(new SessionRow.Hold(lock.name(), r.mode(), r.token(), r.requestId(), r.heldSince(), multi));
                } else {
                    waits.computeIfAbsent(r.sessionId(), k -> new ArrayList<>())
                            .add(new SessionRow.Wait(lock.name(), r.mode(), r.token(), r.position(), r.requestId(),
                                    r.requestedAt(), multi));
                }
                List<String> ns = namespaces.computeIfAbsent(r.sessionId(), k -> new ArrayList<>());
                if (!ns.contains(lock.namespace())) {
                    ns.add(lock.namespace());
                }
            }
        }
        Map<String, SessionRow> rows = new HashMap<>();
        states.forEach((id, s) -> rows.put(id, row(id, s, holds, waits)));
        for (String id : namespaces.keySet()) {
            rows.computeIfAbsent(id, k -> row(k, null, holds, waits));
        }
        return new SessionIndex(rows, namespaces);
    }

    /**
     * The multi-lock requests of the snapshot, by {@link #key}: a request id is unique within its session, so one that
     * has entries on several locks is one multi-lock request (a request of one name has one entry).
     */
    private static Map<String, SessionRow.MultiRequest> multiRequests(CellSnapshot cell) {
        Map<String, List<String>> names = new HashMap<>();
        Map<String, List<String>> waitingOn = new HashMap<>();
        for (LockState lock : cell.locks()) {
            for (QueuedRequest r : lock.queue()) {
                if (r.sessionId() == null || r.requestId() == null) {
                    continue;
                }
                names.computeIfAbsent(key(r), k -> new ArrayList<>()).add(lock.name());
                if (!r.holds()) {
                    waitingOn.computeIfAbsent(key(r), k -> new ArrayList<>()).add(lock.name());
                }
            }
        }
        Map<String, SessionRow.MultiRequest> multis = new HashMap<>();
        names.forEach((k, n) -> {
            if (n.size() > 1) {
                List<String> sorted = n.stream().sorted().toList();
                List<String> waiting = waitingOn.getOrDefault(k, List.of()).stream().sorted().toList();
                multis.put(k, new SessionRow.MultiRequest(sorted, waiting));
            }
        });
        return multis;
    }

    private static String key(QueuedRequest r) {
        return r.sessionId() + "/" + r.requestId();
    }

    private static SessionRow row(String id, SessionState s, Map<String, List<SessionRow.Hold>> holds,
                                  Map<String, List<SessionRow.Wait>> waits) {
        List<SessionRow.Hold> h = new ArrayList<>(holds.getOrDefault(id, List.of()));
        h.sort(Comparator.comparing(SessionRow.Hold::lock));
        List<SessionRow.Wait> w = new ArrayList<>(waits.getOrDefault(id, List.of()));
        w.sort(Comparator.comparing(SessionRow.Wait::since).thenComparing(SessionRow.Wait::lock));
        return new SessionRow(id, s, h, w);
    }

    public Optional<SessionRow> get(String sessionId) {
        return Optional.ofNullable(rows.get(sessionId));
    }

    public int size() {
        return rows.size();
    }

    /**
     * The sessions with a hold or wait in {@code namespace} (all sessions when blank) whose client id starts with
     * {@code client} (any when blank), ordered by client id then session id.
     */
    public List<SessionRow> filter(String namespace, String client) {
        String ns = namespace == null ? "" : namespace.trim();
        String c = client == null ? "" : client.trim();
        return rows.values().stream()
                .filter(r -> ns.isEmpty() || namespacesBySession.getOrDefault(r.sessionId(), List.of()).contains(ns))
                .filter(r -> c.isEmpty() || (r.state() != null && r.clientId().startsWith(c)))
                .sorted(ORDER)
                .toList();
    }

    /** Whether some session was opened with exactly this client id. */
    public boolean hasClient(String clientId) {
        return rows.values().stream().anyMatch(r -> r.state() != null && r.clientId().equals(clientId));
    }
}
