package io.warden.service.watch;

import io.warden.service.queue.QueueEntry;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What one ZooKeeper transaction (one zxid) did that the watch mirror cares about, gathered from all of its
 * notifications before any of it is applied: the mirror changes, and events are published, one whole transaction at a
 * time, so no watch sees half a transaction.
 *
 * <p>Everything here comes from the notifications' paths, types and zxid; nothing is read, so every gateway derives the
 * same events from the same transactions:
 * <ul>
 *   <li>a created request record {@code /sessions/{sh}/{sid}/{uuid}} names the session of the queue node
 *   {@code _c_{uuid}-…} the same acquire creates;</li>
 *   <li>a client-id note {@code /sessions/{sh}/{sid}/{uuid}/~client-{base64url}}, created and deleted by the same acquire
 *   (it never outlives the transaction), names that session's client id;</li>
 *   <li>a {@code ~deadlock-fail} note under a request record, made and removed by the same acquire, says that request
 *   may be a deadlock's victim;</li>
 *   <li>a created expiry marker {@code /expired/{sid}} says the transaction's deletions of that session's nodes are its
 *   expiry;</li>
 *   <li>created and deleted lock-delay records, and queue nodes created, deleted and changed (a changed queue node is a
 *   revoke: its data is set only to ask its holder to let go), per lock in the order the transaction first touched
 *   each lock.</li>
 * </ul>
 *
 * <p>Concurrency: built and read on the watch hub's thread only. Bounded by one transaction's operations (ZooKeeper's
 * packet limit).
 */
final class Transaction {
    /** One lock's changes in the transaction. */
    record LockChange(List<QueueEntry> created, List<QueueEntry> deleted, List<QueueEntry> changed) {
    }

    final long zxid;
    /** Request records created: request uuid to session id. */
    final Map<String, String> sessionsByRequest = new HashMap<>();
    /** Client-id notes: request uuid to client id. */
    final Map<String, String> clientsByRequest = new HashMap<>();
    /** Requests (uuids) whose acquire said on_deadlock FAIL: their {@code ~deadlock-fail} note was created. */
    final Set<String> failOnDeadlock = new HashSet<>(0);
    /** Per lock name, in first-touched order. */
    final Map<String, LockChange> locks = new LinkedHashMap<>();
    /** Sessions whose expiry marker this transaction created. */
    final Set<String> expiring = new HashSet<>();
    final List<String> lockDelaysCreated = new ArrayList<>(0);
    final List<String> lockDelaysDeleted = new ArrayList<>(0);
    /** Locks whose node (not a queue node: the lock's own) this transaction deleted. */
    final List<String> lockNodesDeleted = new ArrayList<>(0);
    /** Notifications gathered. */
    int notes;

    Transaction(long zxid) {
        this.zxid = zxid;
    }

    void queueNodeCreated(String lock, QueueEntry entry) {
        change(lock).created().add(entry);
    }

    void queueNodeDeleted(String lock, QueueEntry entry) {
        change(lock).deleted().add(entry);
    }

    /** A queue node's data was set: its holder is asked to let go (see MirroredLock#apply). */
    void queueNodeChanged(String lock, QueueEntry entry) {
        change(lock).changed().add(entry);
    }

    private LockChange change(String lock) {
        return locks.computeIfAbsent(lock, k -> new LockChange(new ArrayList<>(2), new ArrayList<>(2), new ArrayList<>(0)));
    }

    @Override
    public String toString() {
        return "transaction " + zxid + " (" + notes + " notifications, " + locks.size() + " locks)";
    }
}
