package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.Gateway;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * ShedLock's FuzzTester, with fencing: threads of several clients (over two gateways) increment an unguarded counter
 * under the lock, and write through a fake resource that refuses tokens lower than the last it accepted. The total
 * must be exact and the resource must never refuse a write.
 */
class FuzzTest {
    private static final String NAME = "fuzz/counter";

    /** A resource that protects itself: {@code ... WHERE fence <= :token}, several writes per grant allowed. */
    static final class FencedCounter {
        private long fence;
        private int value;
        final AtomicInteger refused = new AtomicInteger();

        synchronized boolean write(long token, int newValue) {
            if (token < fence) {
                refused.incrementAndGet();
                return false;
            }
            fence = token;
            value = newValue;
            return true;
        }

        synchronized int value() {
            return value;
        }
    }

    private int unguarded;

    @Test
    void manyThreadsOfManyClients_incrementUnderTheLock_exactly() throws Exception {
        int clients = 3;
        int threadsPerClient = 2;
        int rounds = 8;
        try (Cell cell = new Cell()) {
            Gateway g1 = cell.gateway();
            Gateway g2 = cell.gateway();
            FencedCounter resource = new FencedCounter();
            ExecutorService pool = Executors.newFixedThreadPool(clients * threadsPerClient);
            List<CompletableFuture<Void>> work = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                WardenClient client = c % 2 == 0
                        ? cell.client("fuzz-" + c, Cell.url(g1), Cell.url(g2))
                        : cell.client("fuzz-" + c, Cell.url(g2), Cell.url(g1));
                FencedLock lock = client.lock(NAME);
                for (int t = 0; t < threadsPerClient; t++) {
                    work.add(CompletableFuture.runAsync(() -> {
                        for (int i = 0; i < rounds; i++) {
                            try (Hold hold = lock.acquire(Duration.ofSeconds(30))) {
                                int read = unguarded;
                                Thread.yield();
                                unguarded = read + 1;
                                resource.write(hold.token(), unguarded);
                            }
                        }
                    }, pool));
                }
            }
            CompletableFuture.allOf(work.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
            pool.shutdown();

            int total = clients * threadsPerClient * rounds;
            assertThat(unguarded).isEqualTo(total);
            assertThat(resource.value()).isEqualTo(total);
            assertThat(resource.refused).hasValue(0);
        }
    }
}
