package io.warden.it;

import io.warden.it.support.CounterScenario;
import io.warden.it.support.GatewayProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SIGTERM drains a gateway (contract §5): it stops taking requests, answers its held calls, deregisters and exits;
 * its clients go on at gw2 with their sessions and holds. The counter stays exact and the fenced resource refuses
 * nothing.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class GatewayDrainIT {
    @Test
    void sigterm_drainsTheGateway_andItsSessionsGoOnAtTheOther() throws Exception {
        try (CounterScenario scenario = CounterScenario.start("GatewayDrainIT", 2, 4, 15_000)) {
            GatewayProcess gw1 = scenario.gateway(0);
            scenario.awaitProgress("every client to make 5 increments", 5);

            gw1.terminate();
            scenario.timeline().mark("gw1 sent SIGTERM");
            boolean exited = gw1.process().awaitExit(Duration.ofSeconds(30));
            scenario.timeline().mark(exited ? "gw1 exited with " + gw1.process().exitValue() : "gw1 still running");
            assertThat(exited).as("gw1 exits within 30 s of SIGTERM; log " + gw1.process().log()).isTrue();
            scenario.awaitProgress("progress after gw1 drained", 15);

            scenario.stopAndVerify(scenario.gateway(1));
        }
    }
}
