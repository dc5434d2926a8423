package io.warden.it.jepsen;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.it.jepsen.MutexWorkload.Tracked;
import io.warden.it.support.Await;
import io.warden.it.support.WardenClient.ProblemException;
import io.warden.it.support.WardenClient.SessionNotFoundException;
import io.warden.it.support.WardenClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The interleavings the workload drives on purpose before its random part: for each deliberate bug of the gateways
 * ({@link BrokenGateway}), the exact sequence of calls that bug needs to show in its checker, each step taken only once the
 * one before it is observed (a grant answered, a request seen in the queue, an event seen by a watch), never after a
 * guessed delay. A correct cell passes the same sequences, which is why the runs against correct gateways drive every
 * one of them too.
 *
 * <p>Every call goes into the history like the random workload's (the process names start with {@code forced-}), on
 * locks of their own ({@code jepsen/forced/...}), so each checker runs over them with everything else. What each one
 * did is written for the report as a {@link Result} per scenario; one that could not be driven says why (a test that
 * needs it then fails on that, not on a missing violation).
 *
 * <p>Concurrency: driven by the workload's main thread before its workers start; a second client's held acquire runs
 * on a thread of its own while the main thread watches the queue.
 */
final class ForcedInterleavings {
    /** One forced interleaving, named after what it does; the bug it shows is in its javadoc. */
    enum Scenario {
        /**
         * A client holds an EXCLUSIVE lock and keeps holding it until a second client's acquire of the same lock (waiting
         * {@link #ASK_MS}) has been answered; then the same on the readers-and-writers lock with a SHARED request
         * queued behind the writer. A correct gateway answers the second one TIMED_OUT; one with
         * {@code GRANT_WITHOUT_CHECK} grants it while the first still holds: two holders (mutex checker), and a request
         * granted before the one queued ahead of it ended (FIFO checker).
         */
        HELD_WHILE_ANOTHER_ASKS,
        /**
         * A holder reads the lock's fenced counter, a successor queues behind it (seen in the queue), then the holder
         * stalls as in a long GC pause: its keepalives stop until its session expires and the successor is granted.
         * The successor increments the counter (acknowledged), and only then does the stalled holder write its
         * increment with its old token. A correct gateway gave the successor a larger token, so the fence refuses the
         * stale write; one with {@code TOKEN_OF_LOCK} gave both the lock node's token, so the write is accepted and
         * one increment is lost (fenced counter checker).
         */
        STALE_HOLDER_WRITES_LAST,
        /**
         * A client holds a lock; a second client's acquire (waiting {@link #UNWOKEN_WAIT_MS}, longer than the liveness
         * bound) is seen in the queue; then the holder releases. A correct gateway grants the waiter at once; one with
         * {@code WAITERS_NEVER_WOKEN} only when its wait runs out (liveness checker: the waiter is a {@code liveness-}
         * client).
         */
        WAITER_BEHIND_A_RELEASE,
        /**
         * The SDK watcher has seen a grant; its stream is cut (the gateways' replies to it dropped); a lock is granted
         * and released, and a plain watch on each gateway sees both; then the watcher's connections are closed and
         * it resumes from the last revision it got; a grant after that is seen by it. A correct gateway replays what
         * the cut held back; one with {@code RESUME_FROM_NOW} sends only what comes after the resumed stream opened
         * (watch checker: a grant with no event).
         */
        WATCH_CUT_WHILE_GRANTED,
        /**
         * A client that holds a lock sends a keepalive, then none for three quarters of its TTL (or until its session
         * is seen gone, whichever comes first), then one more. A correct gateway keeps the session; one with
         * {@code EXPIRE_AT_HALF_TTL} expires it at half the TTL (expiry checker: seen gone before its TTL ran out; the
         * watch's EXPIRED event of the hold comes early too).
         */
        KEEPALIVES_PAUSED_THREE_QUARTERS_TTL,
        /**
         * A client holds a lock; a second client's try-lock ({@code wait_ms} 0) of it is refused, and tried again (so its
         * gateway has seen the lock busy, and reads before it writes); the holder releases (acknowledged); the second
         * client tries once more, through the same gateway. A correct gateway grants it (the read after the release
         * sees a free lock); one with {@code REFUSE_FREE_TRIES} refuses it (mutex checker: a try refused while nobody
         * held the lock).
         */
        TRY_AFTER_A_RELEASE,
        /**
         * Two clients hold a semaphore of two permits and keep holding it until a third client's acquire of it
         * (waiting {@link #ASK_MS}) has been answered. A correct gateway answers the third TIMED_OUT; one with
         * {@code SEMAPHORE_ONE_MORE} grants it while both still hold: three holders of two permits (semaphore checker).
         */
        SEMAPHORE_FULL_WHILE_ANOTHER_ASKS,
        /**
         * A candidate leads an election (an SDK client, sampled valid); a second candidate campaigns in rounds of
         * {@link #ASK_MS}, and is seen leading, or seen to have a round end without a grant (its request's CANCELLED
         * event); the first is sampled again, then the second; the first resigns, and the second is sampled leading. A
         * correct cell keeps the second waiting until the first resigned, and gives it a larger token; one with
         * {@code GRANT_WITHOUT_CHECK} elects it at once (election checker: two leaders at once), one with
         * {@code TOKEN_OF_LOCK} gives it the first one's token (election checker: a token that did not grow).
         */
        CANDIDATE_ASKS_WHILE_ANOTHER_LEADS,
        /**
         * A candidate leads an election through links of its own; a second candidate is seen queued; the leader's links
         * are cut (nothing gets through either way), so its session expires and the second candidate is elected (seen
         * leading); then the cut-off leader is sampled, then the second again; then the links heal. A correct election
         * ended the cut-off leader's term at its session's local deadline, before the service could expire it; one
         * built with {@code OUTLIVES_ITS_HOLD} ({@link io.warden.client.BrokenElection}) still leads (election checker:
         * two leaders at once).
         */
        LEADER_CUT_OFF_PAST_ITS_TTL,
        /**
         * A client holds two locks; two more ask for both at once as multi-lock requests, in crossed orders
         * ({@code [x, y]} and {@code [y, x]}, waiting {@link #UNWOKEN_WAIT_MS}), and are seen queued on both names; then
         * the holder releases both. A correct gateway made each request's entries in one transaction, so the two are in
         * the same order on both names: one is granted, then (once it released) the other. One with
         * {@code MULTI_ONE_NAME_AT_A_TIME} made them a transaction per name, in the given order and a pause apart, so
         * the first entries of both requests came before the second ones: each request is first on one name and second
         * on the other, each holds one name and waits for the other, and neither is granted before its wait runs out
         * (liveness checker: both are {@code liveness-} clients).
         */
        CROSSED_MULTI_LOCKS_BEHIND_A_HOLDER,
        /**
         * A client holds one lock; a second asks for a free lock and that one at once, as one multi-lock request
         * ({@code [free, held]}, waiting {@link #ASK_MS}); only once it was answered does the holder release. A correct
         * gateway grants a request only when it holds every name: it answers TIMED_OUT. One with
         * {@code MULTI_FIRST_NAME_ONLY} grants it once its first name holds: two holders of the held lock (mutex
         * checker, on {@link #MULTI_HELD}).
         */
        MULTI_GRANTED_WHILE_A_NAME_IS_HELD,
        /**
         * Two clients on different gateways each hold one lock and then ask for the other's (crossed orders), one with
         * {@code on_deadlock: WAIT}, the other {@code FAIL}, both waiting {@link DeadlockWorkload#FAIL_WAIT_MS}; then
         * three clients hold a lock each and ask for the next one's (a→b→c→a), all with WAIT, waiting
         * {@link DeadlockWorkload#WAIT_ONLY_WAIT_MS}. Each second request is asked only once every first was granted,
         * so both cycles form. A correct gateway answers the FAIL request 409 DEADLOCK within moments (and the other is
         * granted once the victim let go) and leaves the WAIT cycle to its waits; one with {@code DEADLOCKS_NEVER_BROKEN}
         * lets both requests of the first cycle wait until they time out (deadlock checker: a cycle with a FAIL member
         * not broken within its bound).
         */
        CROSSED_HOLDERS_ONE_FAILS;

