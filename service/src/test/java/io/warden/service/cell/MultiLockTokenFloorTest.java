package io.warden.service.cell;

import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.AcquireResult.Status;
import io.warden.service.api.LockName;
import io.warden.service.api.Mode;
import io.warden.service.api.MultiAcquireRequest;
import io.warden.service.api.MultiAcquireResult;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.Warden;
import io.warden.service.config.ConfigLoader;
import io.warden.service.queue.QueueEntry;
import io.warden.service.support.WardenFixture;
import io.warden.service.support.ZkCutProxy;
import io.warden.service.zk.CellPaths;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The token floor (contract §1: token = czxid + the floor of the name's cell) for multi-lock requests: each of a
 * grant's tokens, one per name, is its entry's czxid plus the floor in force when the request was made — above the
 * floor for a request made after a raise, whichever way the grant is answered (at once, after a wait, to a resend at
 * another gateway, at a gateway that was cut off during the raise) — and a request made before a raise keeps its
 * tokens.
 */
class MultiLockTokenFloorTest {
    private static final long FLOOR = 1L << 40;

    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    private static MultiAcquireRequest multi(String session, String requestId, long waitMs, String... names) {
        List<LockName> ns = new ArrayList<>();
        for (String n : names) {
            ns.add(LockName.parse(n));
        }
        return new MultiAcquireRequest(session, ns, Mode.EXCLUSIVE, waitMs, requestId, OnTimeout.CANCEL);
    }

    private static MultiAcquireResult joinAll(CompletableFuture<MultiAcquireResult> f) {
        return f.orTimeout(30, TimeUnit.SECONDS).join();
    }

    /** The czxid of the request's entry on {@code name}, as ZooKeeper has it. */
    private long czxidOf(String session, String requestId, String name) throws Exception {
        String uuid = CellPaths.requestUuid(session, requestId);
        String node = fx.queue(name).stream()
                .filter(n -> QueueEntry.parse(n).map(e -> e.id().equals(uuid)).orElse(false))
                .findFirst().orElseThrow(() -> new AssertionError("no entry of " + requestId + " on " + name));
        return fx.curator.checkExists().forPath(WardenFixture.lockPath(name) + "/" + node).getCzxid();
    }

    /**
     * Every name's token is its entry's czxid plus {@code floor}, and every gateway reports it so: the lock's holder and
     * {@code check} (contract §3).
     */
    private void assertTokens(MultiAcquireResult r, String session, String requestId, long floor, List<Warden> gateways,
                              String... names) throws Exception {
        assertThat(r.status()).isEqualTo(Status.GRANTED);
        assertThat(r.tokens()).containsOnlyKeys(names);
        for (String name : names) {
            long token = r.tokens().get(name);
            assertThat(token).as("the token of %s", name).isEqualTo(czxidOf(session, requestId, name) + floor);
            for (Warden w : gateways) {
                LockName n = LockName.parse(name);
                assertThat(w.lock(n).join().holders()).singleElement()
                        .satisfies(h -> assertThat(h.token()).as("the holder's token of %s", name).isEqualTo(token));
                assertThat(w.check(n, token).join().current()).as("check of %s", name).isTrue();
            }
        }
    }

    @Test
    void aRaise_putsEveryTokenOfEveryLaterMultiLockGrantAboveIt_andKeepsTheTokensOfTheRequestsBefore() throws Exception {
        Gateway first = fx.gateway();
        Gateway second = fx.gateway();
        Warden w1 = first.warden();
        Warden w2 = second.warden();
        List<Warden> both = List.of(w1, w2);
        String s = session(w1, "client", 60_000);
        String other = session(w2, "other", 60_000);

        MultiAcquireResult before = joinAll(w1.acquireAll(multi(s, "before", 0, "fl/a", "fl/b")));
        assertTokens(before, s, "before", 0, both, "fl/a", "fl/b");
        // A request made before the raise and still waiting for fl/w: its tokens are fixed when it is made.
        AcquireResult wHeld = join(w2.acquire(exclusive(other, "fl/w", 0)));
        CompletableFuture<MultiAcquireResult> madeBefore = w1.acquireAll(multi(s, "waiting-before", 60_000, "fl/v", "fl/w"));
        WardenFixture.await("the request queued", () -> fx.queueSize("fl/w") == 2);

        raise("--to", Long.toString(FLOOR));
        WardenFixture.await("both gateways to know the raise", () -> first.cellGuard().tokens().current() == FLOOR
                && second.cellGuard().tokens().current() == FLOOR);

        // The grant made before keeps its tokens, everywhere; so does the request that waited through the raise.
        assertTokens(before, s, "before", 0, both, "fl/a", "fl/b");
        assertThat(w2.release(other, LockName.parse("fl/w"), wHeld.token()).join()).isTrue();
        assertTokens(joinAll(madeBefore), s, "waiting-before", 0, both, "fl/v", "fl/w");

        // Made after the raise: granted at once, at either gateway.
        MultiAcquireResult after = joinAll(w2.acquireAll(multi(s, "after", 0, "fl/c", "fl/d", "fl/e")));
        assertTokens(after, s, "after", FLOOR, both, "fl/c", "fl/d", "fl/e");
        assertThat(after.tokens().values()).allSatisfy(t -> assertThat(t).isGreaterThan(FLOOR));

        // Its resend at the other gateway (the request found, not made) answers the same tokens.
        MultiAcquireResult resent = joinAll(w1.acquireAll(multi(s, "after", 0, "fl/e", "fl/d", "fl/c")));
        assertThat(resent.tokens()).isEqualTo(after.tokens());

        // Granted after a wait, on names whose earlier grants had tokens below the floor.
        assertThat(w1.releaseRequest(s, "before").join()).isTrue();
        AcquireResult bHeld = join(w2.acquire(exclusive(other, "fl/b", 0)));
        assertThat(bHeld.token()).isGreaterThan(FLOOR);
        CompletableFuture<MultiAcquireResult> waited = w1.acquireAll(multi(s, "waited", 60_000, "fl/a", "fl/b"));
        WardenFixture.await("the request queued", () -> fx.queueSize("fl/b") == 2);
        assertThat(w2.release(other, LockName.parse("fl/b"), bHeld.token()).join()).isTrue();
        MultiAcquireResult granted = joinAll(waited);
        assertTokens(granted, s, "waited", FLOOR, both, "fl/a", "fl/b");
        for (Map.Entry<String, Long> t : before.tokens().entrySet()) {
            assertThat(granted.tokens().get(t.getKey())).as("the token of %s, after its grant before the raise", t.getKey())
                    .isGreaterThan(t.getValue() + FLOOR);
        }
        assertThat(granted.tokens().get("fl/b")).as("after the one-name grant of fl/b").isGreaterThan(bHeld.token());
    }

    /**
     * A gateway cut off from ZooKeeper while the floor is raised elsewhere has read the raise before it answers a
     * multi-lock grant again: the first request made through it after its reconnection carries tokens above the floor,
     * and a request made elsewhere after the raise reads the same through it.
     */
    @Test
    void aRaiseWhileAGatewayIsCutOff_isReadBeforeThatGatewaysNextMultiLockGrant() throws Exception {
        try (ZkCutProxy proxy = new ZkCutProxy(fx.server.getPort())) {
            Gateway cut = fx.gateway(fx.config().withZkConnect(proxy.connectString()));
            Gateway other = fx.gateway();
            String s = session(other.warden(), "client", 60_000);
            proxy.partition();
            WardenFixture.await("the cut gateway to see its connection gone", () -> !cut.warden().ready());

            raise("--to", Long.toString(FLOOR));
            MultiAcquireResult elsewhere = joinAll(other.warden().acquireAll(multi(s, "elsewhere", 0, "cutfl/a", "cutfl/b")));

            proxy.heal();
            WardenFixture.await("the cut gateway to be ready again", Duration.ofSeconds(30), () -> cut.warden().ready());
            MultiAcquireResult made = joinAll(cut.warden().acquireAll(multi(s, "through-cut", 0, "cutfl/c", "cutfl/d")));
            List<Warden> both = List.of(cut.warden(), other.warden());
            assertTokens(made, s, "through-cut", FLOOR, both, "cutfl/c", "cutfl/d");
            assertTokens(elsewhere, s, "elsewhere", FLOOR, both, "cutfl/a", "cutfl/b");
            MultiAcquireResult resent = joinAll(cut.warden().acquireAll(multi(s, "elsewhere", 0, "cutfl/a", "cutfl/b")));
            assertThat(resent.tokens()).isEqualTo(elsewhere.tokens());
        }
    }

    /**
     * A cell restored from a backup has lost the grants made after it, and its zxids count that range again
     * (RolledBackEnsembleTest tells the story): a gateway that saw those grants refuses multi-lock acquires on it (503,
     * naming the cause) until an operator raises the floor above what it saw, and then every token of every multi-lock
     * grant, on each of its names, is above every token handed out before, the lost ones included.
     */
    @Test
    void afterARollback_multiLockAcquiresAreRefused_untilTheRaise_andThenEveryTokenIsAboveEveryLostOne() throws Exception {
        Gateway first = fx.gateway();
        Warden w1 = first.warden();
        String s = session(w1, "client", 60_000);
        String[] names = {"rb/a", "rb/b", "rb/c"};
        List<Long> before = grantAndRelease(w1, s, "before", 3, names);

        java.nio.file.Path zkData = fx.server.getTempDirectory().toPath();
        java.nio.file.Path backup = java.nio.file.Files.createTempDirectory("warden-zk-backup-");
        java.util.concurrent.CountDownLatch reconnected = new java.util.concurrent.CountDownLatch(1);
        first.curator().getConnectionStateListenable().addListener((client, state) -> {
            if (state == org.apache.curator.framework.state.ConnectionState.RECONNECTED) {
                reconnected.countDown();
            }
        });
        try {
            fx.server.stop();
            copy(zkData, backup);
            fx.server.restart();
            assertThat(reconnected.await(30, TimeUnit.SECONDS)).as("the gateway reconnected").isTrue();
            WardenFixture.await("the gateway ready again after the server's restart", Duration.ofSeconds(30), w1::ready);

            // Many more writes than a gateway's start makes, so the restored cell stays behind what the gateway saw.
            List<Long> lost = grantAndRelease(w1, s, "lost", 30, names);
            long highest = lost.stream().mapToLong(Long::longValue).max().orElseThrow();
            first.close();

            fx.server.stop();
            deleteRecursively(zkData);
            copy(backup, zkData);
            fx.server.restart();

            Gateway second = fx.gateway();
            Warden w2 = second.warden();
            Throwable refused = org.assertj.core.api.Assertions.catchThrowable(() ->
                    joinAll(w2.acquireAll(multi(s, "on-the-rolled-back-cell", 0, names))));
            assertThat(WardenFixture.code(refused)).as("a multi-lock acquire on the rolled-back cell: %s", refused)
                    .isEqualTo(io.warden.service.api.WardenException.ErrorCode.UNAVAILABLE);
            String detail = refused.getCause() != null ? refused.getCause().getMessage() : refused.getMessage();
            assertThat(detail).contains("rolled back").contains("token-floor raise --above ");
            long mark = Long.parseLong(detail.replaceAll("(?s).*--above (\\d+).*", "$1"));
            assertThat(mark).as("the highest token the gateway saw").isGreaterThanOrEqualTo(highest);
            // Read through the new gateway's client: the fixture's saw zxids past the restored cell, and ZooKeeper
            // refuses it until its session times out.
            for (String name : names) {
                String path = WardenFixture.lockPath(name);
                assertThat(second.curator().checkExists().forPath(path) == null
                        ? List.<String>of() : second.curator().getChildren().forPath(path))
                        .as("nothing made on %s by the refused acquire", name).isEmpty();
            }

            raise("--above", Long.toString(mark));
            WardenFixture.await("the gateway to serve the cell again", Duration.ofSeconds(30), w2::ready);

            List<Long> after = grantAndRelease(w2, s, "after", 3, names);
            assertThat(after).allSatisfy(t -> assertThat(t).isGreaterThan(highest));
            assertThat(after).doesNotContainAnyElementsOf(lost).doesNotContainAnyElementsOf(before);
        } finally {
            deleteRecursively(backup);
        }
    }

    /**
     * {@code n} multi-lock grants of {@code names}, each released as a whole at once; every name's token of each, in
     * order. Each grant's tokens are one number (one transaction), and each grant's is above the one before.
     */
    private static List<Long> grantAndRelease(Warden w, String session, String prefix, int n, String... names) {
        List<Long> tokens = new ArrayList<>();
        long last = 0;
        for (int i = 0; i < n; i++) {
            String id = prefix + "-" + i;
            MultiAcquireResult r = joinAll(w.acquireAll(multi(session, id, 0, names)));
            assertThat(r.status()).as("grant %s", id).isEqualTo(Status.GRANTED);
            assertThat(r.tokens()).containsOnlyKeys(names);
            long token = r.tokens().get(names[0]);
            assertThat(r.tokens().values()).as("one transaction's tokens").containsOnly(token);
            assertThat(token).as("grant %s, after the one before", id).isGreaterThan(last);
            last = token;
            tokens.addAll(r.tokens().values());
            assertThat(w.releaseRequest(session, id).join()).isTrue();
        }
        return tokens;
    }

    private static void copy(java.nio.file.Path from, java.nio.file.Path to) throws java.io.IOException {
        try (var paths = java.nio.file.Files.walk(from)) {
            for (java.nio.file.Path p : (Iterable<java.nio.file.Path>) paths::iterator) {
                java.nio.file.Path target = to.resolve(from.relativize(p).toString());
                if (java.nio.file.Files.isDirectory(p)) {
                    java.nio.file.Files.createDirectories(target);
                } else {
                    java.nio.file.Files.copy(p, target);
                }
            }
        }
    }

    private static void deleteRecursively(java.nio.file.Path root) throws java.io.IOException {
        try (var paths = java.nio.file.Files.walk(root)) {
            for (java.nio.file.Path p : (Iterable<java.nio.file.Path>) paths.sorted(java.util.Comparator.reverseOrder())::iterator) {
                java.nio.file.Files.delete(p);
            }
        }
    }

    /** Runs {@code token-floor raise ARGS} on the fixture's ZooKeeper; its output. */
    private String raise(String... args) {
        var out = new ByteArrayOutputStream();
        var err = new ByteArrayOutputStream();
        List<String> all = new ArrayList<>(List.of("raise"));
        all.addAll(List.of(args));
        all.addAll(List.of("--zk", fx.server.getConnectString()));
        int status = FloorCommand.run(all, new ConfigLoader(Map.of()), new PrintStream(out, true), new PrintStream(err, true));
        assertThat(status).as("token-floor %s: %s%s", all, out, err).isZero();
        return out.toString();
    }
}
