package io.warden.client;

import io.warden.client.direct.DirectLocks;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;

/**
 * The holder that {@link PausedHolderTest} runs in a JVM of its own and stops with SIGSTOP: takes a lock (over HTTP or
 * in ZooKeeper), prints {@code HELD <token>}, then samples {@link Hold#isValid()} about every 100 µs. When two samples
 * are more than a second apart the JVM was stopped; it goes on sampling for 2 s and prints
 * {@code RESUMED gap_ms=<pause> valid_samples=<valid samples after the pause> valid_for_us=<time to the first invalid one>
 * lost_after_ms=<time until lost() completed, -1 if not>}, then exits.
 *
 * <p>Arguments: {@code direct <zk connect string> <lock name> <session timeout ms>} or
 * {@code http <gateway url> <lock name> <session ttl ms>}.
 */
public final class PausedHolder {
    private PausedHolder() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        String target = args[1];
        String name = args[2];
        int timeoutMs = Integer.parseInt(args[3]);
        Hold hold;
        if (mode.equals("direct")) {
            CuratorFramework curator = CuratorFrameworkFactory.builder().connectString(target).sessionTimeoutMs(timeoutMs)
                    .connectionTimeoutMs(3000).retryPolicy(new RetryNTimes(50, 100)).build();
            curator.start();
            if (!curator.blockUntilConnected(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("no ZooKeeper at " + target);
            }
            hold = DirectLocks.of(curator).lock(name).acquire(Duration.ofSeconds(10));
        } else {
            WardenClient client = WardenClient.builder().endpoints(target).clientId("paused-holder")
                    .sessionTtl(Duration.ofMillis(timeoutMs)).build();
            hold = client.lock(name).acquire(Duration.ofSeconds(10));
        }
        long[] lostAt = {0};
        hold.lost().thenRun(() -> lostAt[0] = System.nanoTime());
        System.out.println("HELD " + hold.token());
        System.out.flush();

        long last = System.nanoTime();
        while (true) {
            long now = System.nanoTime();
            boolean valid = hold.isValid();
            if (now - last > TimeUnit.SECONDS.toNanos(1)) {
                long gap = now - last;
                long resumed = now;
                int validSamples = 0;
                long validFor = valid ? -1 : 0;
                if (valid) {
                    validSamples++;
                }
                while (System.nanoTime() - resumed < TimeUnit.SECONDS.toNanos(2)) {
                    long t = System.nanoTime();
                    if (hold.isValid()) {
                        validSamples++;
                    } else if (validFor < 0) {
                        validFor = t - resumed;
                    }
                    sleepAbout100us();
                }
                long lost = lostAt[0] == 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(lostAt[0] - resumed);
                System.out.println("RESUMED gap_ms=" + TimeUnit.NANOSECONDS.toMillis(gap) + " valid_samples=" + validSamples
                        + " valid_for_us=" + (validFor < 0 ? -1 : TimeUnit.NANOSECONDS.toMicros(validFor))
                        + " lost_after_ms=" + lost);
                System.out.flush();
                System.exit(0);
            }
            last = now;
            sleepAbout100us();
        }
    }

    private static void sleepAbout100us() {
        long until = System.nanoTime() + 100_000;
        while (System.nanoTime() - until < 0) {
            Thread.onSpinWait();
        }
    }
}