        static List<Scenario> every() {
            return List.of(values());
        }
    }

    /** What one scenario did: {@code driven} false when a step could not be taken (then {@code detail} says which). */
    record Result(Scenario scenario, boolean driven, String detail) {
    }

    static final String MUTEX_LOCK = "jepsen/forced/mutex";
    static final String FENCE_LOCK = "jepsen/forced/fence";
    static final String LIVENESS_LOCK = "jepsen/forced/liveness";
    static final String WATCH_LOCK = "jepsen/forced/watch";
    static final String EXPIRY_LOCK = "jepsen/forced/expiry";
    static final String TRY_LOCK = "jepsen/forced/try";
    /** The semaphore of {@link Scenario#SEMAPHORE_FULL_WHILE_ANOTHER_ASKS}, of {@link MutexWorkload#SEM_PERMITS}. */
    static final String SEM_LOCK = "jepsen/forced/sem";
    static final String ELECTION_LOCK = "jepsen/forced/election";
    /** The election instances of {@link Scenario#CANDIDATE_ASKS_WHILE_ANOTHER_LEADS}, as the election checker names them. */
    static final String ELECTION_FIRST = "forced-election-first";
    static final String ELECTION_SECOND = "forced-election-second";
    static final String CUT_OFF_LOCK = "jepsen/forced/cut-off-leader";
    /** The election instances of {@link Scenario#LEADER_CUT_OFF_PAST_ITS_TTL}. */
    static final String CUT_OFF_LEADER = "forced-cut-off-leader";
    static final String CUT_OFF_SUCCESSOR = "forced-cut-off-successor";
    /** The names of {@link Scenario#CROSSED_MULTI_LOCKS_BEHIND_A_HOLDER}. */
    static final String MULTI_X = "jepsen/forced/multi-x";
    static final String MULTI_Y = "jepsen/forced/multi-y";
    /** Its two multi-lock clients: liveness clients, as the round's are; the first asks [x, y], the second [y, x]. */
    static final String MULTI_FIRST = MutexWorkload.LIVENESS + "multi-first";
    static final String MULTI_SECOND = MutexWorkload.LIVENESS + "multi-second";
    /** The names of {@link Scenario#MULTI_GRANTED_WHILE_A_NAME_IS_HELD}: the one held, and the free one asked for first. */
    static final String MULTI_HELD = "jepsen/forced/multi-held";
    static final String MULTI_FREE = "jepsen/forced/multi-free";
    /** The names of {@link Scenario#CROSSED_HOLDERS_ONE_FAILS}. */
    static final List<String> DEADLOCK_NAMES = List.of("jepsen/forced/dl-a", "jepsen/forced/dl-b", "jepsen/forced/dl-c");
    /** Its groups, as the deadlock checker names them: the two-cycle with a FAIL member, and the three-cycle of WAITs. */
    static final String DEADLOCK_FAIL_GROUP = "forced-deadlock-fail";
    static final String DEADLOCK_WAIT_GROUP = "forced-deadlock-wait";
    /** The process of the second holder of {@link Scenario#HELD_WHILE_ANOTHER_ASKS} on the readers-and-writers lock. */
    static final String FIFO_SECOND = "forced-fifo-second";
    /** The process of {@link Scenario#WAITER_BEHIND_A_RELEASE}'s waiter: a liveness client, as the round's are. */
    static final String LIVENESS_WAITER = MutexWorkload.LIVENESS + "forced";
    /** The process of the grant made while the watcher's stream is cut. */
    static final String WATCH_DURING_CUT = "forced-watch-during-cut";
    /** The process of {@link Scenario#KEEPALIVES_PAUSED_THREE_QUARTERS_TTL}'s client. */
    static final String PAUSED_CLIENT = "forced-expiry";

