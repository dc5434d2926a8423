package io.warden.console.view;

import static io.warden.console.Fixtures.ALICE;
import static io.warden.console.Fixtures.BOB;
import static io.warden.console.Fixtures.CAROL;
import static io.warden.console.Fixtures.NOW;
import static io.warden.console.Fixtures.holder;
import static org.assertj.core.api.Assertions.assertThat;

import io.warden.console.Fixtures;
import io.warden.console.model.CellSnapshot;
import io.warden.console.model.LockState;
import io.warden.console.model.Mode;
import java.util.List;
import org.junit.jupiter.api.Test;

class SessionIndexTest {
    private final SessionIndex index = SessionIndex.of(Fixtures.cell());

    @Test
    void joinsHoldsAndWaits_fromTheQueues() {
        SessionRow alice = index.get(ALICE).orElseThrow();
        assertThat(alice.clientId()).isEqualTo("alice");
        assertThat(alice.holds()).extracting(SessionRow.Hold::lock, SessionRow.Hold::token)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("payments/invoice-42", 16L));
        assertThat(alice.waits()).extracting(SessionRow.Wait::lock, SessionRow.Wait::position)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("payments/invoice-43", 1));

        SessionRow carol = index.get(CAROL).orElseThrow();
        assertThat(carol.holds()).extracting(SessionRow.Hold::lock).containsExactly("orders/o-1");
        assertThat(carol.waits()).extracting(SessionRow.Wait::lock).containsExactly("payments/invoice-42");
    }

    @Test
    void idleSessions_arePresent_withoutHoldsOrWaits() {
        SessionRow idle = index.get("1d1e0000000000000000000000000007").orElseThrow();
        assertThat(idle.holds()).isEmpty();
        assertThat(idle.waits()).isEmpty();
        assertThat(index.size()).isEqualTo(7);
    }

    @Test
    void filter_byNamespace_meansAHoldOrWaitThere() {
        assertThat(index.filter("payments", "")).extracting(SessionRow::sessionId)
                .containsExactly(ALICE, BOB, CAROL); // ordered by client id
        assertThat(index.filter("jobs", "")).isEmpty(); // its only holder is a direct-mode node
        assertThat(index.filter("", "")).hasSize(7);
    }

    @Test
    void filter_byClientIdPrefix() {
        assertThat(index.filter("", "ali")).extracting(SessionRow::sessionId).containsExactly(ALICE);
        assertThat(index.filter("orders", "ca")).extracting(SessionRow::sessionId).containsExactly(CAROL);
        assertThat(index.filter("", "nobody")).isEmpty();
        assertThat(index.hasClient("bob")).isTrue();
        assertThat(index.hasClient("bo")).isFalse();
    }

    @Test
    void aSessionOnlyInAQueue_isListedWithoutRecord() {
        CellSnapshot cell = new CellSnapshot(NOW, 1,
                List.of(new LockState("ns/x", List.of(holder("ghost", "g", Mode.EXCLUSIVE, 3, 0, 1)))), List.of());
        SessionRow ghost = SessionIndex.of(cell).get("ghost").orElseThrow();
        assertThat(ghost.known()).isFalse();
        assertThat(ghost.clientId()).isEqualTo("?");
        assertThat(ghost.holds()).hasSize(1);
        assertThat(SessionIndex.of(cell).filter("", "g")).isEmpty(); // no record: no client id to match
    }
    /**
     * A multi-lock request (one request id with entries on several locks) that holds m/a and waits for m/b: both rows
     * name the request and its names, and say it is not granted yet (its hold on m/a is not its client's); a request of
     * one name carries none.
     */
    @Test
    void aMultiLockRequest_isShownAsOneRequest_notGrantedWhileOneNameWaits() {
        io.warden.console.model.QueuedRequest heldPart = new io.warden.console.model.QueuedRequest("s1", "c", "both",
                Mode.EXCLUSIVE, 40, 0, true, NOW, NOW);
        io.warden.console.model.QueuedRequest waitingPart = new io.warden.console.model.QueuedRequest("s1", "c", "both",
                Mode.EXCLUSIVE, 40, 1, false, NOW, null);
        CellSnapshot cell = new CellSnapshot(NOW, 1, List.of(
                new LockState("m/a", List.of(heldPart)),
                new LockState("m/b", List.of(holder("s2", "d", Mode.EXCLUSIVE, 30, 0, 5), waitingPart)),
                new LockState("m/c", List.of(holder("s1", "c", Mode.EXCLUSIVE, 41, 0, 1)))), List.of());
        SessionRow s1 = SessionIndex.of(cell).get("s1").orElseThrow();
        assertThat(s1.holds()).extracting(SessionRow.Hold::lock, SessionRow.Hold::requestId)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("m/a", "both"),
                        org.assertj.core.groups.Tuple.tuple("m/c", "req-41"));
        SessionRow.MultiRequest multi = s1.holds().get(0).request();
        assertThat(multi.names()).containsExactly("m/a", "m/b");
        assertThat(multi.waitingOn()).containsExactly("m/b");
        assertThat(multi.granted()).isFalse();
        assertThat(s1.waits()).singleElement().satisfies(w -> assertThat(w.request()).isEqualTo(multi));
        assertThat(s1.holds().get(1).request()).as("a request of one name").isNull();
    }
}
