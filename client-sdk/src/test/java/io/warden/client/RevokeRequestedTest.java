package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.Gateway;
import io.warden.service.api.LockName;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Hold#onRevokeRequested}: an admin's revoke reaches the holder through its session's watch; a holder that lets
 * go in time keeps its release clean, one that does not loses the hold at the end of the grace.
 */
class RevokeRequestedTest {
    private Cell cell;

    @BeforeEach
    void setUp() throws Exception {
        cell = new Cell();
    }

    @AfterEach
    void tearDown() {
        cell.close();
    }

    private static void revoke(Gateway gw, String name, long token, long graceMs) throws Exception {
        gw.warden().revoke(LockName.parse(name), token, graceMs, "test", "admin").get(10, TimeUnit.SECONDS);
    }

    @Test
    void revoked_theListenerIsCalled_andAReleaseInTimeIsClean() throws Exception {
        Gateway gw = cell.gateway();
        WardenClient alice = cell.client("alice", Cell.url(gw));
        Hold hold = alice.lock("jobs/revoked").acquire(Duration.ofSeconds(5));
        CompletableFuture<Hold> asked = new CompletableFuture<>();
        assertThat(hold.onRevokeRequested(asked::complete)).isSameAs(hold);

        revoke(gw, "jobs/revoked", hold.token(), 600_000);

        assertThat(asked.get(10, TimeUnit.SECONDS)).isSameAs(hold);
        assertThat(hold.isValid()).as("asked, not taken").isTrue();
        hold.release(); // no LockOwnershipLostException: it let go itself
        assertThat(hold.lost().toCompletableFuture()).isNotDone();
    }

    @Test
    void listenerAddedAfterTheRequest_isCalledAtOnce() throws Exception {
        Gateway gw = cell.gateway();
        WardenClient alice = cell.client("alice", Cell.url(gw));
        Hold hold = alice.lock("jobs/late-listener").acquire(Duration.ofSeconds(5));
        CompletableFuture<Hold> first = new CompletableFuture<>();
        hold.onRevokeRequested(first::complete);
        revoke(gw, "jobs/late-listener", hold.token(), 600_000);
        first.get(10, TimeUnit.SECONDS);

        CompletableFuture<Hold> late = new CompletableFuture<>();
        hold.onRevokeRequested(late::complete);

        assertThat(late).isCompletedWithValue(hold);
        hold.release();
    }

    @Test
    void holderThatDoesNotLetGo_isForceReleased_andLosesTheHold() throws Exception {
        Gateway gw = cell.gateway();
        WardenClient alice = cell.client("alice", Cell.url(gw));
        WardenClient bob = cell.client("bob", Cell.url(gw));
        Hold hold = alice.lock("jobs/stubborn").acquire(Duration.ofSeconds(5));
        CompletableFuture<Hold> asked = new CompletableFuture<>();
        hold.onRevokeRequested(asked::complete);

        revoke(gw, "jobs/stubborn", hold.token(), 200);

        asked.get(10, TimeUnit.SECONDS);
        hold.lost().toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(hold.isValid()).isFalse();
        try (Hold bobs = bob.lock("jobs/stubborn").acquire(Duration.ofSeconds(5))) {
            assertThat(bobs.token()).isGreaterThan(hold.token());
        }
    }
}
