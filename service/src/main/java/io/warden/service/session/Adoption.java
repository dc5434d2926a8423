package io.warden.service.session;

import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.SessionRecord;
import io.warden.service.zk.Zk;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

/**
 * Adoption: this gateway starts tracking sessions (and finishing lock-delays) whose owner is gone — the elected
 * leader for vanished gateways, and every gateway at start for its own earlier incarnations. Each adopted session gets
 * TTL + B (see {@link Vouching}): the old owner may have acknowledged a keepalive up to B before it could no longer.
 *
 * <p>Idempotent: the compare-and-set on the record can be applied and its reply lost, and Curator's resend then fails
 * with BADVERSION. Any failure is followed by a read; a record that names this gateway run is tracked whoever wrote it,
 * so an adopted session is never left with no tracker.
 *
 * <p>Concurrency: stateless; passes may overlap (a second compare-and-set on the same record fails harmlessly and the
 * read that follows finds it ours).
 */
final class Adoption {
    private static final Logger log = LoggerFactory.getLogger(Adoption.class);

    private final Zk zk;
    private final Owner owner;
    private final Tracker tracker;
    private final LockDelays lockDelays;

    Adoption(Zk zk, Owner owner, Tracker tracker, LockDelays lockDelays) {
        this.zk = zk;
        this.owner = owner;
        this.tracker = tracker;
        this.lockDelays = lockDelays;
    }

    /** Adopts what names a gateway id that is not among {@code live} (the children of {@code /gateways}). */
    CompletableFuture<AdoptionTally> orphansOf(Set<String> live) {
        return adopt(gateway -> gateway == null || !live.contains(gateway));
    }

    /**
     * Takes back what an earlier incarnation of this gateway id owned: a gateway that restarts under the same id must
     * not leave its earlier run's sessions without a tracker (the leader sees that id alive and would not adopt them).
     */
    CompletableFuture<AdoptionTally> ownEarlierRuns() {
        return adopt(owner.gatewayId()::equals);
    }

    private CompletableFuture<AdoptionTally> adopt(Predicate<String> orphanedGateway) {
        CompletableFuture<AdoptionTally> sessions = zk.shardedChildren(CellPaths.SESSIONS).thenCompose(ids -> {
            List<String> untracked = new ArrayList<>(ids.size());
            for (String id : ids) {
                if (!tracker.tracks(id)) {
                    untracked.add(id);
                }
            }
            return inChunks(untracked, id -> adoptSession(id, orphanedGateway));
        });
        return sessions.thenCombine(lockDelays.adoptOrphans(r -> !owner.owns(r) && orphanedGateway.test(r.gateway())), AdoptionTally::plus);
    }

    /** Per record: {@link #ADOPTED}, {@link #LEFT} (not an orphan, or gone) or {@link #FAILED}. */
    static final int ADOPTED = 1;
    static final int LEFT = 0;
    static final int FAILED = -1;
    /** Records read (and written) at once in a pass: a pass over 100,000 records never queues 100,000 requests. */
    static final int CHUNK = 1000;

    /** Runs {@code task} over {@code ids}, {@link #CHUNK} at a time, and tallies the outcomes. */
    static CompletableFuture<AdoptionTally> inChunks(List<String> ids, java.util.function.Function<String, CompletableFuture<Integer>> task) {
        CompletableFuture<AdoptionTally> pass = CompletableFuture.completedFuture(AdoptionTally.NONE);
        for (int from = 0; from < ids.size(); from += CHUNK) {
            List<String> chunk = ids.subList(from, Math.min(ids.size(), from + CHUNK));
            pass = pass.thenCompose(sofar -> {
                List<CompletableFuture<Integer>> outcomes = new ArrayList<>(chunk.size());
                for (String id : chunk) {
                    outcomes.add(task.apply(id));
                }
                return CompletableFuture.allOf(outcomes.toArray(CompletableFuture[]::new)).thenApply(v -> {
                    int adopted = 0;
                    int failed = 0;
                    for (CompletableFuture<Integer> o : outcomes) {
                        int outcome = o.join();
                        adopted += outcome == ADOPTED ? 1 : 0;
                        failed += outcome == FAILED ? 1 : 0;
                    }
                    return sofar.plus(new AdoptionTally(adopted, failed));
                });
            });
        }
        return pass;
    }

    private CompletableFuture<Integer> adoptSession(String id, Predicate<String> orphanedGateway) {
        String path = CellPaths.session(id);
        return zk.data(path).thenCompose(ds -> {
            SessionRecord rec = Json.readOrNull(ds.data(), SessionRecord.class);
            if (rec == null) {
                return CompletableFuture.completedFuture(LEFT);
            }
            if (owner.owns(rec)) {
                // Ours already: an adoption whose reply was lost (then track it, so no session is left without a
                // tracker), or a session opened here since the pass listed the records, which its opening tracks. Only
                // the first: tracking it again here moved its deadline to TTL + B after the pass (late, never early,
                // but a TTL left above the TTL; ConsoleBridgeTest.snapshot_asksTheTrackingGatewayForTheTtlLeft saw it
                // when another gateway's start ran the pass just as the session opened).
                if (!tracker.tracks(id)) {
                    tracker.track(id, rec, ds.stat().getVersion(), tracker.boundNanos());
                }
                return CompletableFuture.completedFuture(LEFT);
            }
            if (!orphanedGateway.test(rec.gateway())) {
                return CompletableFuture.completedFuture(LEFT);
            }
            // Compare-and-set against the version just read: if the record changed meanwhile (a keepalive took the
            // session over elsewhere), it is not an orphan any more and this pass leaves it.
            SessionRecord mine = rec.withOwner(owner.gatewayId(), owner.incarnation());
            return zk.setData(path, Json.write(mine), ds.stat().getVersion()).handle((stat, err) -> {
                if (err == null) {
                    return CompletableFuture.completedFuture(track(id, mine, stat.getVersion(), rec));
                }
                return zk.data(path).thenApply(again -> {
                    SessionRecord now = Json.readOrNull(again.data(), SessionRecord.class);
                    return owner.owns(now) ? track(id, now, again.stat().getVersion(), rec) : LEFT;
                });
            }).thenCompose(f -> f);
        }).exceptionally(e -> {
            if (Zk.code(e) == org.apache.zookeeper.KeeperException.Code.NONODE) {
                return LEFT; // the session ended meanwhile
            }
            log.debug("could not adopt session {}: {}", id, Zk.unwrap(e).toString());
            return FAILED;
        });
    }

    private int track(String id, SessionRecord mine, int version, SessionRecord before) {
        tracker.track(id, mine, version, tracker.boundNanos());
        // One line per session at debug: a pass can adopt 100,000 (the gateway logs each pass's total at info).
        log.debug("adopted session {} of client {} (tracked by gateway {}#{} before) with a fresh TTL of {} ms + B",
                id, mine.clientId(), before.gateway(), before.incarnation(), mine.ttlMs());
        return ADOPTED;
    }
}
