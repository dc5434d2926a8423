package io.warden.it.jepsen;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
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
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The deadlock workload (contract §2.13): groups of sessions that each hold one name and then ask for the next one's,
 * so that they wait for each other in a cycle — two sessions in crossed orders (a then b, b then a), or three (a→b→c→a)
 * — on different gateways, some asking {@code on_deadlock: FAIL} and some {@code WAIT}, run in the random workload
 * under its faults. What each member did is kept as a {@link Group} (its two operations' ids in the history, how it
 * asked, and the cycle of a 409 DEADLOCK answer) for the {@link DeadlockChecker}; the operations themselves go into the
 * history like every other lock's, so the mutex checker holds the members' holds too (a DEADLOCK answer is
 * {@link Op.Outcome#DEADLOCK}: never a grant).
 *
 * <p>A group runs by steps: every member is granted its first name (waiting up to {@link #HOLD_WAIT_MS}; a member not
 * granted ends the group, which then formed no cycle); only then does every member ask, at once, for the next member's
 * name, waiting {@link #FAIL_WAIT_MS} when some member said FAIL (long enough for the cycle to be broken first) and
 * {@link #WAIT_ONLY_WAIT_MS} when all said WAIT (nobody breaks that cycle: each ends by its own wait). Each member then
 * lets go of what it holds (its first name, and the second when it was granted, after a victim let go of it). A step
 * whose answer is unknown gives up that member's session, as the other threads do.
 *
 * <p>In the random part, {@link #LANES} threads run groups one after another, each lane on names of its own
 * ({@code jepsen/dl/<lane>-a}, {@code -b}, {@code -c}), so that the only waits on those names are the group's own, and
 * with clients of its own: member i's prefers gateway {@code i mod gateways} (and fails over from there), so
 * neighbours in a cycle ask different gateways.
 *
 * <p>Concurrency: a lane's groups run on its thread, each member's second step on a thread of its own; groups go to a
 * concurrent queue.
 */
final class DeadlockWorkload {
    /** Lanes of groups in the random part. */
    static final int LANES = 2;
    static final String PREFIX = "jepsen/dl/";
    /** How long a member waits for its first name. */
    static final long HOLD_WAIT_MS = 2_000;
    /** The second wait in a group where some member said FAIL: past the checker's bound, so a cycle left alone shows. */
    static final long FAIL_WAIT_MS = DeadlockChecker.BOUND_MS + 3_000;
    /** The second wait in a group where every member said WAIT: the cycle ends by these waits. */
    static final long WAIT_ONLY_WAIT_MS = 1_500;
    /** A lane client's retry budget, as the workload's other clients'. */
    private static final Duration RETRY_BUDGET = Duration.ofSeconds(8);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One member of a cycle as a 409 DEADLOCK answer reported it: a session, the name it waits for, whom it waits for. */
    record CycleMember(String session, String name, List<String> waitsFor) {
    }

    /**
     * One member of a group: its session, the name it held ({@code holds}, by the operation {@code holdOp}) and the
     * name it then asked for ({@code wants}, by {@code waitOp}, -1 when it never asked) with {@code onDeadlock}; the cycle
     * its 409 DEADLOCK answer reported, if that was its answer.
     */
    record Member(String process, String session, String holds, String wants, String onDeadlock, int holdOp, int waitOp,
                  List<CycleMember> cycle) {
    }

    /** One group: its members in cycle order (member i wants member i+1's name). */
    record Group(String id, List<Member> members) {
        boolean anyFail() {
            return members.stream().anyMatch(m -> "FAIL".equals(m.onDeadlock()));
        }
    }

    private final MutexWorkload w;
    private final ConcurrentLinkedQueue<Group> groups = new ConcurrentLinkedQueue<>();

    DeadlockWorkload(MutexWorkload w) {
        this.w = w;
    }

    /**
     * The lanes' threads, started; each runs groups until {@code until} ({@code System.nanoTime()}) through clients of
     * its own on {@code gateways}.
     */
    List<Thread> start(String prefix, Random seeds, long until, List<java.net.URI> gateways) {
        List<Thread> lanes = new ArrayList<>();
        for (int lane = 0; lane < LANES; lane++) {
            long seed = seeds.nextLong();
            String name = prefix + "-dl" + lane;
            int l = lane;
            java.net.http.HttpClient http = WardenClient.newHttpClient();
            List<WardenClient> clients = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                clients.add(new WardenClient(http, gateways, i, RETRY_BUDGET));
            }
            Thread t = new Thread(() -> lane(name, l, clients, new Random(seed), until), name);
            lanes.add(t);
            t.start();
        }
        return lanes;
    }

    private void lane(String process, int lane, List<WardenClient> clients, Random rnd, long until) {
        List<String> names = List.of(PREFIX + lane + "-a", PREFIX + lane + "-b", PREFIX + lane + "-c");
        Tracked[] sessions = new Tracked[3];
        for (int g = 0; System.nanoTime() - until < 0; g++) {
            int size = 2 + rnd.nextInt(2);
            List<String> onDeadlock = new ArrayList<>();
            boolean waitOnly = rnd.nextInt(3) == 0;
            for (int i = 0; i < size; i++) {
                onDeadlock.add(!waitOnly && rnd.nextBoolean() ? "FAIL" : "WAIT");
            }
            if (!waitOnly && !onDeadlock.contains("FAIL")) {
                onDeadlock.set(rnd.nextInt(size), "FAIL");
            }
            List<Tracked> members = new ArrayList<>();
            for (int i = 0; i < size; i++) {
                if (sessions[i] == null || sessions[i].isGone()) {
                    sessions[i] = w.open(process + "-m" + i, clients.get(i), false);
                }
                members.add(sessions[i]);
            }
            if (members.contains(null)) {
                Await.sleepQuietly(Duration.ofMillis(200));
                continue;
            }
            List<Boolean> usable = cycle(process + "-g" + g, process, names.subList(0, size), onDeadlock, members).usable();
            for (int i = 0; i < size; i++) {
                if (!usable.get(i)) {
                    w.abandon(sessions[i]);
                    sessions[i] = null;
                }
            }
            Await.sleepQuietly(Duration.ofMillis(rnd.nextInt(200)));
        }
        for (Tracked t : sessions) {
            if (t != null) {
                w.abandon(t);
            }
        }
    }

    /** A group as it ran, and per member whether its session is still usable (false: an outcome was unknown, or it is gone). */
    record Ran(Group group, List<Boolean> usable) {
    }

    /**
     * Runs one group: member i (session {@code sessions.get(i)}) holds {@code names.get(i)}, then asks for
     * {@code names.get(i + 1)} (the last for the first) with {@code onDeadlock.get(i)}.
     */
    Ran cycle(String id, String process, List<String> names, List<String> onDeadlock, List<Tracked> sessions) {
        int n = names.size();
        long wait = onDeadlock.contains("FAIL") ? FAIL_WAIT_MS : WAIT_ONLY_WAIT_MS;
        Op[] holds = new Op[n];
        boolean[] usable = new boolean[n];
        java.util.Arrays.fill(usable, true);
        boolean allHeld = true;
        for (int i = 0; i < n && allHeld; i++) {
            holds[i] = acquire(process + "-m" + i, sessions.get(i), names.get(i), HOLD_WAIT_MS, "WAIT");
            allHeld = holds[i].outcome() == Op.Outcome.GRANTED;
            usable[i] = holds[i].outcome() != Op.Outcome.UNKNOWN;
        }
        List<CompletableFuture<Member>> asked = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int k = i;
            String p = process + "-m" + k;
            Tracked s = sessions.get(k);
            if (holds[k] == null || !allHeld) {
                // the group formed no cycle: let go of what was granted
                if (holds[k] != null && holds[k].outcome() == Op.Outcome.GRANTED
                        && !w.release(p, s.client, s, names.get(k), holds[k].token())) {
                    usable[k] = false;
                }
                asked.add(CompletableFuture.completedFuture(new Member(p, s.id, names.get(k), names.get((k + 1) % n),
                        onDeadlock.get(k), holds[k] == null ? -1 : holds[k].id(), -1, null)));
                continue;
            }
            CompletableFuture<Member> f = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                try {
                    f.complete(ask(p, s, names.get(k), names.get((k + 1) % n), onDeadlock.get(k), wait, holds[k], usable, k));
                } catch (RuntimeException | Error e) {
                    usable[k] = false;
                    f.complete(new Member(p, s.id, names.get(k), names.get((k + 1) % n), onDeadlock.get(k),
                            holds[k].id(), -1, null));
                }
            }, p);
            t.setDaemon(true);
            t.start();
            asked.add(f);
        }
        Group group = new Group(id, asked.stream().map(CompletableFuture::join).toList());
        groups.add(group);
        List<Boolean> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(usable[i] && !sessions.get(i).isGone());
        }
        return new Ran(group, out);
    }

    /** A member's second step: asks for {@code wants}, then lets go of what it holds. */
    private Member ask(String process, Tracked s, String holds, String wants, String onDeadlock, long wait, Op hold,
                       boolean[] usable, int k) {
        long call = System.nanoTime();
        Op op;
        List<CycleMember> cycle = null;
        try {
            WardenClient.Acquired a = s.client.acquire(s.id, wants, "EXCLUSIVE", 0, wait, "r-" + UUID.randomUUID(),
                    "CANCEL", onDeadlock);
            long ret = System.nanoTime();
            op = w.record(process, wants, Op.Kind.ACQUIRE, s.id, a.granted() ? a.token() : 0,
                    a.granted() ? Op.Outcome.GRANTED : Op.Outcome.NOT_GRANTED, call, ret, "EXCLUSIVE");
        } catch (SessionNotFoundException e) {
            long ret = System.nanoTime();
            s.gone(ret);
            op = w.record(process, wants, Op.Kind.ACQUIRE, s.id, 0, MutexWorkload.gone(e, wait), call, ret,
                    "EXCLUSIVE");
            usable[k] = false;
        } catch (ProblemException e) {
            long ret = System.nanoTime();
            if ("DEADLOCK".equals(e.code())) {
                // the victim's answer is durable (its record's tombstone): a lost reply and a retry still get it
                cycle = cycle(e.document());
                op = w.record(process, wants, Op.Kind.ACQUIRE, s.id, 0, Op.Outcome.DEADLOCK, call, ret, "EXCLUSIVE");
            } else if (e.ambiguous()) {
                op = w.record(process, wants, Op.Kind.ACQUIRE, s.id, 0, Op.Outcome.UNKNOWN, call, Op.NEVER, "EXCLUSIVE");
                usable[k] = false;
            } else {
                op = w.record(process, wants, Op.Kind.ACQUIRE, s.id, 0, Op.Outcome.NOT_GRANTED, call, ret, "EXCLUSIVE");
            }
        } catch (RuntimeException e) {
            op = w.record(process, wants, Op.Kind.ACQUIRE, s.id, 0, Op.Outcome.UNKNOWN, call, Op.NEVER, "EXCLUSIVE");
            usable[k] = false;
        }
        if (usable[k] && op.outcome() == Op.Outcome.GRANTED && !w.release(process, s.client, s, wants, op.token())) {
            usable[k] = false;
        }
        if (usable[k] && !w.release(process, s.client, s, holds, hold.token())) {
            usable[k] = false;
        }
        return new Member(process, s.id, holds, wants, onDeadlock, hold.id(), op.id(), cycle);
    }

    /** The cycle of a 409 DEADLOCK problem document ({@code cycle.members}). */
    static List<CycleMember> cycle(JsonNode problem) {
        List<CycleMember> members = new ArrayList<>();
        for (JsonNode m : problem.path("cycle").path("members")) {
            List<String> waitsFor = new ArrayList<>();
            m.path("waits_for").forEach(x -> waitsFor.add(x.asText()));
            members.add(new CycleMember(m.path("session_id").asText(), m.path("name").asText(), waitsFor));
        }
        return members;
    }

    private Op acquire(String process, Tracked s, String name, long wait, String onDeadlock) {
        long call = System.nanoTime();
        try {
            WardenClient.Acquired a = s.client.acquire(s.id, name, "EXCLUSIVE", 0, wait, "r-" + UUID.randomUUID(),
                    "CANCEL", onDeadlock);
            return w.record(process, name, Op.Kind.ACQUIRE, s.id, a.granted() ? a.token() : 0,
                    a.granted() ? Op.Outcome.GRANTED : Op.Outcome.NOT_GRANTED, call, System.nanoTime(), "EXCLUSIVE");
        } catch (SessionNotFoundException e) {
            long ret = System.nanoTime();
            s.gone(ret);
            return w.record(process, name, Op.Kind.ACQUIRE, s.id, 0, MutexWorkload.gone(e, wait), call, ret, "EXCLUSIVE");
        } catch (ProblemException e) {
            return w.record(process, name, Op.Kind.ACQUIRE, s.id, 0,
                    e.ambiguous() ? Op.Outcome.UNKNOWN : Op.Outcome.NOT_GRANTED, call,
                    e.ambiguous() ? Op.NEVER : System.nanoTime(), "EXCLUSIVE");
        } catch (RuntimeException e) {
            return w.record(process, name, Op.Kind.ACQUIRE, s.id, 0, Op.Outcome.UNKNOWN, call, Op.NEVER, "EXCLUSIVE");
        }
    }

    List<Group> groups() {
        return List.copyOf(groups);
    }

    static void write(Path file, List<Group> groups) {
        try {
            JSON.writerWithDefaultPrettyPrinter().writeValue(file.toFile(), groups);
        } catch (IOException e) {
            throw new UncheckedIOException("writing " + file, e);
        }
    }

    static List<Group> read(Path file) {
        try {
            return JSON.readValue(file.toFile(), new TypeReference<List<Group>>() { });
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + file, e);
        }
    }
}
