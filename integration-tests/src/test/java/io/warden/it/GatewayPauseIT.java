package io.warden.it;

import io.warden.it.support.Await;
import io.warden.it.support.CounterScenario;
import io.warden.it.support.GatewayProcess;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A gateway frozen (SIGSTOP) for longer than its ZooKeeper session timeout, as in a long GC pause: its clients' calls
 * time out and fail over to gw2, which takes their sessions over; gw1's registration {@code /gateways/gw1} vanishes.
 * When gw1 wakes (SIGCONT) it has lost its ZooKeeper session and must not act on what it knew before. Then gw1's
 * clients move back to it, and it takes their sessions over again. Throughout, the counter stays exact and the fenced
 * resource refuses nothing.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class GatewayPauseIT {
    @Test
    void pausedGateway_losesItsSessionsToTheOther_andServesCorrectlyAfterWaking() throws Exception {
        try (CounterScenario scenario = CounterScenario.start("GatewayPauseIT", 2, 4, 15_000);
             CuratorFramework observer = CuratorFrameworkFactory.newClient(scenario.zk().connectString(),
                     new ExponentialBackoffRetry(100, 5, 1000))) {
            observer.start();
            GatewayProcess gw1 = scenario.gateway(0);
            scenario.awaitProgress("every client to make 5 increments", 5);

            gw1.pause();
            scenario.timeline().mark("gw1 paused (SIGSTOP)");
            Await.until("gw1's registration to vanish (its ZooKeeper session expired)", Duration.ofSeconds(60),
                    Duration.ofMillis(100), () -> !registered(observer, "gw1"), () -> scenario.timeline().toString());
            scenario.timeline().mark("/warden/gateways/gw1 gone");
            scenario.awaitProgress("progress while gw1 is paused", 10);

            gw1.resume();
            scenario.timeline().mark("gw1 resumed (SIGCONT)");
            Await.until("gw1 registered again", Duration.ofSeconds(60), Duration.ofMillis(100),
                    () -> registered(observer, "gw1"), () -> scenario.timeline().toString());
            gw1.awaitReady(Duration.ofSeconds(60));
            scenario.timeline().mark("gw1 registered and ready again");
            scenario.awaitProgress("progress after gw1 woke", 10);

            scenario.sendClientsBack(0);
            scenario.awaitProgress("progress with gw1's clients back on gw1", 15);

            scenario.stopAndVerify(gw1);
        }
    }

    private static boolean registered(CuratorFramework observer, String gatewayId) {
        try {
            return observer.checkExists().forPath("/warden/gateways/" + gatewayId) != null;
        } catch (Exception e) {
            throw new IllegalStateException("cannot read /warden/gateways/" + gatewayId, e);
        }
    }
}
