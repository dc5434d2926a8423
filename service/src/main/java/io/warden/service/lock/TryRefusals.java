package io.warden.service.lock;

import io.warden.service.api.AcquireResult;
import io.warden.service.api.AcquireResult.Status;
import io.warden.service.api.LockTooLargeException;
import io.warden.service.api.Mode;
import io.warden.service.queue.LockQueue;
import io.warden.service.queue.QueueListing;
import io.warden.service.time.Clock;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Zk;
import org.apache.zookeeper.KeeperException.Code;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentMap;

/**
 * Try-locks that cannot be granted, refused from a linearizable read instead of being made and taken back (docs/api.md,
 * {@code wait_ms} 0; docs/design.md, "Refused tries").
 *
 * <p>A refusal reads the lock after a {@code sync} sent after the call began ({@link Zk#sharedSync}: one sync serves
 * every call that came before it was sent), so the queue it reads was the lock's at a moment within the call; when a
 * request made then would not have held at once (a conflicting holder, or anyone queued ahead: {@link GrantRules#refusesTry}),
 * the try is answered TIMED_OUT with the holders it saw, and nothing is written. Otherwise the try takes the usual path,
 * which makes the request and decides from the queue after it: the read only ever refuses, it never grants.
 *
 * <p>Which tries read first: those on a lock this gateway saw busy within {@link #BUSY_FOR} (a try on it refused, by
 * either path). A try on any other lock takes the usual path at once, so an uncontended try-lock costs what it did
 * (its request's {@code multi}, one read) and pays no {@code sync} ahead of it; the first try refused on a lock after a
 * quiet spell is made and taken back, and the tries after it write nothing.
 *
 * <p>Concurrency: {@link #busy} is a concurrent map of at most {@link #MAX_BUSY} locks (least recently used evicted: a
 * miss sends one try the usual way), whose entries expire {@link #BUSY_FOR} after they were last written, on the
 * engine's {@link Clock}. Continuations run on Curator's event thread.
 */
final class TryRefusals {
    /** How long after a try on a lock was refused the next tries on it read before they write. */
    static final Duration BUSY_FOR = Duration.ofSeconds(2);
    static final int MAX_BUSY = 10_000;

    private final Zk zk;
    private final QueueListing queues;
    private final LockReader reader;
    private final GrantRules rules;
    /** Lock paths on which a try was refused lately. */
    private final ConcurrentMap<String, Boolean> busy;

    TryRefusals(Zk zk, Clock clock, QueueListing queues, LockReader reader, GrantRules rules) {
        this.zk = zk;
        this.queues = queues;
        this.reader = reader;
        this.rules = rules;
        this.busy = com.github.benmanes.caffeine.cache.Caffeine.newBuilder().maximumSize(MAX_BUSY)
                .expireAfterWrite(BUSY_FOR).ticker(clock::read).<String, Boolean>build().asMap();
    }

    /** Whether a try on the lock should read before it writes: a try on it was refused lately. */
    boolean readFirst(String lockPath) {
        return busy.containsKey(lockPath);
    }

    /** A try on the lock was refused (answered TIMED_OUT, from the read or by the usual path); the engine tells it. */
    void refused(String lockPath) {
        busy.put(lockPath, Boolean.TRUE);
    }

    /**
     * The TIMED_OUT answer of a try of {@code mode} ({@code permits}: a semaphore's, else 0) on the lock, when it cannot
     * be granted as of a moment within the call; empty when it may be (the usual path then decides). Fails with
     * UNAVAILABLE when the sync or the read fails, and with CONFLICT when the lock's first entry is of another kind.
     */
    CompletableFuture<Optional<AcquireResult>> refusal(String lockPath, Mode mode, int permits) {
        try {
            zk.failFast();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return zk.sharedSync().thenCompose(v -> refusalSynced(lockPath, mode, permits));
    }

    /**
     * As {@link #refusal}, for a caller that has itself waited for a {@link Zk#sharedSync} asked after its call began
     * (and after {@link Zk#failFast}): the read is sent now. A multi-lock try reads all its busy locks after one sync:
     * were each lock's refusal to ask on its own, the second would ask while the first's sync is in flight and wait for
     * another.
     */
    CompletableFuture<Optional<AcquireResult>> refusalSynced(String lockPath, Mode mode, int permits) {
        return queues.read(lockPath, "whether it is held cannot be read")
                .handle((cs, err) -> {
                    if (err != null) {
                        if (Zk.code(err) == Code.NONODE || Zk.unwrap(err) instanceof LockTooLargeException) {
                            // Free, or too large to list: the usual path decides (and answers a lock too large).
                            return CompletableFuture.completedFuture(Optional.<AcquireResult>empty());
                        }
                        throw Zk.translate(err);
                    }
                    LockQueue q = LockQueue.of(cs.children());
                    if (!q.isEmpty() && q.entries().get(0).permits() != permits) {
                        // Of another kind (a lock, or a semaphore of other permits): refused as the usual path would.
                        throw HeldCalls.kindConflict(CellPaths.lockName(lockPath), q.entries().get(0), mode, permits);
                    }
                    if (!rules.refusesTry(q, mode, permits)) {
                        return CompletableFuture.completedFuture(Optional.<AcquireResult>empty());
                    }
                    long revision = cs.stat() == null ? 0 : cs.stat().getPzxid();
                    return reader.holders(lockPath, q).thenApply(holders ->
                            Optional.of(new AcquireResult(Status.TIMED_OUT, null, null, holders, revision)));
                }).thenCompose(f -> f);
    }
}
