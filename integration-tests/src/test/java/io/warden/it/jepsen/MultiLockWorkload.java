package io.warden.it.jepsen;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.it.jepsen.MutexWorkload.Tracked;
import io.warden.it.support.Await;
import io.warden.it.support.WardenClient;
import io.warden.it.support.WardenClient.ProblemException;
import io.warden.it.support.WardenClient.SessionNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The multi-lock requests of the random workload (contract §2.11): a mutex thread asks, now and then, for two or three
 * of the workload's EXCLUSIVE locks at once ({@code POST /v1/acquire} with {@code names}, in a random order), through
 * the gateways its thread uses, under the same faults as its one-name requests.
 *
 * <p>How it is recorded, so that the checkers of one name hold per name: a granted request is a holder of each of its
 * names with that name's token, so its answer is one GRANTED {@link Op} per name (the same call and return times). A
 * request not granted may still have held some of its names for a while: its entry on a free name holds it while the
 * request waits for another (docs/decisions/0012), and a one-name try there is refused meanwhile, rightly. So its
 * answer is, per name, an acquire and a release of unknown outcome, both within its call: it may have held the name
 * from some moment to a later one, or not at all (a refused multi-lock try says that some name is busy, not which, so
 * it is no REFUSED either). An answer that never came is one UNKNOWN acquire per name, as for one name. The holder reads and
 * increments each name's fenced counter with that name's token. Half the holds end by one release of the whole request
 * by its {@code request_id} (one RELEASE per name, with the name's token and the one answer), half name by name by
 * token; after those, the request is released as a whole too, unrecorded: its record outlives its entries until then
 * (docs/decisions/0012), and it holds nothing any more.
 *
 * <p>Besides the history, each request is kept as a {@link Request} (when it was asked, how long it might wait, when and
 * whether a gateway answered) for the multi-lock liveness checker ({@link MultiLockChecker}): no multi-lock request
 * waits for ever.
 *
 * <p>Concurrency: called from the workload's threads, each with its own session; requests go to a concurrent queue.
 */
final class MultiLockWorkload {
    /**
     * A request waits at most this long ({@code wait_ms}); one in four is a try ({@code wait_ms} 0). Longer than a
     * one-name request's 1.5 s: with waits like those, five in six multi-lock requests timed out behind the one-name
     * holds, on two or three names at once.
     */
    static final long MAX_WAIT_MS = 4000;
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * One multi-lock request as its client saw it: asked at {@code call} with {@code waitMs}; {@code answered} whether a
     * gateway answered it (granted, timed out, or a 4xx) at {@code ret}, or the client gave up then (no gateway answered
     * within its retry budget); {@code outcome} what it was told ({@code GRANTED}, {@code TIMED_OUT}, an error code, or
     * {@code NO_ANSWER}).
     */
    record Request(String process, String session, String requestId, List<String> names, long waitMs, long call,
                   long ret, boolean answered, String outcome) {
    }

    private final MutexWorkload w;
    private final ConcurrentLinkedQueue<Request> requests = new ConcurrentLinkedQueue<>();

    MultiLockWorkload(MutexWorkload w) {
        this.w = w;
    }

    /** Two or three distinct names of {@code jepsen/l0 .. l(locks-1)}, in a random order. */
    static List<String> pick(Random rnd, int locks) {
        List<String> all = new ArrayList<>();
        for (int i = 0; i < locks; i++) {
            all.add("jepsen/l" + i);
        }
        Collections.shuffle(all, rnd);
        return List.copyOf(all.subList(0, Math.min(all.size(), 2 + rnd.nextInt(Math.max(1, Math.min(2, locks - 1))))));
    }

    /**
     * One multi-lock request by {@code session} on {@code names}, waiting {@code waitMs}: asked, and when granted held
     * briefly (each name's counter incremented) and released. Returns false when an outcome is unknown: the caller
     * then gives up the session, as the one-name threads do.
     */
    boolean holdMany(String process, WardenClient client, Tracked session, List<String> names, long waitMs, Random rnd,
                     boolean balanced) {
        String requestId = "r-" + UUID.randomUUID();
        long call = System.nanoTime();
        Map<String, Long> tokens;
        try {
            WardenClient.AcquiredMany a = client.acquireMany(session.id, names, "EXCLUSIVE", waitMs, requestId, "CANCEL");
            long ret = System.nanoTime();
            requests.add(new Request(process, session.id, requestId, names, waitMs, call, ret, true, a.status()));
            if (!a.granted()) {
                mayHaveHeld(process, session, names, call, ret);
                return true;
            }
            tokens = a.tokens();
            if (!tokens.keySet().containsAll(names)) {
                // granted without a token for some name: as good as no answer for those (the checker sees it unknown)
                recordAll(process, session, names, tokens, Op.Outcome.UNKNOWN, call, Op.NEVER);
                return false;
            }
            recordAll(process, session, names, tokens, Op.Outcome.GRANTED, call, ret);
        } catch (SessionNotFoundException e) {
            long ret = System.nanoTime();
            session.gone(ret);
            requests.add(new Request(process, session.id, requestId, names, waitMs, call, ret, true, e.code()));
            if (e.ambiguous()) { // an earlier attempt may have been granted before the session ended
                recordAll(process, session, names, Map.of(), Op.Outcome.UNKNOWN, call, ret);
                return false;
            }
            mayHaveHeld(process, session, names, call, ret);
            return true;
        } catch (ProblemException e) {
            long ret = System.nanoTime();
            requests.add(new Request(process, session.id, requestId, names, waitMs, call, ret, true, e.code()));
            if (e.ambiguous()) { // an earlier attempt may have queued or been granted
                recordAll(process, session, names, Map.of(), Op.Outcome.UNKNOWN, call, Op.NEVER);
                return false;
            }
            mayHaveHeld(process, session, names, call, ret); // a 4xx: e.g. a full name, whose entries were undone
            return true;
        } catch (RuntimeException e) {
            requests.add(new Request(process, session.id, requestId, names, waitMs, call, System.nanoTime(), false,
                    "NO_ANSWER"));
            recordAll(process, session, names, Map.of(), Op.Outcome.UNKNOWN, call, Op.NEVER);
            return false;
        }
        List<FencedRegister> counters = new ArrayList<>();
        List<Long> reads = new ArrayList<>();
        for (String name : names) {
            FencedRegister counter = w.counters.computeIfAbsent(name, k -> new FencedRegister());
            counters.add(counter);
            reads.add(counter.read(tokens.get(name)));
        }
        Await.sleepQuietly(Duration.ofMillis(rnd.nextInt(200)));
        for (int k = 0; k < names.size(); k++) {
            if (reads.get(k) >= 0) {
                counters.get(k).writeAndAcknowledge(tokens.get(names.get(k)), reads.get(k) + 1);
            }
        }
        if (balanced) {
            client.prefer(rnd.nextInt(1 << 16));
        }
        if (rnd.nextBoolean()) {
            return releaseWhole(process, client, session, names, tokens, requestId);
        }
        for (String name : names) {
            if (!w.release(process, client, session, name, tokens.get(name))) {
                return false;
            }
        }
        try {
            client.releaseRequest(session.id, requestId); // its entries are gone: this ends only its record
        } catch (RuntimeException e) {
            // the record ends with the session
        }
        return true;
    }

    /** Releases the whole request by its id: one RELEASE per name in the history, with the one answer. */
    private boolean releaseWhole(String process, WardenClient client, Tracked session, List<String> names,
                                 Map<String, Long> tokens, String requestId) {
        long call = System.nanoTime();
        try {
            WardenClient.Released r = client.releaseRequest(session.id, requestId);
            long ret = System.nanoTime();
            if (!r.released() && r.ambiguous()) {
                recordReleases(process, session, names, tokens, Op.Outcome.UNKNOWN, call, Op.NEVER);
                return false;
            }
            recordReleases(process, session, names, tokens, r.released() ? Op.Outcome.RELEASED : Op.Outcome.NOT_RELEASED,
                    call, ret);
            return true;
        } catch (SessionNotFoundException e) {
            long ret = System.nanoTime();
            session.gone(ret);
            recordReleases(process, session, names, tokens, e.ambiguous() ? Op.Outcome.UNKNOWN : Op.Outcome.NOT_RELEASED,
                    call, ret);
            return !e.ambiguous();
        } catch (RuntimeException e) {
            recordReleases(process, session, names, tokens, Op.Outcome.UNKNOWN, call, Op.NEVER);
            return false;
        }
    }

    /**
     * A client of the liveness round (after the faults): a fresh session asks for {@code names} at once, waiting
     * {@code waitMs}, holds them briefly and releases the request; the liveness checker wants each name's op granted
     * within its bound ({@code process} starts with {@link MutexWorkload#LIVENESS}).
     */
    void livenessClient(String process, WardenClient client, List<String> names, long waitMs) {
        Tracked session = null;
        for (int attempt = 0; attempt < 60 && session == null; attempt++) {
            session = w.open(process, client, false);
            if (session == null) {
                Await.sleepQuietly(Duration.ofMillis(500));
            }
        }
        if (session == null) {
            long now = System.nanoTime();
            for (String name : names) {
                w.record(process, name, Op.Kind.ACQUIRE, "none", 0, Op.Outcome.NOT_GRANTED, now, now, "EXCLUSIVE");
            }
            return;
        }
        holdMany(process, client, session, names, waitMs, new Random(process.hashCode()), false);
        w.abandon(session);
    }

    private void recordAll(String process, Tracked session, List<String> names, Map<String, Long> tokens,
                           Op.Outcome outcome, long call, long ret) {
        for (String name : names) {
            w.record(process, name, Op.Kind.ACQUIRE, session.id, tokens.getOrDefault(name, 0L), outcome, call, ret,
                    "EXCLUSIVE");
        }
    }

    /**
     * A request not granted, answered at {@code ret}: per name, an acquire and a release of unknown outcome within its
     * call (its entry may have held the name for a while before the request was withdrawn).
     */
    private void mayHaveHeld(String process, Tracked session, List<String> names, long call, long ret) {
        recordAll(process, session, names, Map.of(), Op.Outcome.UNKNOWN, call, ret);
        recordReleases(process, session, names, Map.of(), Op.Outcome.UNKNOWN, call, ret);
    }

    private void recordReleases(String process, Tracked session, List<String> names, Map<String, Long> tokens,
                                Op.Outcome outcome, long call, long ret) {
        for (String name : names) {
            w.record(process, name, Op.Kind.RELEASE, session.id, tokens.getOrDefault(name, 0L), outcome, call, ret,
                    "EXCLUSIVE");
        }
    }

    List<Request> requests() {
        return List.copyOf(requests);
    }

    static void write(Path file, List<Request> requests) {
        try {
            JSON.writerWithDefaultPrettyPrinter().writeValue(file.toFile(), requests);
        } catch (IOException e) {
            throw new UncheckedIOException("writing " + file, e);
        }
    }

    static List<Request> read(Path file) {
        try {
            return JSON.readValue(file.toFile(), new TypeReference<List<Request>>() { });
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + file, e);
        }
    }
}
