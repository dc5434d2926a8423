package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.Gateway;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One {@code HttpClient} per {@link WardenClient}, and none closed on Java 17 (it cannot be):
 * 200 create/close cycles left 260 threads until a GC. Clients now have their own connections, and close them (and
 * with them their threads) and everything else they start.
 */
class ClientThreadsTest {
    private static final int CYCLES = 200;
    /** Threads that may come and go meanwhile without being a leak: pool threads of the gateway. */
    private static final int SLACK = 40;

    private Cell cell;

    @BeforeEach
    void setUp() throws Exception {
        cell = new Cell();
    }

    @AfterEach
    void tearDown() {
        cell.close();
    }

    @Test
    void twoHundredClients_createdAndClosed_leaveNoThreadsBehind() {
        Gateway gw = cell.gateway();
        cycle(gw, 10); // warm up: the gateway's pools, the shared HTTP client
        int before = liveThreads();

        cycle(gw, CYCLES);

        try {
            Cell.await("the threads of " + CYCLES + " closed clients are gone", () -> liveThreads() <= before + SLACK);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + ": " + liveThreads() + " live, " + before + " before; " + threadNames(), e);
        }
        assertThat(liveThreads()).as("live threads after %d create/close cycles, %d before; now: %s", CYCLES, before,
                threadNames()).isLessThanOrEqualTo(before + SLACK);
    }

    private static void cycle(Gateway gw, int n) {
        for (int i = 0; i < n; i++) {
            try (WardenClient c = WardenClient.builder().endpoints(Cell.url(gw)).clientId("cycle-" + i)
                    .sessionTtl(Duration.ofSeconds(5)).build();
                 Hold hold = c.lock("jobs/cycle").acquire(Duration.ofSeconds(5))) {
                assertThat(hold.isValid()).isTrue();
            }
        }
    }

    private static int liveThreads() {
        return ManagementFactory.getThreadMXBean().getThreadCount();
    }

    /** Thread names with their counts, digits folded, for the failure message. */
    private static Map<String, Integer> threadNames() {
        Map<String, Integer> names = new TreeMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            names.merge(t.getName().replaceAll("\\d+", "#"), 1, Integer::sum);
        }
        return names;
    }
}
