package io.warden.it;

import io.warden.it.support.CounterScenario;
import io.warden.it.support.FencedResource;
import io.warden.it.support.UnguardedCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

/**
 * The whole system under faults: a 3-server ZooKeeper ensemble and two gateways, each its own process. Six clients
 * loop: acquire EXCLUSIVE {@code it/counter}, write through a {@link FencedResource} with the token, increment an
 * {@link UnguardedCounter} read-modify-write, write again, release. Their sessions are kept alive in the background.
 * Meanwhile the test kill -9s the ZooKeeper leader (and restarts it), then kill -9s gateway gw1 (the clients of gw1
 * fail over to gw2, keeping their sessions: the keepalive at gw2 takes each session over), then kills the new
 * ZooKeeper leader (and restarts it) with one gateway left.
 *
 * <p>Afterwards: the counter equals the number of increments (no two holders at once), the fenced resource refused
 * no write (every grant's token exceeded the last one), every client made progress after each fault, no session
 * was lost and no release of a hold the client believed it had answered {@code released:false}.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class WholeSystemFaultIT {
    @Test
    void counter_isExact_andFencingHolds_whenZkLeaderAndGatewayAreKilled() throws Exception {
        try (CounterScenario scenario = CounterScenario.start("WholeSystemFaultIT", 2, 6, 15_000)) {
            scenario.awaitProgress("every client to make 5 increments", 5);

            // Fault 1: the ZooKeeper leader dies; the other two elect a new one. Then it comes back.
            scenario.killAndRestartLeader();

            // Fault 2: kill -9 of gw1; its clients fail over to gw2 with their sessions.
            scenario.gateway(0).kill9();
            scenario.timeline().mark("killed gw1 (kill -9)");
            scenario.awaitProgress("progress after kill -9 of gw1", 15);

            // Fault 3: the new leader dies too, now with a single gateway left.
            scenario.killAndRestartLeader();

            scenario.stopAndVerify(scenario.gateway(1));
        }
    }
}
