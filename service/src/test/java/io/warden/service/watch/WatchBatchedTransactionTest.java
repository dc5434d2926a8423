package io.warden.service.watch;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.AcquireResult.Status;
import io.warden.service.api.LockName;
import io.warden.service.api.Warden;
import io.warden.service.support.OneBatch;
import io.warden.service.support.SseTestClient;
import io.warden.service.support.WardenFixture;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Group commit puts several clients' writes (other sessions, other locks, one lock twice) in one ZooKeeper transaction.
 * The watch stream derives events per transaction, per lock, from the notifications alone: such a transaction must yield
 * each client's events, with the right sessions and tokens, at one revision, and the id once after the last.
 */
class WatchBatchedTransactionTest {
    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    @Test
    void oneTransactionOfSeveralClients_yieldsEachClientsEvents_atOneRevision() throws Exception {
        Gateway gw = fx.gateway();
        Warden w = gw.warden();
        String a = session(w, "client-a", 60_000);
        String b = session(w, "client-b", 60_000);
        String c = session(w, "client-c", 60_000);
        String d = session(w, "client-d", 60_000);
        String e = session(w, "client-e", 60_000);
        // wb/2's node exists, so c's acquire succeeds on its first attempt (on a fresh name it makes the node and goes again)
        fx.curator.create().creatingParentContainersIfNeeded().withMode(org.apache.zookeeper.CreateMode.CONTAINER)
                .forPath(WardenFixture.lockPath("wb/2"));
        AcquireResult aHeld = join(w.acquire(exclusive(a, "wb/1", 0)));
        AcquireResult dHeld = join(w.acquire(exclusive(d, "wb/3", 0)));
        CompletableFuture<AcquireResult> bWaits = w.acquire(exclusive(b, "wb/1", 60_000));
        WardenFixture.await("b waits", () -> gw.pendingAcquires() == 1);
        long bToken = 0;
        for (String node : fx.queue("wb/1")) {
            long czxid = fx.curator.checkExists().forPath(WardenFixture.lockPath("wb/1") + "/" + node).getCzxid();
            bToken = czxid != aHeld.token() ? czxid : bToken;
        }

        try (SseTestClient sse = SseTestClient.watch(gw.httpPort(), "?prefix=wb&since_revision=" + bToken)) {
            List<Supplier<CompletableFuture<Object>>> calls = List.of(
                    () -> widen(w.release(a, LockName.parse("wb/1"), aHeld.token())),
                    () -> widen(w.acquire(exclusive(c, "wb/2", 0))),
                    () -> widen(w.release(d, LockName.parse("wb/3"), dHeld.token())),
                    () -> widen(w.acquire(exclusive(e, "wb/3", 0))));
            List<CompletableFuture<Object>> answers = OneBatch.afterWrite(gw.curator(), gw.zk(), calls);
            AcquireResult cGot = (AcquireResult) join(answers.get(1).thenApply(x -> (AcquireResult) x));
            AcquireResult eGot = (AcquireResult) join(answers.get(3).thenApply(x -> (AcquireResult) x));
            assertThat(cGot.token()).as("c and e were made in one transaction").isEqualTo(eGot.token());
            long r = cGot.token();

            List<SseTestClient.Event> events = sse.next(7);

            assertThat(events).extracting(ev -> ev.type() + " " + ev.name() + " " + ev.sessionId()).containsExactly(
                    "RELEASED wb/1 " + a, "GRANTED wb/1 " + b,
                    "QUEUED wb/2 " + c, "GRANTED wb/2 " + c,
                    "RELEASED wb/3 " + d, "QUEUED wb/3 " + e, "GRANTED wb/3 " + e);
            assertThat(events).allSatisfy(ev -> assertThat(ev.revision()).isEqualTo(r));
            assertThat(events).extracting(SseTestClient.Event::token).containsExactly(
                    aHeld.token(), bToken, r, r, dHeld.token(), r, r);
            assertThat(events).extracting(SseTestClient.Event::id).as("the id once, after the transaction's last event")
                    .containsExactly(null, null, null, null, null, null, Long.toString(r));
            AcquireResult bGot = join(bWaits);
            assertThat(bGot.status()).isEqualTo(Status.GRANTED);
            assertThat(bGot.token()).isEqualTo(bToken);
            assertThat(answers.get(0).join()).isEqualTo(true);
            assertThat(answers.get(2).join()).isEqualTo(true);
        }
    }

    @SuppressWarnings("unchecked")
    private static CompletableFuture<Object> widen(CompletableFuture<?> f) {
        return (CompletableFuture<Object>) f;
    }
}
