package io.warden.it.jepsen;

import io.warden.it.support.Await;
import io.warden.it.support.ChildProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * The faults of the proof suite, chosen and timed from one seed (the report prints it: the same seed injects the same
 * faults in the same order with the same pauses). Each fault is applied, held for a while, healed, and the cell is
 * given time to recover before the next; {@link #faults} records what ran when, for the report and its timeline.
 *
 * <ul>
 *   <li>{@link Kind#PARTITION_GATEWAY_FROM_ZK}: a one-sided partition — one gateway loses every ZooKeeper link and
 *   keeps its clients, longer than its ZooKeeper session plus a session TTL (the case that once let a session
 *   expire early);</li>
 *   <li>{@link Kind#KILL_GATEWAY}: kill -9 of a gateway, restarted a few seconds later under a new id;</li>
 *   <li>{@link Kind#PAUSE_GATEWAY}: SIGSTOP of a gateway, then SIGCONT;</li>
 *   <li>{@link Kind#KILL_ZK_LEADER} and {@link Kind#KILL_ZK_FOLLOWER}: kill -9 of a ZooKeeper server, restarted;</li>
 *   <li>{@link Kind#ISOLATE_ZK_LEADER} and {@link Kind#ISOLATE_ZK_FOLLOWER}: a server cut from the others' quorum
 *   and election links (a minority partition; for the leader, a new election while the old leader still runs);</li>
 *   <li>{@link Kind#ZK_NO_MAJORITY}: every server cut from every other, so no side of the partition has a majority
 *   and the ensemble serves nobody for a while (the majority lost: no gateway can vouch for a session or write);</li>
 *   <li>{@link Kind#ROLLING_RESTART_GATEWAYS}: every gateway in turn stopped with SIGTERM (it drains and hands its
 *   sessions on), started again under a new id, and awaited before the next;</li>
 *   <li>{@link Kind#LOST_REPLIES}: a client link delivers requests and drops the replies;</li>
 *   <li>{@link Kind#PAUSE_CLIENTS}: SIGSTOP of the workload's JVM for half to twice the session TTL, so keepalives
 *   stop and some sessions expire while they hold; {@link Kind#SHORT_CLIENT_PAUSE}: the same for three quarters of
 *   the TTL, which no session may die of;</li>
 *   <li>{@link Kind#LARGE_LOCK_PILE}: entries piled onto one lock past what the gateways admit and past what they read in
 *   one ZooKeeper reply, read through every gateway (and one time in four a gateway restarted over it), then taken away;
 *   no gateway may lose its ZooKeeper connection over it ({@link LockPile}). A run whose kinds include it starts with
 *   it, so that every such run has one.</li>
 * </ul>
 * {@link #every()} is every kind but the short pause (which shows the expiry checker failing on a gateway with a
 * deliberate bug: any pause below the TTL would, and the long pauses already include some).
 *
 * <p>Concurrency: runs on its own thread; {@link #faults} is a concurrent list.
 */
final class Nemesis implements Runnable {
    enum Kind {
        PARTITION_GATEWAY_FROM_ZK, KILL_GATEWAY, PAUSE_GATEWAY, KILL_ZK_LEADER, KILL_ZK_FOLLOWER, ISOLATE_ZK_LEADER,
        ISOLATE_ZK_FOLLOWER, ZK_NO_MAJORITY, ROLLING_RESTART_GATEWAYS, LOST_REPLIES, PAUSE_CLIENTS,
        /** SIGSTOP of the workload for three quarters of the TTL: a correct cell keeps every session. */
        SHORT_CLIENT_PAUSE,
        /** Entries piled onto one lock past the admission and reading bounds, then taken away ({@link LockPile}). */
        LARGE_LOCK_PILE
    }

    /** One fault: what, on what, from when to when ({@code System.nanoTime()}). */
    record Fault(Kind kind, String target, long start, long end) {
    }

    private final JepsenCell cell;
    private final Random rnd;
    private final List<Kind> kinds;
    private final long ttlMs;
    private final Supplier<List<ChildProcess>> clients;
    private final long until;
    final List<Fault> faults = new CopyOnWriteArrayList<>();
    /** The large-lock fault and what it found. */
    final LockPile pile;
    private volatile Throwable failure;

    Nemesis(JepsenCell cell, long seed, List<Kind> kinds, long ttlMs, Supplier<List<ChildProcess>> clients, long until) {
        this.cell = cell;
        this.rnd = new Random(seed);
        this.kinds = List.copyOf(kinds);
        this.ttlMs = ttlMs;
        this.clients = clients;
        this.until = until;
        this.pile = new LockPile(cell);
    }

    Optional<Throwable> failure() {
        return Optional.ofNullable(failure);
    }

    @Override
    public void run() {
        try {
            boolean first = true;
            while (System.nanoTime() - until < 0 && !kinds.isEmpty()) {
                pause(1000 + rnd.nextInt(3000));
                if (System.nanoTime() - until >= 0) {
                    break;
                }
                inject(first && kinds.contains(Kind.LARGE_LOCK_PILE) ? Kind.LARGE_LOCK_PILE : kinds.get(rnd.nextInt(kinds.size())));
                first = false;
                cell.awaitHealthy(Duration.ofSeconds(90));
            }
        } catch (Throwable t) {
            failure = t;
        } finally {
            pile.close();
        }
    }

    private void inject(Kind kind) {
        int g = rnd.nextInt(cell.gatewayCount());
        long start = System.nanoTime();
        String target;
        switch (kind) {
            case PARTITION_GATEWAY_FROM_ZK -> {
                target = "gw" + (g + 1);
                cell.cutFromZooKeeper(g);
                pause(JepsenCell.ZK_SESSION_TIMEOUT_MS + ttlMs + 2000 + rnd.nextInt(4000));
                cell.healZooKeeperLinks(g);
            }
            case KILL_GATEWAY -> {
                target = cell.gateway(g).gatewayId();
                cell.killGateway(g);
                pause(1000 + rnd.nextInt(4000));
                cell.restartGateway(g);
            }
            case PAUSE_GATEWAY -> {
                target = cell.gateway(g).gatewayId();
                cell.gateway(g).pause();
                pause(1000 + rnd.nextInt((int) (2 * ttlMs)));
                cell.gateway(g).resume();
            }
            case KILL_ZK_LEADER, KILL_ZK_FOLLOWER -> {
                int s = server(kind == Kind.KILL_ZK_LEADER);
                target = "zk" + (s + 1);
                cell.zk.kill(s);
                pause(1000 + rnd.nextInt(4000));
                cell.zk.restart(s);
            }
            case ISOLATE_ZK_LEADER, ISOLATE_ZK_FOLLOWER -> {
                int s = server(kind == Kind.ISOLATE_ZK_LEADER);
                target = "zk" + (s + 1);
                cell.isolateServer(s);
                pause(2000 + rnd.nextInt(6000));
                cell.healQuorumLinks();
            }
            case ZK_NO_MAJORITY -> {
                target = "every server";
                cell.splitEveryServer();
                pause(2000 + rnd.nextInt(6000));
                cell.healQuorumLinks();
            }
            case ROLLING_RESTART_GATEWAYS -> {
                target = "every gateway";
                for (int i = 0; i < cell.gatewayCount(); i++) {
                    cell.restartGatewayGracefully(i);
                    pause(500 + rnd.nextInt(1500));
                }
            }
            case LOST_REPLIES -> {
                target = "client-gw" + (g + 1);
                cell.clientLink(g).dropReplies();
                pause(1000 + rnd.nextInt(3000));
                cell.clientLink(g).heal();
            }
            case PAUSE_CLIENTS, SHORT_CLIENT_PAUSE -> {
                List<ChildProcess> all = clients.get();
                target = "workload";
                all.forEach(ChildProcess::pause);
                pause(kind == Kind.SHORT_CLIENT_PAUSE ? ttlMs * 3 / 4 : ttlMs / 2 + rnd.nextInt((int) (3 * ttlMs / 2)));
                all.forEach(ChildProcess::resume);
            }
            case LARGE_LOCK_PILE -> target = pile.run(rnd);
            default -> throw new IllegalStateException(kind.toString());
        }
        faults.add(new Fault(kind, target, start, System.nanoTime()));
    }

    /** A running server that leads (or follows, for {@code leader} false): waits for a quorum first. */
    private int server(boolean leader) {
        cell.zk.awaitQuorum(Duration.ofSeconds(60));
        int l = cell.zk.leader().orElse(0);
        if (leader) {
            return l;
        }
        List<Integer> followers = new ArrayList<>();
        for (int s = 0; s < cell.zk.size(); s++) {
            if (s != l) {
                followers.add(s);
            }
        }
        return followers.get(rnd.nextInt(followers.size()));
    }

    /** Every kind of fault for a proof run (all but {@link Kind#SHORT_CLIENT_PAUSE}). */
    static List<Kind> every() {
        List<Kind> all = new ArrayList<>(List.of(Kind.values()));
        all.remove(Kind.SHORT_CLIENT_PAUSE);
        return all;
    }

    private static void pause(long ms) {
        Await.sleepQuietly(Duration.ofMillis(ms));
    }
}
