package io.warden.it.jepsen;

import io.warden.it.support.Await;
import io.warden.it.support.WardenClient;
import io.warden.it.support.WardenClient.ProblemException;
import io.warden.it.support.WardenClient.SessionNotFoundException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The mutex workload of the proof suite, as its own JVM (so a nemesis can SIGSTOP it past its sessions' TTL): threads
 * that open a session over plain HTTP, take one of a few EXCLUSIVE locks (waiting a random while), hold it (mostly
 * briefly, one time in ten for up to three TTLs) and release it by its token (half the threads as behind a
 * round-robin load balancer: every call to a gateway picked at random), and record every call as an {@link Op} with {@code System.nanoTime()} around it. Each
 * session's keepalives run on a scheduler every third of its TTL; the send time of the latest one acknowledged is
 * what bounds its expiry from below.
 *
 * <p>What is recorded: an acquire is GRANTED (with its token), REFUSED (a try-lock, {@code wait_ms} 0, answered
 * TIMED_OUT: legal only while the lock is held), NOT_GRANTED (a wait that timed out, a refusal by status, or a try-lock
 * whose session was gone) or UNKNOWN (no gateway answered within the retry budget: it may be queued or granted; or a
 * wait answered 404: it may have held until its session ended, see {@link #gone}); a release RELEASED,
 * NOT_RELEASED, or UNKNOWN when no answer came, or when it said false or 404 after an attempt whose reply was lost
 * (that attempt may have released it; an acquire likewise). After an UNKNOWN the thread closes its session and opens another, so whatever the
 * lost call did ends with the session. Every session ends in one END operation, written at the end of the run:
 * from the earliest moment it may have ended (its close was sent, or its last acknowledged keepalive's send time plus
 * its TTL) to the first moment a gateway said it was gone (404) — or never, if none did. A session seen gone before it
 * could legally have expired is an early expiry: reported in the history's {@code early-expiries} file and counted
 * by the checker, as the contract's §2.3 is broken.
 *
 * <p>One request in {@link #MULTI_EVERY} of a mutex thread asks for several of the locks at once
 * ({@link MultiLockWorkload}; each request also in {@code DIR/multi-PREFIX.json} for the multi-lock liveness checker).
 *
 * <p>Beside the lock workers, the {@link ElectionWorkload}'s candidates campaign in one election through the Java SDK;
 * what they believed and when is written to {@code DIR/election-PREFIX.jsonl} for the election checker. And the
 * {@link DeadlockWorkload}'s lanes run groups of sessions that wait for each other in cycles, each group written to
 * {@code DIR/deadlocks-PREFIX.json} for the deadlock checker.
 *
 * <p>Before all that, the {@link ForcedInterleavings} named by {@code --forced} (comma-separated, or {@code none}) run
 * one after another, and their results are written to {@code DIR/forced-PREFIX.json}; then the random part begins.
 *
 * <p>Usage: {@code MutexWorkload --gateways URL,URL --threads N --locks K --seconds S --ttl-ms T --seed X --out DIR
 * --name PREFIX [--forced SCENARIO,...] [--election-bug BUG]} ({@code BUG}: the candidates' elections are built with
 * that deliberate bug, {@link io.warden.client.BrokenElection}). Writes {@code DIR/history-PREFIX.jsonl}; exit 0 when the run ended as planned.
 *
 * <p>Concurrency: each worker thread owns its sessions' use; a {@link Tracked} session's times are written by its
 * worker and the keepalive scheduler and are atomic or guarded by the instance; ops go to a concurrent list.
 */
public final class MutexWorkload {
    /** One client per worker thread, each preferring gateway {@code thread mod gateways}: two gateways race. */
    final List<WardenClient> clients;
    /** The end of the run's client (its last look at sessions whose end was not seen). */
    private final WardenClient client;
    /** The gateways (their client links), for the SDK clients. */
    private final List<URI> gateways;
    /** The mutex threads' multi-lock requests ({@link MultiLockWorkload}). */
    final MultiLockWorkload multi = new MultiLockWorkload(this);
    /** Sessions that wait for each other in cycles ({@link DeadlockWorkload}). */
    final DeadlockWorkload deadlocks = new DeadlockWorkload(this);
    /** The election's candidates (SDK clients), run beside the lock workers; see {@link ElectionWorkload}. */
    final ElectionWorkload elections;
    /** Threads that take locks through the Java SDK ({@link #sdkWorker}), besides the plain-HTTP ones. */
    private final int sdkThreads;
    private final int locks;
    final long ttlMs;
    private final String name;
    private final Random seeds;
    private final ConcurrentLinkedQueue<Op> ops = new ConcurrentLinkedQueue<>();
    private final AtomicInteger nextId = new AtomicInteger();
    /** Sessions let lapse while they wait (see {@link #worker}). */
    private final AtomicInteger lapses = new AtomicInteger();
    /** Holders that stalled past their TTL before writing (see {@link #worker}). */
    private final AtomicInteger stalls = new AtomicInteger();
    /** Of the lapsed waiters, the ones whose acquire was answered 404: the session expired while the request was queued. */
    private final AtomicInteger lapsedWhileQueued = new AtomicInteger();
    private final Map<String, Tracked> sessions = new ConcurrentHashMap<>();
    /** The fenced counter of each lock (see {@link FencedRegister}), incremented under the lock. */
    final Map<String, FencedRegister> counters = new ConcurrentHashMap<>();
    /**
     * Keepalives, each a blocking call with retries: enough threads that one stuck on an unreachable gateway does not
     * hold up the others' (with two, a ten-minute run saw sessions expire for keepalives never sent).
     */
    private final ScheduledExecutorService keepalives = Executors.newScheduledThreadPool(16, r -> {
        Thread t = new Thread(r, "keepalive");
        t.setDaemon(true);
        return t;
    });

    /** One session of this run: when it may have ended at the earliest, and when a gateway first said it was gone. */
    static final class Tracked {
        final String id;
        final long ttlNanos;
        /** The client of the worker that opened it: its keepalives go the same way as its calls. */
        final WardenClient client;
        /** Whether its calls go to a gateway picked at random each time (see {@link #worker}). */
        final boolean balanced;
        private long lastAckedCall;
        private long closeSent = Long.MAX_VALUE;
        private long goneSeen = Long.MAX_VALUE;
        /** Set when its keepalives are to stop, so that it expires (while queued, as a rule: see {@link #worker}). */
        volatile boolean lapsing;

        Tracked(String id, long ttlMs, long openCall, WardenClient client, boolean balanced) {
            this.id = id;
            this.client = client;
            this.balanced = balanced;
            this.ttlNanos = TimeUnit.MILLISECONDS.toNanos(ttlMs);
            this.lastAckedCall = openCall;
        }

        synchronized void acked(long call) {
            lastAckedCall = Math.max(lastAckedCall, call);
        }

        /** An SDK session: at {@code seen} its client said CONNECTED, so it cannot have expired before then. */
        synchronized void connectedAt(long seen) {
            lastAckedCall = Math.max(lastAckedCall, seen - ttlNanos);
        }

        synchronized void closing(long call) {
            closeSent = Math.min(closeSent, call);
        }

        synchronized void gone(long seen) {
            goneSeen = Math.min(goneSeen, seen);
        }

        synchronized boolean isGone() {
            return goneSeen != Long.MAX_VALUE;
        }

        /** The earliest moment the session may legally have ended. */
        synchronized long earliestEnd() {
            return Math.min(closeSent, lastAckedCall + ttlNanos);
        }

        synchronized long goneSeen() {
            return goneSeen;
        }
    }

    MutexWorkload(List<WardenClient> clients, List<URI> gateways, int sdkThreads, int locks, long ttlMs, String name,
                  long seed, io.warden.client.BrokenElection.Bug electionBug) {
        this.clients = List.copyOf(clients);
        this.gateways = List.copyOf(gateways);
        this.sdkThreads = sdkThreads;
        this.client = clients.get(0);
        this.locks = locks;
        this.ttlMs = ttlMs;
        this.name = name;
        this.seeds = new Random(seed);
        this.elections = new ElectionWorkload(gateways, ttlMs, electionBug);
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new java.util.HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            a.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        List<URI> gateways = Arrays.stream(a.get("gateways").split(",")).map(URI::create).toList();
        HttpClient http = WardenClient.newHttpClient();
        int threads = Integer.parseInt(a.get("threads"));
        List<WardenClient> clients = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            clients.add(new WardenClient(http, gateways, i, Duration.ofSeconds(8)));
        }
        MutexWorkload w = new MutexWorkload(clients, gateways, Integer.parseInt(a.getOrDefault("sdk-threads", "2")),
                Integer.parseInt(a.get("locks")), Long.parseLong(a.get("ttl-ms")), a.get("name"),
                Long.parseLong(a.get("seed")), a.getOrDefault("election-bug", "none").equals("none") ? null
                : io.warden.client.BrokenElection.Bug.valueOf(a.get("election-bug")));
        Path out = Path.of(a.get("out"));
        WatchRecorder watcher = WatchRecorder.start(gateways);
        String forced = a.getOrDefault("forced", "none");
        List<ForcedInterleavings.Scenario> scenarios = forced.equals("none") ? List.of()
                : Arrays.stream(forced.split(",")).map(ForcedInterleavings.Scenario::valueOf).toList();
        // The forced interleavings first, alone: the test starts its nemesis once their results are on disk.
        ForcedInterleavings.write(out.resolve("forced-" + w.name + ".json"),
                new ForcedInterleavings(w, watcher, gateways, http).run(scenarios));
        w.run(threads, Duration.ofSeconds(Long.parseLong(a.get("seconds"))));
        // the watch catches up with the last grant (its events trail the replies), then stops
        long lastToken = w.ops.stream().mapToLong(Op::token).max().orElse(0);
        boolean caughtUp = watcher.awaitRevision(lastToken, Duration.ofSeconds(30));
        watcher.close();
        watcher.write(out.resolve("watch-" + w.name + ".json"));
        if (!caughtUp) {
            System.out.println("the watch did not reach revision " + lastToken + " within 30 s of the end");
        }
        List<String> early = w.finish();
        List<Op> ops = w.bounded(new ArrayList<>(w.ops));
        ops.sort(java.util.Comparator.comparingInt(Op::id));
        History.write(out.resolve("history-" + w.name + ".jsonl"), ops);
        java.nio.file.Files.write(out.resolve("early-expiries-" + w.name + ".txt"), early);
        w.elections.write(out.resolve("election-" + w.name + ".jsonl"));
        MultiLockWorkload.write(out.resolve("multi-" + w.name + ".json"), w.multi.requests());
        DeadlockWorkload.write(out.resolve("deadlocks-" + w.name + ".json"), w.deadlocks.groups());
        Map<String, FencedRegister.Summary> counted = new java.util.TreeMap<>();
        w.counters.forEach((lock, register) -> counted.put(lock, register.summary()));
        new com.fasterxml.jackson.databind.ObjectMapper().writerWithDefaultPrettyPrinter()
                .writeValue(out.resolve("counters-" + w.name + ".json").toFile(), counted);
        System.out.printf("workload %s: %d operations, %d sessions (%d let lapse while waiting, %d of them expired while"
                + " queued; %d holders stalled past their TTL), %d early expiries%n", w.name, w.ops.size(),
                w.sessions.size(), w.lapses.get(), w.lapsedWhileQueued.get(), w.stalls.get(), early.size());
        System.exit(0);
    }

    void run(int threads, Duration duration) throws InterruptedException {
        long until = System.nanoTime() + duration.toNanos();
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < RW_THREADS; i++) {
            long seed = seeds.nextLong();
            String process = name + "-rw-" + i;
            WardenClient mine = clients.get(i % clients.size());
            Thread t = new Thread(() -> rwWorker(process, mine, new Random(seed), until), process);
            workers.add(t);
            t.start();
        }
        for (int i = 0; i < SEM_THREADS; i++) {
            long seed = seeds.nextLong();
            String process = name + "-sem-" + i;
            WardenClient mine = clients.get((i + RW_THREADS) % clients.size());
            Thread t = new Thread(() -> semWorker(process, mine, new Random(seed), until), process);
            workers.add(t);
            t.start();
        }
        for (int i = 0; i < sdkThreads; i++) {
            long seed = seeds.nextLong();
            String process = name + "-sdk-" + i;
            Thread t = new Thread(() -> sdkWorker(process, new Random(seed), until), process);
            workers.add(t);
            t.start();
        }
        for (int i = 0; i < threads; i++) {
            long seed = seeds.nextLong();
            String process = name + "-" + i;
            WardenClient mine = clients.get(i % clients.size());
            boolean balanced = i % 2 == 1;
            Thread t = new Thread(() -> worker(process, mine, balanced, new Random(seed), until), process);
            workers.add(t);
            t.start();
        }
        // the candidates last: the lock workers' seeds stay what they were before the election workload
        workers.addAll(elections.start(name, seeds, until));
        workers.addAll(deadlocks.start(name, seeds, until, gateways));
        for (Thread t : workers) {
            t.join();
        }
        liveness(threads);
    }

    /** How long a waiter may wait in the liveness round (its {@code wait_ms}); the checker's bound is less. */
    static final long LIVENESS_WAIT_MS = 20_000;
    /** Process names of the liveness round's calls: {@code liveness-<i>}. */
    static final String LIVENESS = "liveness-";

    /**
     * The liveness round, once the faults are over (the nemesis stops five seconds before the workload): every thread,
     * at once, opens a session and acquires lock {@code i mod locks} with a long wait, holds it briefly and releases
     * it, so on each lock some wait for others; and two clients ask for the first two locks at once, as multi-lock
     * requests in crossed orders ({@link MultiLockWorkload#livenessClient}). The checker wants every one granted within
     * its bound.
     */
    private void liveness(int threads) throws InterruptedException {
        List<Thread> round = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            String process = LIVENESS + i;
            WardenClient mine = clients.get(i % clients.size());
            String lock = "jepsen/l" + (i % locks);
            Thread t = new Thread(() -> {
                Tracked session = null;
                for (int attempt = 0; attempt < 60 && session == null; attempt++) {
                    session = open(process, mine, false);
                    if (session == null) {
                        Await.sleepQuietly(Duration.ofMillis(500));
                    }
                }
                if (session == null) {
                    record(process, lock, Op.Kind.ACQUIRE, "none", 0, Op.Outcome.NOT_GRANTED, System.nanoTime(),
                            System.nanoTime());
                    return;
                }
                long call = System.nanoTime();
                try {
                    WardenClient.Acquired a = mine.acquire(session.id, lock, "EXCLUSIVE", LIVENESS_WAIT_MS,
                            "r-" + UUID.randomUUID(), "CANCEL");
                    long ret = System.nanoTime();
                    record(process, lock, Op.Kind.ACQUIRE, session.id, a.granted() ? a.token() : 0,
                            a.granted() ? Op.Outcome.GRANTED : Op.Outcome.NOT_GRANTED, call, ret);
                    if (a.granted()) {
                        Await.sleepQuietly(Duration.ofMillis(200));
                        release(process, mine, session, lock, a.token());
                    }
                } catch (SessionNotFoundException e) {
                    long ret = System.nanoTime();
                    session.gone(ret);
                    record(process, lock, Op.Kind.ACQUIRE, session.id, 0, gone(e, LIVENESS_WAIT_MS), call, ret);
                } catch (RuntimeException e) {
                    record(process, lock, Op.Kind.ACQUIRE, session.id, 0, Op.Outcome.UNKNOWN, call, Op.NEVER);
                }
                abandon(session);
            }, process);
            round.add(t);
            t.start();
        }
        // Two multi-lock clients too, on the first two locks in crossed orders (one transaction each: never a cycle).
        for (int i = 0; locks >= 2 && i < 2; i++) {
            String process = LIVENESS + "multi-round-" + i;
            WardenClient mine = clients.get(i % clients.size());
            List<String> names = i == 0 ? List.of("jepsen/l0", "jepsen/l1") : List.of("jepsen/l1", "jepsen/l0");
            Thread t = new Thread(() -> multi.livenessClient(process, mine, names, LIVENESS_WAIT_MS), process);
            round.add(t);
            t.start();
        }
        for (Thread t : round) {
            t.join();
        }
    }

    /**
     * One client thread. {@code balanced}: as behind a round-robin load balancer, each call (keepalives too) goes to a
     * gateway picked at random, so a session's keepalives land on both gateways by turns (the contract lets clients
     * talk to any gateway at any time); otherwise calls stay on one gateway until it fails.
     */
    private void worker(String process, WardenClient client, boolean balanced, Random rnd, long until) {
        Tracked session = null;
        while (System.nanoTime() - until < 0) {
            if (balanced) {
                client.prefer(rnd.nextInt(1 << 16));
            }
            if (session == null || session.isGone()) {
                session = open(process, client, balanced);
                if (session == null) {
                    Await.sleepQuietly(Duration.ofMillis(200));
                    continue;
                }
            }
            if (locks >= 2 && rnd.nextInt(MULTI_EVERY) == 0) {
                // A multi-lock request on two or three of the same locks, mixed with the one-name ones.
                long wait = rnd.nextInt(4) == 0 ? 0 : rnd.nextInt((int) MultiLockWorkload.MAX_WAIT_MS);
                if (!multi.holdMany(process, client, session, MultiLockWorkload.pick(rnd, locks), wait, rnd, balanced)) {
                    abandon(session);
                    session = null;
                }
                continue;
            }
            String lock = "jepsen/l" + rnd.nextInt(locks);
            long waitMs = rnd.nextInt(4) == 0 ? 0 : rnd.nextInt(1500);
            if (rnd.nextInt(30) == 0) {
                // A waiter whose session expires while it is queued: its keepalives stop, and it waits three TTLs
                // for a lock the other threads keep busy. It must never be granted after its session ended.
                session.lapsing = true;
                lapses.incrementAndGet();
                waitMs = 3 * ttlMs;
            }
            long call = System.nanoTime();
            Op.Outcome outcome;
            long token = 0;
            long ret;
            try {
                WardenClient.Acquired acquired = client.acquire(session.id, lock, "EXCLUSIVE", waitMs,
                        "r-" + UUID.randomUUID(), "CANCEL");
                ret = System.nanoTime();
                if (acquired.granted()) {
                    outcome = Op.Outcome.GRANTED;
                    token = acquired.token();
                } else {
                    outcome = waitMs == 0 ? Op.Outcome.REFUSED : Op.Outcome.NOT_GRANTED;
                }
            } catch (SessionNotFoundException e) {
                ret = System.nanoTime();
                session.gone(ret);
                outcome = gone(e, waitMs);
                if (session.lapsing) {
                    lapsedWhileQueued.incrementAndGet();
                }
            } catch (ProblemException e) {
                ret = System.nanoTime();
                if (e.ambiguous()) { // an earlier attempt may have queued or been granted
                    record(process, lock, Op.Kind.ACQUIRE, session.id, 0, Op.Outcome.UNKNOWN, call, Op.NEVER);
                    abandon(session);
                    session = null;
                    continue;
                }
                outcome = Op.Outcome.NOT_GRANTED; // a 4xx verdict: nothing was done
            } catch (RuntimeException e) {
                record(process, lock, Op.Kind.ACQUIRE, session.id, 0, Op.Outcome.UNKNOWN, call, Op.NEVER);
                abandon(session);
                session = null;
                continue;
            }
            record(process, lock, Op.Kind.ACQUIRE, session.id, token, outcome, call, ret);
            if (outcome != Op.Outcome.GRANTED) {
                if (session.lapsing) {
                    abandon(session); // it expired while it waited, as a rule; if not, it ends now
                    session = null;
                }
                continue;
            }
            // The fenced counter: read at the start of the hold, write the value plus one at its end.
            FencedRegister counter = counters.computeIfAbsent(lock, k -> new FencedRegister());
            long read = counter.read(token);
            // Mostly short holds; one in ten lasts up to three TTLs, so some sessions do nothing but keep alive for a
            // while (a gateway cut off from ZooKeeper that still acknowledged those let them expire early: the one-sided
            // partition bug in RELIABILITY.md).
            // One hold in fifteen stalls, as a holder in a long GC pause: its keepalives stop and it writes three TTLs
            // later, after its session expired and a successor was granted the lock. The fence must refuse it.
            boolean stall = rnd.nextInt(15) == 0;
            if (stall) {
                session.lapsing = true;
                stalls.incrementAndGet();
            }
            Await.sleepQuietly(Duration.ofMillis(stall ? 3 * ttlMs
                    : rnd.nextInt(10) == 0 ? 500 + rnd.nextInt((int) (3 * ttlMs)) : rnd.nextInt(200)));
            if (read >= 0) {
                counter.writeAndAcknowledge(token, read + 1);
            }
            if (balanced) {
                client.prefer(rnd.nextInt(1 << 16));
            }
            if (!release(process, client, session, lock, token) || session.lapsing) {
                abandon(session);
                session = null;
            }
        }
        if (session != null) {
            abandon(session);
        }
    }

    /** One request in this many of a mutex thread is a multi-lock request ({@link MultiLockWorkload}). */
    static final int MULTI_EVERY = 4;

    /** Threads of the shared-runs workload ({@link #rwWorker}) on {@link #RW_LOCK}. */
    static final int RW_THREADS = 4;
    /** The lock of the shared-runs workload: readers and writers, checked by {@link FifoChecker}. */
    static final String RW_LOCK = "jepsen/rw";
    /** Threads of the semaphore workload ({@link #semWorker}) on {@link #SEM_LOCK}. */
    static final int SEM_THREADS = 3;
    /** The semaphore of the semaphore workload, of {@link #SEM_PERMITS}, checked by {@link FencedSemaphore}. */
    static final String SEM_LOCK = "jepsen/sem";
    static final int SEM_PERMITS = 2;

    /**
     * A semaphore thread (plain HTTP, one gateway until it fails): on {@link #SEM_LOCK}, three threads for two permits,
     * it tries (one time in three: {@code wait_ms} 0, a refusal recorded as REFUSED) or waits up to 4 s, holds briefly
     * and releases.
     */
    private void semWorker(String process, WardenClient client, Random rnd, long until) {
        holdAndRelease(process, client, rnd, until, SEM_LOCK, r -> "SEMAPHORE", SEM_PERMITS,
                r -> r.nextInt(3) == 0 ? 0L : 4000L);
    }

    /**
     * A reader-or-writer thread (plain HTTP, one gateway until it fails): on {@link #RW_LOCK} it asks SHARED two times
     * in three and EXCLUSIVE otherwise, waiting up to 4 s, holds briefly and releases; queues form, with readers
     * behind writers.
     */
    private void rwWorker(String process, WardenClient client, Random rnd, long until) {
        holdAndRelease(process, client, rnd, until, RW_LOCK, r -> r.nextInt(3) == 0 ? "EXCLUSIVE" : "SHARED", 0,
                r -> 4000L);
    }

    /**
     * The loop of the readers-and-writers and semaphore threads: on {@code lock}, acquire in the mode {@code mode}
     * picks (with {@code permits} for a semaphore), waiting {@code waitMs} (0: a try, whose refusal is recorded as
     * REFUSED), hold under 150 ms, release by token. An unknown outcome ends its session, as for the mutex threads.
     */
    private void holdAndRelease(String process, WardenClient client, Random rnd, long until, String lock,
                                java.util.function.Function<Random, String> mode, int permits,
                                java.util.function.ToLongFunction<Random> waitMs) {
        Tracked session = null;
        while (System.nanoTime() - until < 0) {
            if (session == null || session.isGone()) {
                session = open(process, client, false);
                if (session == null) {
                    Await.sleepQuietly(Duration.ofMillis(200));
                    continue;
                }
            }
            String m = mode.apply(rnd);
            long wait = waitMs.applyAsLong(rnd);
            long call = System.nanoTime();
            long token = 0;
            Op.Outcome outcome;
            long ret;
            try {
                WardenClient.Acquired a = client.acquire(session.id, lock, m, permits, wait, "r-" + UUID.randomUUID(),
                        "CANCEL");
                ret = System.nanoTime();
                outcome = a.granted() ? Op.Outcome.GRANTED : wait == 0 ? Op.Outcome.REFUSED : Op.Outcome.NOT_GRANTED;
                token = a.granted() ? a.token() : 0;
            } catch (SessionNotFoundException e) {
                ret = System.nanoTime();
                session.gone(ret);
                outcome = gone(e, wait);
            } catch (ProblemException e) {
                ret = System.nanoTime();
                if (e.ambiguous()) { // an earlier attempt may have queued or been granted
                    record(process, lock, Op.Kind.ACQUIRE, session.id, 0, Op.Outcome.UNKNOWN, call, Op.NEVER, m);
                    abandon(session);
                    session = null;
                    continue;
                }
                outcome = Op.Outcome.NOT_GRANTED;
            } catch (RuntimeException e) {
                record(process, lock, Op.Kind.ACQUIRE, session.id, 0, Op.Outcome.UNKNOWN, call, Op.NEVER, m);
                abandon(session);
                session = null;
                continue;
            }
            record(process, lock, Op.Kind.ACQUIRE, session.id, token, outcome, call, ret, m);
            if (outcome != Op.Outcome.GRANTED) {
                continue;
            }
            Await.sleepQuietly(Duration.ofMillis(rnd.nextInt(150)));
            if (!release(process, client, session, lock, token)) {
                abandon(session);
                session = null;
            }
        }
        if (session != null) {
            abandon(session);
        }
    }

    /**
     * A client thread on the Java SDK ({@code io.warden.client.WardenClient}: its own session, heartbeats, retries and
     * fail-over over every gateway). Its acquires and releases go into the history like the others'; its session's
     * earliest legal end is the last moment its client said {@link io.warden.client.SessionState#CONNECTED} (sampled
     * every 50 ms: the SDK promises the service cannot have expired the session before its local deadline), so the
     * expiry checker holds the SDK to that promise. An exception other than a timeout or a lost session makes the call's
     * outcome unknown; the thread then closes that client and makes another.
     */
    private void sdkWorker(String process, Random rnd, long until) {
        while (System.nanoTime() - until < 0) {
            long openCall = System.nanoTime();
            io.warden.client.WardenClient sdk;
            try {
                sdk = io.warden.client.WardenClient.builder()
                        .endpoints(gateways.stream().map(URI::toString).toArray(String[]::new))
                        .clientId(process).sessionTtl(Duration.ofMillis(ttlMs)).build();
            } catch (RuntimeException e) {
                Await.sleepQuietly(Duration.ofMillis(200));
                continue;
            }
            Tracked session = new Tracked(sdk.sessionId(), sdk.sessionTtl().toMillis(), openCall, client, false);
            sessions.put(session.id, session);
            sample(session, sdk);
            try {
                sdkHolds(process, sdk, session, rnd, until);
            } finally {
                session.closing(System.nanoTime());
                try {
                    sdk.close(); // closes the session when a gateway answers; finish() looks again
                } catch (RuntimeException e) {
                    // closed as far as this client goes; the session ends by expiry
                }
            }
        }
    }

    /** Every 50 ms while the SDK client lives: when it says CONNECTED, the session cannot have expired yet. */
    private void sample(Tracked t, io.warden.client.WardenClient sdk) {
        long before = System.nanoTime();
        io.warden.client.SessionState state = sdk.state();
        switch (state) {
            case CONNECTED -> t.connectedAt(before);
            case LOST -> {
                t.gone(System.nanoTime());
                return;
            }
            case CLOSED -> {
                return;
            }
            default -> { }
        }
        try {
            keepalives.schedule(() -> sample(t, sdk), 50, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // the run is over
        }
    }

    /** The SDK thread's loop over one client; returns when the client is no longer usable or the run is over. */
    private void sdkHolds(String process, io.warden.client.WardenClient sdk, Tracked session, Random rnd, long until) {
        while (System.nanoTime() - until < 0) {
            String lock = "jepsen/l" + rnd.nextInt(locks);
            long waitMs = rnd.nextInt(4) == 0 ? 0 : rnd.nextInt(1500);
            long call = System.nanoTime();
            io.warden.client.Hold hold;
            try {
                hold = sdk.lock(lock).acquire(Duration.ofMillis(waitMs));
            } catch (io.warden.client.AcquireTimeoutException e) {
                record(process, lock, Op.Kind.ACQUIRE, session.id, 0, Op.Outcome.NOT_GRANTED, call, System.nanoTime());
                continue;
            } catch (io.warden.client.SessionLostException e) {
                // Lost while it waited: it may have held in between (see gone).
                long ret = System.nanoTime();
                session.gone(ret);
                record(process, lock, Op.Kind.ACQUIRE, session.id, 0,
                        waitMs > 0 ? Op.Outcome.UNKNOWN : Op.Outcome.NOT_GRANTED, call, ret);
                return;
            } catch (RuntimeException e) {
                record(process, lock, Op.Kind.ACQUIRE, session.id, 0, Op.Outcome.UNKNOWN, call, Op.NEVER);
                return;
            }
            long ret = System.nanoTime();
            long token = hold.token();
            record(process, lock, Op.Kind.ACQUIRE, session.id, token, Op.Outcome.GRANTED, call, ret);
            FencedRegister counter = counters.computeIfAbsent(lock, k -> new FencedRegister());
            long read = counter.read(token);
            Await.sleepQuietly(Duration.ofMillis(rnd.nextInt(200)));
            if (read >= 0) {
                counter.writeAndAcknowledge(token, read + 1);
            }
            long releaseCall = System.nanoTime();
            try {
                hold.release();
                long releaseRet = System.nanoTime();
                // release() returns also when it could not be sure (a retried release answered false, or it goes on in
                // the background). CONNECTED now means the session was alive all along, and nothing but this thread
                // ends its grants: so it held the lock when it released, and the release is done or on its way (its
                // effect may come after this moment, which only delays other grants). Otherwise: unknown.
                if (sdk.state() == io.warden.client.SessionState.CONNECTED) {
                    record(process, lock, Op.Kind.RELEASE, session.id, token, Op.Outcome.RELEASED, releaseCall, releaseRet);
                } else {
                    record(process, lock, Op.Kind.RELEASE, session.id, token, Op.Outcome.UNKNOWN, releaseCall, Op.NEVER);
                    return;
                }
            } catch (io.warden.client.LockOwnershipLostException e) {
                record(process, lock, Op.Kind.RELEASE, session.id, token, Op.Outcome.NOT_RELEASED, releaseCall,
                        System.nanoTime());
                return; // lost: the session may be gone; a new client
            } catch (RuntimeException e) {
                record(process, lock, Op.Kind.RELEASE, session.id, token, Op.Outcome.UNKNOWN, releaseCall, Op.NEVER);
                return;
            }
        }
    }

    /**
     * What a 404 for the session says of the acquire it answered, which waited up to {@code waitMs}: NOT_GRANTED for a
     * try-lock that reached a gateway once (decided in one step, it did nothing once its session was gone). UNKNOWN
     * otherwise, until the session was seen gone: an earlier attempt whose reply was lost may have acted while the
     * session lived, and a request that waited was queued while it lived and may have held — granted in ZooKeeper on a
     * gateway that could not say so in time (paused, cut off), then released by the session's expiry, which is what
     * the 404 reports.
     */
    static Op.Outcome gone(SessionNotFoundException e, long waitMs) {
        return e.ambiguous() || waitMs > 0 ? Op.Outcome.UNKNOWN : Op.Outcome.NOT_GRANTED;
    }

    /** Releases by token; false when the outcome is unknown (the caller then gives up the session). */
    boolean release(String process, WardenClient client, Tracked session, String lock, long token) {
        long call = System.nanoTime();
        try {
            WardenClient.Released r = client.release(session.id, lock, token);
            long ret = System.nanoTime();
            if (!r.released() && r.ambiguous()) {
                record(process, lock, Op.Kind.RELEASE, session.id, token, Op.Outcome.UNKNOWN, call, Op.NEVER);
                return false;
            }
            record(process, lock, Op.Kind.RELEASE, session.id, token,
                    r.released() ? Op.Outcome.RELEASED : Op.Outcome.NOT_RELEASED, call, ret);
            return true;
        } catch (SessionNotFoundException e) {
            long ret = System.nanoTime();
            session.gone(ret);
            if (e.ambiguous()) { // an earlier attempt may have released it before the session ended
                record(process, lock, Op.Kind.RELEASE, session.id, token, Op.Outcome.UNKNOWN, call, ret);
                return false;
            }
            record(process, lock, Op.Kind.RELEASE, session.id, token, Op.Outcome.NOT_RELEASED, call, ret);
            return true;
        } catch (RuntimeException e) {
            record(process, lock, Op.Kind.RELEASE, session.id, token, Op.Outcome.UNKNOWN, call, Op.NEVER);
            return false;
        }
    }

    Tracked open(String process, WardenClient client, boolean balanced) {
        return open(process, client, balanced, true);
    }

    /** {@code keptAlive} false: no keepalives are scheduled; the caller sends its own ({@link ForcedInterleavings}). */
    Tracked open(String process, WardenClient client, boolean balanced, boolean keptAlive) {
        long call = System.nanoTime();
        try {
            WardenClient.Session s = client.openSession(process, ttlMs);
            Tracked t = new Tracked(s.id(), s.ttlMs(), call, client, balanced);
            sessions.put(t.id, t);
            if (keptAlive) {
                long every = Math.max(100, s.ttlMs() / 3);
                keepalives.schedule(() -> keepalive(t, every), every, TimeUnit.MILLISECONDS);
            }
            return t;
        } catch (RuntimeException e) {
            return null; // no gateway, or refused: try again soon (an open that did happen expires unused)
        }
    }

    private void keepalive(Tracked t, long everyMs) {
        if (t.isGone() || t.lapsing) {
            return;
        }
        if (t.balanced) {
            t.client.prefer(java.util.concurrent.ThreadLocalRandom.current().nextInt(1 << 16));
        }
        long call = System.nanoTime();
        try {
            t.client.keepalive(t.id);
            t.acked(call);
        } catch (SessionNotFoundException e) {
            t.gone(System.nanoTime());
            return;
        } catch (RuntimeException e) {
            // unknown: it may have been accepted, which only makes a legal expiry later
        }
        keepalives.schedule(() -> keepalive(t, everyMs), everyMs, TimeUnit.MILLISECONDS);
    }

    /** Closes the session (whatever an unknown call left behind ends with it), or learns that it is gone. */
    void abandon(Tracked t) {
        long call = System.nanoTime();
        t.closing(call);
        try {
            t.client.closeSession(t.id);
            t.gone(System.nanoTime());
        } catch (SessionNotFoundException e) {
            t.gone(System.nanoTime());
        } catch (RuntimeException e) {
            // not closed now: it expires, and finish() looks again
        }
    }

    /** Ends every session and writes its END; returns the early expiries seen (contract §2.3), one line each. */
    List<String> finish() {
        keepalives.shutdownNow();
        List<String> early = new ArrayList<>();
        for (Tracked t : sessions.values()) {
            if (!t.isGone()) {
                abandon(t);
            }
            if (!t.isGone()) {
                // a gateway may answer again: look a few times (an expiry needs its TTL, and maybe an adoption)
                for (int i = 0; i < 20 && !t.isGone(); i++) {
                    try {
                        client.session(t.id);
                        abandon(t);
                    } catch (SessionNotFoundException e) {
                        t.gone(System.nanoTime());
                    } catch (RuntimeException e) {
                        Await.sleepQuietly(Duration.ofMillis(500));
                    }
                }
            }
            long earliest = t.earliestEnd();
            long seen = t.goneSeen();
            if (seen < earliest) {
                early.add("session " + t.id + " was gone " + TimeUnit.NANOSECONDS.toMillis(earliest - seen)
                        + " ms before it could legally have expired (ttl " + TimeUnit.NANOSECONDS.toMillis(t.ttlNanos) + " ms)");
                record("end", "*", Op.Kind.END, t.id, 0, Op.Outcome.ENDED, seen, seen);
            } else {
                record("end", "*", Op.Kind.END, t.id, 0, Op.Outcome.ENDED, earliest, seen == Long.MAX_VALUE ? Op.NEVER : seen);
            }
        }
        return early;
    }

    /**
     * The operations with each unknown outcome bounded by the moment its session was seen gone: nothing of a session
     * takes effect after it ended, and an operation left open to the end of time would be concurrent with everything
     * after it (a ten-minute history with a dozen of them took the checker past its budget).
     */
    List<Op> bounded(List<Op> all) {
        List<Op> out = new ArrayList<>(all.size());
        for (Op op : all) {
            Tracked t = op.outcome() == Op.Outcome.UNKNOWN && op.ret() == Op.NEVER ? sessions.get(op.session()) : null;
            long gone = t == null ? Long.MAX_VALUE : t.goneSeen();
            out.add(gone == Long.MAX_VALUE || gone < op.call() ? op
                    : new Op(op.id(), op.process(), op.key(), op.kind(), op.session(), op.token(), op.outcome(), op.call(), gone,
                    op.mode()));
        }
        return out;
    }

    private void record(String process, String key, Op.Kind kind, String session, long token, Op.Outcome outcome,
                        long call, long ret) {
        ops.add(new Op(nextId.getAndIncrement(), process, key, kind, session, token, outcome, call, ret));
    }

    /** The operation of the history with {@code id}; throws if there is none. */
    Op op(int id) {
        return ops.stream().filter(o -> o.id() == id).findFirst().orElseThrow();
    }

    /** Records an operation in the history; returns it. */
    Op record(String process, String key, Op.Kind kind, String session, long token, Op.Outcome outcome,
              long call, long ret, String mode) {
        Op op = new Op(nextId.getAndIncrement(), process, key, kind, session, token, outcome, call, ret, mode);
        ops.add(op);
        return op;
    }
}