    /** How long the second client of {@link Scenario#HELD_WHILE_ANOTHER_ASKS} waits: the first holds all along. */
    static final long ASK_MS = 1000;
    /** The waiter's wait: past the liveness bound, so that one woken only when it runs out is caught. */
    static final long UNWOKEN_WAIT_MS = ProofRun.LIVENESS_BOUND_MS + 2000;
    /** How long a step may take to be observed before the scenario counts as not driven. */
    private static final Duration STEP = Duration.ofSeconds(20);
    /** How long a grant after the watcher's reconnection is looked for in its events before the next one is made. */
    private static final Duration RESUME_LOOK = Duration.ofSeconds(1);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final MutexWorkload w;
    private final WatchRecorder watcher;
    private final List<URI> gateways;
    private final HttpClient http;

    ForcedInterleavings(MutexWorkload w, WatchRecorder watcher, List<URI> gateways, HttpClient http) {
        this.w = w;
        this.watcher = watcher;
        this.gateways = List.copyOf(gateways);
        this.http = http;
    }

    /** A step that could not be taken: the scenario ends, not driven. */
    private static final class NotDriven extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NotDriven(String message) {
            super(message);
        }
    }

    List<Result> run(List<Scenario> scenarios) {
        List<Result> results = new ArrayList<>();
        for (Scenario s : scenarios) {
            long start = System.nanoTime();
            Result r;
            try {
                r = new Result(s, true, drive(s));
            } catch (NotDriven e) {
                r = new Result(s, false, e.getMessage());
            } catch (RuntimeException | AssertionError e) {
                r = new Result(s, false, e.toString());
            }
            System.out.printf("forced %s (%d ms): %s%s%n", s, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
                    r.driven() ? "" : "NOT DRIVEN: ", r.detail());
            results.add(r);
        }
        return results;
    }

    private String drive(Scenario s) {
        return switch (s) {
            case HELD_WHILE_ANOTHER_ASKS -> heldWhileAnotherAsks(MUTEX_LOCK, "forced-mutex", "EXCLUSIVE")
                    + "; " + heldWhileAnotherAsks(MutexWorkload.RW_LOCK, "forced-fifo", "SHARED");
            case STALE_HOLDER_WRITES_LAST -> staleHolderWritesLast();
            case WAITER_BEHIND_A_RELEASE -> waiterBehindARelease();
            case WATCH_CUT_WHILE_GRANTED -> watchCutWhileGranted();
            case KEEPALIVES_PAUSED_THREE_QUARTERS_TTL -> keepalivesPaused();
            case TRY_AFTER_A_RELEASE -> tryAfterARelease();
            case SEMAPHORE_FULL_WHILE_ANOTHER_ASKS -> semaphoreFullWhileAnotherAsks();
            case CANDIDATE_ASKS_WHILE_ANOTHER_LEADS -> candidateAsksWhileAnotherLeads();
            case LEADER_CUT_OFF_PAST_ITS_TTL -> leaderCutOffPastItsTtl();
            case CROSSED_MULTI_LOCKS_BEHIND_A_HOLDER -> crossedMultiLocksBehindAHolder();
            case MULTI_GRANTED_WHILE_A_NAME_IS_HELD -> multiGrantedWhileANameIsHeld();
            case CROSSED_HOLDERS_ONE_FAILS -> crossedHoldersOneFails();
        };
    }

    private String semaphoreFullWhileAnotherAsks() {
        String lock = SEM_LOCK;
        int permits = MutexWorkload.SEM_PERMITS;
        List<Tracked> holders = new ArrayList<>();
        List<Op> holds = new ArrayList<>();
        Tracked asker = null;
        try {
            for (int i = 0; i < permits; i++) {
                Tracked t = open("forced-sem-" + i, i);
                holders.add(t);
                holds.add(granted(acquire("forced-sem-" + i, t, lock, "SEMAPHORE", permits, STEP.toMillis(), null),
                        "holder " + i));
            }
            asker = open("forced-sem-asker", permits);
            Op asked = acquire("forced-sem-asker", asker, lock, "SEMAPHORE", permits, ASK_MS, null);
            // The holders release only now that the third was answered: if it was granted, three held at once.
            for (int i = 0; i < permits; i++) {
                w.release("forced-sem-" + i, holders.get(i).client, holders.get(i), lock, holds.get(i).token());
            }
            if (asked.outcome() == Op.Outcome.GRANTED) {
                w.release("forced-sem-asker", asker.client, asker, lock, asked.token());
            }
            return lock + ": " + permits + " holders (tokens " + holds.stream().map(o -> Long.toString(o.token()))
                    .collect(java.util.stream.Collectors.joining(", ")) + ") held while a third request waited "
                    + ASK_MS + " ms: " + (asked.outcome() == Op.Outcome.GRANTED
                    ? "GRANTED token " + asked.token() + " while they held" : asked.outcome());
        } finally {
            for (Tracked t : holders) {
                close(t, null);
            }
            close(asker, null);
        }
    }

    // ------------------------------------------------------------------ the scenarios

    private String multiGrantedWhileANameIsHeld() {
        Tracked h = open("forced-multi-held-holder", 0);
        Tracked a = null;
        try {
            Op held = granted(acquire("forced-multi-held-holder", h, MULTI_HELD, "EXCLUSIVE", STEP.toMillis(), null),
                    "the holder");
            a = open("forced-multi-held-asker", 1);
            int before = w.multi.requests().size();
            w.multi.holdMany("forced-multi-held-asker", a.client, a, List.of(MULTI_FREE, MULTI_HELD), ASK_MS,
                    new java.util.Random(1), false);
            // The holder releases only now that the request was answered (and, if granted, held and released).
            w.release("forced-multi-held-holder", h.client, h, MULTI_HELD, held.token());
            List<MultiLockWorkload.Request> asked = w.multi.requests();
            String outcome = asked.size() > before ? asked.get(asked.size() - 1).outcome() : "no answer";
            return MULTI_HELD + " held by token " + held.token() + " while [" + MULTI_FREE + ", " + MULTI_HELD
                    + "] was asked for (wait " + ASK_MS + " ms): " + outcome;
        } finally {
            close(h, a);
        }
    }

    private String crossedHoldersOneFails() {
        List<Tracked> sessions = new ArrayList<>();
        try {
            for (int i = 0; i < DEADLOCK_NAMES.size(); i++) {
                sessions.add(open("forced-deadlock-m" + i, i));
            }
            DeadlockWorkload.Ran fail = w.deadlocks.cycle(DEADLOCK_FAIL_GROUP, "forced-deadlock",
                    DEADLOCK_NAMES.subList(0, 2), List.of("WAIT", "FAIL"), sessions.subList(0, 2));
            DeadlockWorkload.Ran waits = w.deadlocks.cycle(DEADLOCK_WAIT_GROUP, "forced-deadlock", DEADLOCK_NAMES,
                    List.of("WAIT", "WAIT", "WAIT"), sessions);
            return "two sessions in crossed orders, WAIT and FAIL: " + describe(fail.group())
                    + "; three in a cycle, all WAIT: " + describe(waits.group());
        } finally {
            for (Tracked t : sessions) {
                close(t, null);
            }
        }
    }

    /** What each member's second request was told; not driven when some member was not granted its first name. */
    private String describe(DeadlockWorkload.Group g) {
        List<String> told = new ArrayList<>();
        for (DeadlockWorkload.Member m : g.members()) {
            if (m.waitOp() < 0) {
                throw new NotDriven("group " + g.id() + ": " + m.process() + " was not granted " + m.holds()
                        + " first, so no cycle formed");
            }
            Op ask = w.op(m.waitOp());
            told.add(m.onDeadlock() + " " + ask.outcome() + " after "
                    + TimeUnit.NANOSECONDS.toMillis(ask.ret() == Op.NEVER ? 0 : ask.ret() - ask.call()) + " ms");
        }
        return told.toString();
    }

    private String crossedMultiLocksBehindAHolder() {
        Tracked h = open("forced-multi-holder", 0);
        Tracked a = null;
        Tracked b = null;
        try {
            Op hx = granted(acquire("forced-multi-holder", h, MULTI_X, "EXCLUSIVE", STEP.toMillis(), null), "the holder of x");
            Op hy = granted(acquire("forced-multi-holder", h, MULTI_Y, "EXCLUSIVE", STEP.toMillis(), null), "the holder of y");
            Tracked first = a = open(MULTI_FIRST, 0);
            Tracked second = b = open(MULTI_SECOND, 1);
            String ra = "r-" + UUID.randomUUID();
            String rb = "r-" + UUID.randomUUID();
            CompletableFuture<List<Op>> one = inThread(MULTI_FIRST,
                    () -> multiLockAndRelease(MULTI_FIRST, first, List.of(MULTI_X, MULTI_Y), ra));
            CompletableFuture<List<Op>> two = inThread(MULTI_SECOND,
                    () -> multiLockAndRelease(MULTI_SECOND, second, List.of(MULTI_Y, MULTI_X), rb));
            Await.until("both multi-lock requests queued on both names", STEP, Duration.ofMillis(20),
                    () -> one.isDone() || two.isDone()
                            || queued(MULTI_X, ra) && queued(MULTI_Y, ra) && queued(MULTI_X, rb) && queued(MULTI_Y, rb));
            if (one.isDone() || two.isDone()) {
                throw new NotDriven("a multi-lock request was answered before both were seen queued behind the holder");
            }
            String order = "queues behind the holder: x " + waiterOrder(MULTI_X, ra, rb) + ", y " + waiterOrder(MULTI_Y, ra, rb);
            w.release("forced-multi-holder", h.client, h, MULTI_X, hx.token());
            w.release("forced-multi-holder", h.client, h, MULTI_Y, hy.token());
            List<Op> firstOps = join(one);
            List<Op> secondOps = join(two);
            return order + "; after the holder released: [x, y] " + describe(firstOps) + ", [y, x] " + describe(secondOps)
                    + " (wait " + UNWOKEN_WAIT_MS + " ms, bound " + ProofRun.LIVENESS_BOUND_MS + " ms)";
        } finally {
            close(h, a);
            close(b, null);
        }
    }

    /** The order of the requests {@code ra} (first) and {@code rb} (second) among {@code lock}'s waiters. */
    private String waiterOrder(String lock, String ra, String rb) {
        List<String> order = new ArrayList<>();
        for (JsonNode waiter : client(0).lock(lock).path("waiters")) {
            String id = waiter.path("request_id").asText();
            order.add(id.equals(ra) ? "first" : id.equals(rb) ? "second" : id);
        }
        return order.toString();
    }

    private static String describe(List<Op> ops) {
        Op op = ops.get(0);
        return op.outcome() + " after " + TimeUnit.NANOSECONDS.toMillis(op.ret() - op.call()) + " ms";
    }

    /**
     * A multi-lock acquire of {@code names} (EXCLUSIVE, waiting {@link #UNWOKEN_WAIT_MS}), recorded in the history as
     * one acquire per name (same call and return, each name's token), so each name's checkers see it as any grant; when
     * granted, each name is then released by its token (recorded as any release).
     */
    private List<Op> multiLockAndRelease(String process, Tracked s, List<String> names, String requestId) {
        long call = System.nanoTime();
        List<Op> ops = new ArrayList<>();
        try {
            WardenClient.AcquiredMany a = s.client.acquireMany(s.id, names, "EXCLUSIVE", UNWOKEN_WAIT_MS, requestId, "CANCEL");
            long ret = System.nanoTime();
            for (String name : names) {
                Long token = a.tokens().get(name);
                boolean granted = a.granted() && token != null;
                ops.add(w.record(process, name, Op.Kind.ACQUIRE, s.id, granted ? token : 0,
                        granted ? Op.Outcome.GRANTED : Op.Outcome.NOT_GRANTED, call, ret, "EXCLUSIVE"));
            }
        } catch (SessionNotFoundException e) {
            long ret = System.nanoTime();
            s.gone(ret);
            names.forEach(name -> ops.add(w.record(process, name, Op.Kind.ACQUIRE, s.id, 0, Op.Outcome.NOT_GRANTED,
                    call, ret, "EXCLUSIVE")));
            return ops;
        } catch (ProblemException e) {
            long ret = System.nanoTime();
            names.forEach(name -> ops.add(w.record(process, name, Op.Kind.ACQUIRE, s.id, 0, Op.Outcome.NOT_GRANTED,
                    call, ret, "EXCLUSIVE")));
            return ops;
        } catch (RuntimeException e) {
            names.forEach(name -> w.record(process, name, Op.Kind.ACQUIRE, s.id, 0, Op.Outcome.UNKNOWN, call, Op.NEVER,
                    "EXCLUSIVE"));
            throw new NotDriven(process + "'s multi-lock acquire of " + names + " got no answer: " + e);
        }
        for (Op op : ops) {
            if (op.outcome() == Op.Outcome.GRANTED && !w.release(process, s.client, s, op.key(), op.token())) {
                throw new NotDriven(process + "'s release of " + op.key() + " (token " + op.token() + ") got no answer");
            }
        }
        return ops;
    }

    private String heldWhileAnotherAsks(String lock, String process, String secondMode) {
        Tracked a = open(process + "-first", 0);
        Tracked b = null;
        try {
            Op first = granted(acquire(process + "-first", a, lock, "EXCLUSIVE", STEP.toMillis(), null), "the first client");
            b = open(process + "-second", 1);
            Op second = acquire(process + "-second", b, lock, secondMode, ASK_MS, null);
            // The first releases only now that the second was answered: if the second was granted, both held at once.
            w.release(process + "-first", a.client, a, lock, first.token());
            if (second.outcome() == Op.Outcome.GRANTED) {
                w.release(process + "-second", b.client, b, lock, second.token());
            }
            return lock + ": token " + first.token() + " held while a " + secondMode + " request waited " + ASK_MS
                    + " ms: " + (second.outcome() == Op.Outcome.GRANTED
                    ? "GRANTED token " + second.token() + " while the first held" : second.outcome());
        } finally {
            close(a, b);
        }
    }

    private String staleHolderWritesLast() {
        String lock = FENCE_LOCK;
        Tracked a = open("forced-fence-stalled", 0);
        Tracked b = null;
        try {
            Op first = granted(acquire("forced-fence-stalled", a, lock, "EXCLUSIVE", STEP.toMillis(), null), "the holder");
            FencedRegister counter = w.counters.computeIfAbsent(lock, k -> new FencedRegister());
            long readA = counter.read(first.token());
            b = open("forced-fence-successor", 1);
            // The successor's request is in the queue before the holder stalls: the lock's node then never empties, as
            // when a successor waits for a holder that pauses.
            CompletableFuture<Op> asked = queuedBehind("forced-fence-successor", b, lock,
                    4 * w.ttlMs + JepsenCell.ZK_SESSION_TIMEOUT_MS);
            // The holder stalls: no keepalive from now on, so its session expires and the successor is granted.
            a.lapsing = true;
            Op second = granted(join(asked), "the successor (after the stalled holder's session expired)");
            long readB = counter.read(second.token());
            if (readB < 0 || !counter.writeAndAcknowledge(second.token(), readB + 1)) {
                throw new NotDriven("the successor's increment (token " + second.token() + ") was refused by the fence");
            }
            // Only now, after its successor's increment was acknowledged, does the stalled holder write with its old token.
            boolean staleAccepted = readA >= 0 && counter.writeAndAcknowledge(first.token(), readA + 1);
            w.release("forced-fence-successor", b.client, b, lock, second.token());
            w.release("forced-fence-stalled", a.client, a, lock, first.token());
            return "holder token " + first.token() + " read " + readA + " and stalled; its session expired and the "
                    + "successor was granted token " + second.token()
                    + (second.token() == first.token() ? " (the same)" : "") + ", read " + readB
                    + " and wrote (acknowledged); the stalled holder's write then: "
                    + (staleAccepted ? "ACCEPTED (an increment lost)" : "refused by the fence");
        } finally {
            close(a, b);
        }
    }

    private String waiterBehindARelease() {
        String lock = LIVENESS_LOCK;
        Tracked a = open("forced-liveness-holder", 0);
        Tracked b = null;
        try {
            Op first = granted(acquire("forced-liveness-holder", a, lock, "EXCLUSIVE", STEP.toMillis(), null), "the holder");
            b = open(LIVENESS_WAITER, 1);
            CompletableFuture<Op> asked = queuedBehind(LIVENESS_WAITER, b, lock, UNWOKEN_WAIT_MS);
            w.release("forced-liveness-holder", a.client, a, lock, first.token());
            Op second = join(asked);
            if (second.outcome() == Op.Outcome.GRANTED) {
                w.release(LIVENESS_WAITER, b.client, b, lock, second.token());
            }
            return "a waiter queued behind token " + first.token() + ", which was then released: " + second.outcome()
                    + " after " + TimeUnit.NANOSECONDS.toMillis(second.ret() - second.call()) + " ms (wait "
                    + UNWOKEN_WAIT_MS + " ms, bound " + ProofRun.LIVENESS_BOUND_MS + " ms)";
        } finally {
            close(a, b);
        }
    }

    private String watchCutWhileGranted() {
        String lock = WATCH_LOCK;
        Tracked s = open("forced-watch", 0);
        List<WatchProbe> probes = new ArrayList<>();
        try {
            for (URI gateway : gateways) {
                probes.add(WatchProbe.open(http, gateway, lock));
            }
            // A grant the watcher sees: its stream is live, and it has a revision to resume from.
            Op before = grantAndRelease("forced-watch", s, lock);
            if (!watcher.awaitEvent("GRANTED", lock, before.token(), STEP)) {
                throw new NotDriven("the watcher did not see the grant of token " + before.token());
            }
            watcher.cut();
            Op during = grantAndRelease(WATCH_DURING_CUT, s, lock);
            // Every gateway has put the grant and the release into its streams (the watcher's got them, and dropped them):
            // wherever the watcher resumes, they are history there.
            for (WatchProbe p : probes) {
                p.awaitEvent("RELEASED", during.token(), STEP);
            }
            watcher.reconnect();
            // The SDK opens its new stream after a backoff of its own, and nothing outside it tells when: grant again
            // until the watcher sees a grant made after the cut; then its stream is open again. (A grant made before
            // that is history to the resumed stream, like the one made during the cut.)
            Op after = null;
            int grants = 0;
            long deadline = System.nanoTime() + STEP.toNanos();
            while (after == null) {
                Op op = grantAndRelease("forced-watch", s, lock);
                grants++;
                if (watcher.awaitEvent("GRANTED", lock, op.token(), RESUME_LOOK)) {
                    after = op;
                } else if (System.nanoTime() - deadline > 0) {
                    throw new NotDriven("the watcher did not resume: no event for any of " + grants + " grants after the cut");
                }
            }
            return "the watcher saw token " + before.token() + "; its stream was cut while token " + during.token()
                    + " was granted and released (seen by a probe on each gateway), then resumed and saw token "
                    + after.token() + " (grant " + grants + " after the cut); token " + during.token() + " seen by it: "
                    + watcher.hasEvent("GRANTED", lock, during.token());
        } finally {
            probes.forEach(WatchProbe::close);
            close(s, null);
        }
    }

    private String tryAfterARelease() {
        String lock = TRY_LOCK;
        Tracked a = open("forced-try-holder", 0);
        Tracked b = null;
        try {
            Op first = granted(acquire("forced-try-holder", a, lock, "EXCLUSIVE", STEP.toMillis(), null), "the holder");
            b = open("forced-try", 1);
            for (int i = 0; i < 2; i++) {
                Op refused = acquire("forced-try", b, lock, "EXCLUSIVE", 0, null);
                if (refused.outcome() != Op.Outcome.REFUSED) {
                    throw new NotDriven("a try while token " + first.token() + " held " + lock + " was " + refused);
                }
            }
            if (!w.release("forced-try-holder", a.client, a, lock, first.token())) {
                throw new NotDriven("the holder's release of token " + first.token() + " got no answer");
            }
            Op after = acquire("forced-try", b, lock, "EXCLUSIVE", 0, null);
            if (after.outcome() == Op.Outcome.GRANTED) {
                w.release("forced-try", b.client, b, lock, after.token());
            }
            return lock + ": two tries refused while token " + first.token() + " held it; after its release was "
                    + "acknowledged, a try through the same gateway: " + after.outcome()
                    + (after.outcome() == Op.Outcome.GRANTED ? " token " + after.token() : "");
        } finally {
            close(a, b);
        }
    }

    private String keepalivesPaused() {
        String lock = EXPIRY_LOCK;
        Tracked s = w.open(PAUSED_CLIENT, client(0), false, false);
        if (s == null) {
            throw new NotDriven("no session could be opened for " + PAUSED_CLIENT);
        }
        try {
            Op held = granted(acquire(PAUSED_CLIENT, s, lock, "EXCLUSIVE", STEP.toMillis(), null), "the client");
            long call = System.nanoTime();
            if (!keepalive(s)) {
                throw new NotDriven("the session was gone before its pause");
            }
            // Three quarters of the TTL without a keepalive, counted from the send time of the last one acknowledged
            // (the gateway's count starts later, when that one arrived); polling the session meanwhile, which is no
            // keepalive, to see an expiry as soon as it happens.
            long pauseEnd = call + s.ttlNanos / 4 * 3;
            while (!s.isGone() && System.nanoTime() - pauseEnd < 0) {
                try {
                    s.client.session(s.id);
                } catch (SessionNotFoundException e) {
                    s.gone(System.nanoTime());
                    break;
                } catch (RuntimeException e) {
                    // no answer: look again
                }
                Await.sleepQuietly(Duration.ofMillis(20));
            }
            boolean kept = !s.isGone() && keepalive(s);
            long pausedMs = TimeUnit.NANOSECONDS.toMillis((s.isGone() ? s.goneSeen() : System.nanoTime()) - call);
            w.release(PAUSED_CLIENT, s.client, s, lock, held.token());
            return "holding token " + held.token() + ", a keepalive, then none: "
                    + (kept ? "the session was kept (the next keepalive, " + pausedMs + " ms later, was acknowledged)"
                    : "the session was seen gone " + pausedMs + " ms after the last keepalive was sent (TTL "
                    + TimeUnit.NANOSECONDS.toMillis(s.ttlNanos) + " ms)");
        } finally {
            close(s, null);
        }
    }

    private String candidateAsksWhileAnotherLeads() {
        ElectionWorkload e = w.elections;
        try (io.warden.client.WardenClient ca = e.client(ELECTION_FIRST);
             io.warden.client.WardenClient cb = e.client(ELECTION_SECOND)) {
            ElectionWorkload.Candidate a = e.candidate(ca, ELECTION_LOCK, ELECTION_FIRST);
            ElectionWorkload.Candidate b = e.candidate(cb, ELECTION_LOCK, ELECTION_SECOND, Duration.ofMillis(ASK_MS));
            List<io.warden.client.LockEvent> events = new java.util.concurrent.CopyOnWriteArrayList<>();
            try (io.warden.client.Election ignoredA = a.election(); io.warden.client.Election ignoredB = b.election();
                 io.warden.client.Watch ignoredW = ca.watch(io.warden.client.WatchOptions.name(ELECTION_LOCK), events::add)) {
                if (!e.campaign(a)) {
                    throw new NotDriven("the first candidate could not campaign");
                }
                Await.until("the first candidate leads " + ELECTION_LOCK, STEP, Duration.ofMillis(20),
                        () -> e.sample(a).isPresent());
                if (!e.campaign(b)) {
                    throw new NotDriven("the second candidate could not campaign");
                }
                // A correct gateway ends the second's first round (TIMED_OUT, its request removed: CANCELLED); one that
                // grants without the check answered it GRANTED at once, and the second leads.
                Await.until("the second candidate leads, or a round of it ended without a grant", STEP,
                        Duration.ofMillis(20), () -> e.sample(b).isPresent() || events.stream().anyMatch(ev ->
                                ev.type() == io.warden.client.LockEvent.Type.CANCELLED && cb.sessionId().equals(ev.sessionId())));
                // The first looks again only now, and then the second: if the second was elected, both led at once.
                var first = e.sample(a);
                var secondWhileFirst = e.sample(b);
                if (first.isEmpty()) {
                    throw new NotDriven("the first candidate's leadership ended before the second campaigned");
                }
                e.resign(a);
                Await.until("the second candidate leads after the first resigned", STEP, Duration.ofMillis(20),
                        () -> e.sample(b).isPresent());
                var second = e.sample(b);
                e.resign(b);
                return ELECTION_LOCK + ": the first candidate led with token " + first.get().token()
                        + " while the second campaigned: the second " + secondWhileFirst.map(l -> "LED with token "
                        + l.token() + " at the same time").orElse("was queued") + "; after the first resigned the second led"
                        + second.map(l -> " with token " + l.token()).orElse("");
            }
        }
    }

    private String leaderCutOffPastItsTtl() {
        ElectionWorkload e = w.elections;
        List<io.warden.it.support.LinkProxy> links = new ArrayList<>();
        try {
            for (int i = 0; i < gateways.size(); i++) {
                links.add(new io.warden.it.support.LinkProxy("cut-off-leader-gw" + (i + 1), gateways.get(i).getPort()));
            }
            List<URI> own = links.stream().map(l -> URI.create("http://" + io.warden.it.support.LoopbackPorts.HOST + ":"
                    + l.port())).toList();
            try (io.warden.client.WardenClient ca = e.client(CUT_OFF_LEADER, own);
                 io.warden.client.WardenClient cb = e.client(CUT_OFF_SUCCESSOR)) {
                ElectionWorkload.Candidate a = e.candidate(ca, CUT_OFF_LOCK, CUT_OFF_LEADER);
                ElectionWorkload.Candidate b = e.candidate(cb, CUT_OFF_LOCK, CUT_OFF_SUCCESSOR);
                try (io.warden.client.Election ignoredA = a.election(); io.warden.client.Election ignoredB = b.election()) {
                    if (!e.campaign(a)) {
                        throw new NotDriven("the leader could not campaign");
                    }
                    Await.until("the first candidate leads " + CUT_OFF_LOCK, STEP, Duration.ofMillis(20),
                            () -> e.sample(a).isPresent());
                    long leaderToken = e.sample(a).map(io.warden.client.Leadership::token).orElse(0L);
                    if (!e.campaign(b)) {
                        throw new NotDriven("the second candidate could not campaign");
                    }
                    Await.until("the second candidate is queued", STEP, Duration.ofMillis(20),
                            () -> waiting(CUT_OFF_LOCK, cb.sessionId()));
                    links.forEach(io.warden.it.support.LinkProxy::blackhole);
                    Await.until("the second candidate leads (the cut-off leader's session expired)",
                            STEP.plus(Duration.ofMillis(w.ttlMs)), Duration.ofMillis(20), () -> e.sample(b).isPresent());
                    var cutOff = e.sample(a);
                    var second = e.sample(b);
                    links.forEach(io.warden.it.support.LinkProxy::heal);
                    e.resign(b);
                    return CUT_OFF_LOCK + ": the leader (token " + leaderToken + ") was cut off; its session expired and "
                            + "the second candidate led" + second.map(l -> " with token " + l.token()).orElse("")
                            + "; the cut-off leader then " + cutOff.map(l -> "STILL LED with token " + l.token())
                            .orElse("no longer led");
                }
            }
        } finally {
            links.forEach(io.warden.it.support.LinkProxy::close);
        }
    }

    /** Whether {@code session} has a request among the waiters of {@code lock} (a linearizable read). */
    private boolean waiting(String lock, String session) {
        for (JsonNode waiter : client(0).lock(lock).path("waiters")) {
            if (session.equals(waiter.path("session_id").asText())) {
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------ steps

    /** A session of client {@code i} (preferring gateway {@code i mod gateways}), kept alive by the workload's scheduler. */
    private Tracked open(String process, int i) {
        Tracked t = w.open(process, client(i), false);
        if (t == null) {
            throw new NotDriven("no session could be opened for " + process);
        }
        return t;
    }

    private WardenClient client(int i) {
        return w.clients.get(i % w.clients.size());
    }

    /** An acquire recorded in the history, as the workload's threads record theirs; an unknown outcome ends the scenario. */
    private Op acquire(String process, Tracked s, String lock, String mode, long waitMs, String requestId) {
        return acquire(process, s, lock, mode, 0, waitMs, requestId);
    }

    private Op acquire(String process, Tracked s, String lock, String mode, int permits, long waitMs, String requestId) {
        long call = System.nanoTime();
        try {
            WardenClient.Acquired a = s.client.acquire(s.id, lock, mode, permits, waitMs,
                    requestId == null ? "r-" + UUID.randomUUID() : requestId, "CANCEL");
            long ret = System.nanoTime();
            return w.record(process, lock, Op.Kind.ACQUIRE, s.id, a.granted() ? a.token() : 0,
                    a.granted() ? Op.Outcome.GRANTED : waitMs == 0 ? Op.Outcome.REFUSED : Op.Outcome.NOT_GRANTED,
                    call, ret, mode);
        } catch (SessionNotFoundException e) {
            long ret = System.nanoTime();
            s.gone(ret);
            return w.record(process, lock, Op.Kind.ACQUIRE, s.id, 0, MutexWorkload.gone(e, waitMs), call, ret, mode);
        } catch (ProblemException e) {
            return w.record(process, lock, Op.Kind.ACQUIRE, s.id, 0, Op.Outcome.NOT_GRANTED, call, System.nanoTime(), mode);
        } catch (RuntimeException e) {
            w.record(process, lock, Op.Kind.ACQUIRE, s.id, 0, Op.Outcome.UNKNOWN, call, Op.NEVER, mode);
            throw new NotDriven(process + "'s acquire of " + lock + " got no answer: " + e);
        }
    }

    private static Op granted(Op op, String who) {
        if (op.outcome() != Op.Outcome.GRANTED) {
            throw new NotDriven(who + " was not granted " + op.key() + ": " + op);
        }
        return op;
    }

    private Op grantAndRelease(String process, Tracked s, String lock) {
        Op op = granted(acquire(process, s, lock, "EXCLUSIVE", STEP.toMillis(), null), process);
        if (!w.release(process, s.client, s, lock, op.token())) {
            throw new NotDriven(process + "'s release of token " + op.token() + " got no answer");
        }
        return op;
    }

    /** One keepalive; true when acknowledged (its send time then bounds the session's expiry), false when gone. */
    private static boolean keepalive(Tracked s) {
        long call = System.nanoTime();
        try {
            s.client.keepalive(s.id);
            s.acked(call);
            return true;
        } catch (SessionNotFoundException e) {
            s.gone(System.nanoTime());
            return false;
        }
    }

    /**
     * An EXCLUSIVE acquire of {@code lock} by {@code s}, waiting {@code waitMs}, held on a thread of its own; returns
     * once its request is seen among the lock's waiters (a linearizable read). If the call is answered first (granted at
     * once, say), the scenario is not driven.
     */
    private CompletableFuture<Op> queuedBehind(String process, Tracked s, String lock, long waitMs) {
        String requestId = "r-" + UUID.randomUUID();
        CompletableFuture<Op> asked = inThread(process, () -> acquire(process, s, lock, "EXCLUSIVE", waitMs, requestId));
        Await.until("request " + requestId + " in the queue of " + lock, STEP, Duration.ofMillis(20),
                () -> asked.isDone() || queued(lock, requestId));
        if (asked.isDone()) {
            throw new NotDriven("the request " + requestId + " on " + lock + " was answered before it was seen queued: "
                    + join(asked));
        }
        return asked;
    }

    private boolean queued(String lock, String requestId) {
        for (JsonNode waiter : client(0).lock(lock).path("waiters")) {
            if (requestId.equals(waiter.path("request_id").asText())) {
                return true;
            }
        }
        return false;
    }

    private static <T> CompletableFuture<T> inThread(String name, java.util.function.Supplier<T> call) {
        CompletableFuture<T> f = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                f.complete(call.get());
            } catch (RuntimeException | Error e) {
                f.completeExceptionally(e);
            }
        }, name);
        t.setDaemon(true);
        t.start();
        return f;
    }

    private static <T> T join(CompletableFuture<T> f) {
        try {
            return f.join();
        } catch (java.util.concurrent.CompletionException e) {
            if (e.getCause() instanceof NotDriven n) {
                throw n;
            }
            throw new NotDriven(String.valueOf(e.getCause()));
        }
    }

    /** Ends the scenario's sessions (closed, or learnt gone), as the workload's threads end theirs. */
    private void close(Tracked a, Tracked b) {
        for (Tracked t : new Tracked[] {a, b}) {
            if (t != null && !t.isGone()) {
                w.abandon(t);
            }
        }
    }

    // ------------------------------------------------------------------ results on disk

    /** Writes the results where the test waits for them (moved into place whole: the file's presence means done). */
    static void write(Path file, List<Result> results) {
        try {
            Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
            JSON.writerWithDefaultPrettyPrinter().writeValue(tmp.toFile(), results);
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("writing " + file, e);
        }
    }

    static List<Result> read(Path file) {
        try {
            return JSON.readValue(file.toFile(), new TypeReference<List<Result>>() { });
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + file, e);
        }
    }
}
