package io.warden.it.support;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Checks the process harness itself, with no gateway: a 3-server ensemble of real processes keeps serving a Curator
 * lock loop while its leader is killed and restarted and a follower is frozen with SIGSTOP.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class EnsembleHarnessIT {
    @Test
    void ensemble_survivesLeaderKillAndFollowerPause() throws Exception {
        JavaLauncher launcher = JavaLauncher.forRun("EnsembleHarnessIT");
        try (ZkEnsemble zk = ZkEnsemble.start(launcher, 3)) {
            zk.awaitQuorum(Duration.ofSeconds(60));
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong pairs = new AtomicLong();
            AtomicLong errors = new AtomicLong();
            try (CuratorFramework curator = CuratorFrameworkFactory.builder().connectString(zk.connectString())
                    .sessionTimeoutMs(10_000).connectionTimeoutMs(3000)
                    .retryPolicy(new ExponentialBackoffRetry(50, 10, 500)).build()) {
                curator.start();
                Thread loop = new Thread(() -> {
                    InterProcessMutex mutex = new InterProcessMutex(curator, "/harness/lock");
                    while (!stop.get()) {
                        try {
                            if (mutex.acquire(2, TimeUnit.SECONDS)) {
                                mutex.release();
                                pairs.incrementAndGet();
                            }
                        } catch (Exception e) {
                            errors.incrementAndGet();
                        }
                    }
                }, "curator-loop");
                loop.start();
                try {
                    awaitMorePairs(pairs, 20);

                    int oldLeader = zk.killLeader(Duration.ofSeconds(30));
                    zk.awaitQuorum(Duration.ofSeconds(30));
                    assertThat(zk.leader()).isPresent().get().isNotEqualTo(oldLeader);
                    awaitMorePairs(pairs, 20);

                    zk.restart(oldLeader);
                    zk.awaitQuorum(Duration.ofSeconds(30));
                    Await.until("zk" + (oldLeader + 1) + " rejoins as follower", Duration.ofSeconds(30),
                            Duration.ofMillis(100), () -> zk.mode(oldLeader) == ZkEnsemble.Mode.FOLLOWER, zk::describe);

                    int follower = zk.leader().map(l -> (l + 1) % 3).orElseThrow();
                    zk.pause(follower);
                    Await.until("paused zk" + (follower + 1) + " stops answering", Duration.ofSeconds(10),
                            Duration.ofMillis(100), () -> zk.mode(follower) == ZkEnsemble.Mode.DOWN, zk::describe);
                    awaitMorePairs(pairs, 20);
                    zk.resume(follower);
                    Await.until("resumed zk" + (follower + 1) + " serves again", Duration.ofSeconds(30),
                            Duration.ofMillis(100), () -> zk.mode(follower) == ZkEnsemble.Mode.FOLLOWER, zk::describe);
                    awaitMorePairs(pairs, 20);
                } finally {
                    stop.set(true);
                    loop.join(10_000);
                }
            }
        }
    }

    private static void awaitMorePairs(AtomicLong pairs, long more) {
        long target = pairs.get() + more;
        Await.until(more + " more lock pairs", Duration.ofSeconds(45), Duration.ofMillis(50),
                () -> pairs.get() >= target);
    }
}
