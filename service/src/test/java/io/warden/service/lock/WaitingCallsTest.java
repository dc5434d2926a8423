package io.warden.service.lock;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class WaitingCallsTest {

    /*
     * {@code start()} registered a call with computeIfAbsent(session).add(call) while forget() removed
     * another call of the same session and then the emptied set from the map. A call added to a set that had just
     * been taken out of the map was registered nowhere: reconnect re-evaluation, drain and sessionEnded never saw it
     * (a lost wakeup), and pendingCount() did not count it.
     */
    @Test
    void callsOfOneSessionStartingAndFinishingAtOnce_areNeverLost() throws Exception {
        WaitingCalls<Object> calls = new WaitingCalls<>();
        int threads = 4;
        int rounds = 200_000;
        AtomicInteger lost = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread worker = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                for (int i = 0; i < rounds && lost.get() == 0; i++) {
                    Object call = new Object();
                    calls.add("s", call);
                    if (!calls.remove("s", call)) {
                        lost.incrementAndGet();
                    }
                }
            });
            worker.start();
            workers.add(worker);
        }
        go.countDown();
        for (Thread worker : workers) {
            worker.join();
        }

        assertThat(lost.get()).as("calls registered in a set that was no longer in the registry").isZero();
        assertThat(calls.size()).isZero();
        assertThat(calls.of("s")).isEmpty();
    }
}
