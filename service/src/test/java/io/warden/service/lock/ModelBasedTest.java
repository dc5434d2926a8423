package io.warden.service.lock;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireRequest;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.AcquireResult.Status;
import io.warden.service.api.LockName;
import io.warden.service.api.LockView;
import io.warden.service.api.Mode;
import io.warden.service.api.OnTimeout;
import io.warden.service.api.Warden;
import io.warden.service.support.WardenFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static io.warden.service.support.WardenFixture.join;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random operation sequences against the real engine and a tiny pure model of the queue rules (FIFO, shared runs,
 * cancellation, close). After every step the engine's linearizable view must equal the model's, and every grant's
 * token must exceed every earlier EXCLUSIVE grant's token of that name.
 */
class ModelBasedTest {
    private static final List<String> LOCKS = List.of("m/a", "m/b");
    private WardenFixture fx;
    private Warden w;

    /** One queued or granted request in the model. */
    private record Entry(String session, String requestId, Mode mode, long token) {
    }

    private final Map<String, List<Entry>> model = new HashMap<>();
    private final Map<String, Long> maxExclusiveToken = new HashMap<>();

    @BeforeEach
    void setUp() throws Exception {
        fx = new WardenFixture();
        Gateway gw = fx.gateway();
        w = gw.warden();
        LOCKS.forEach(l -> model.put(l, new ArrayList<>()));
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    private static boolean holds(List<Entry> q, int i) {
        if (q.get(i).mode == Mode.EXCLUSIVE) {
            return i == 0;
        }
        for (int k = 0; k < i; k++) {
            if (q.get(k).mode == Mode.EXCLUSIVE) {
                return false;
            }
        }
        return true;
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 42})
    void randomSequences_matchTheModel(long seed) {
        Random rnd = new Random(seed);
        List<String> sessions = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            sessions.add(w.openSession("c" + i, 60_000, 0).join().sessionId());
        }
        int requestCounter = 0;
        for (int step = 0; step < 70; step++) {
            String lock = LOCKS.get(rnd.nextInt(LOCKS.size()));
            List<Entry> q = model.get(lock);
            int op = rnd.nextInt(10);
            String what;
            if (op < 5) {
                String s = sessions.get(rnd.nextInt(sessions.size()));
                Mode mode = rnd.nextBoolean() ? Mode.EXCLUSIVE : Mode.SHARED;
                boolean keep = rnd.nextBoolean();
                String rid = "r" + requestCounter++;
                AcquireResult r = join(w.acquire(new AcquireRequest(s, LockName.parse(lock), mode, 0, rid,
                        keep ? OnTimeout.KEEP : OnTimeout.CANCEL)));
                what = "acquire " + mode + (keep ? " keep" : " try") + " by " + s.substring(0, 6);
                q.add(new Entry(s, rid, mode, 0));
                boolean grants = holds(q, q.size() - 1);
                if (grants) {
                    assertThat(r.status()).as(what).isEqualTo(Status.GRANTED);
                    q.set(q.size() - 1, new Entry(s, rid, mode, r.token()));
                    assertThat(r.token()).as("token beats every earlier EXCLUSIVE grant").isGreaterThan(maxExclusiveToken.getOrDefault(lock, 0L));
                    if (mode == Mode.EXCLUSIVE) {
                        maxExclusiveToken.put(lock, r.token());
                    }
                } else if (keep) {
                    assertThat(r.status()).as(what).isEqualTo(Status.QUEUED);
                    assertThat(r.position()).as(what).isEqualTo(q.size() - 1);
                } else {
                    assertThat(r.status()).as(what).isEqualTo(Status.TIMED_OUT);
                    q.remove(q.size() - 1);
                }
            } else if (op < 7 && !q.isEmpty()) {
                int i = rnd.nextInt(q.size());
                Entry e = q.get(i);
                boolean released = w.cancel(e.session, LockName.parse(lock), e.requestId).join();
                what = "cancel " + e.requestId;
                assertThat(released).as(what).isTrue();
                q.remove(i);
            } else if (op < 9 && !q.isEmpty()) {
                int i = rnd.nextInt(q.size());
                Entry e = q.get(i);
                // Learn the token of an entry the model only knows as queued by looking at the engine's view.
                long token = e.token;
                if (token == 0) {
                    what = "release-unknown";
                    continue;
                }
                boolean stale = rnd.nextInt(4) == 0;
                boolean released = w.release(e.session, LockName.parse(lock), stale ? token - 1 : token).join();
                what = "release " + (stale ? "stale " : "") + e.requestId;
                assertThat(released).as(what).isEqualTo(!stale);
                if (!stale) {
                    q.remove(i);
                }
            } else {
                int k = rnd.nextInt(sessions.size());
                String s = sessions.get(k);
                w.closeSession(s).join();
                what = "close " + s.substring(0, 6);
                for (List<Entry> list : model.values()) {
                    list.removeIf(e -> e.session.equals(s));
                }
                sessions.set(k, w.openSession("c" + k, 60_000, 0).join().sessionId());
            }
            for (String l : LOCKS) {
                assertEngineMatches(l, "step " + step + " (" + what + ")");
            }
        }
    }

    private void assertEngineMatches(String lock, String when) {
        List<Entry> q = model.get(lock);
        LockView view = w.lock(LockName.parse(lock)).join();
        List<String> expectedHolders = new ArrayList<>();
        List<String> expectedWaiters = new ArrayList<>();
        for (int i = 0; i < q.size(); i++) {
            (holds(q, i) ? expectedHolders : expectedWaiters).add(q.get(i).session + "/" + q.get(i).mode);
        }
        assertThat(view.holders()).as(lock + " holders after " + when).extracting(h -> h.sessionId() + "/" + h.mode())
                .containsExactlyElementsOf(expectedHolders);
        assertThat(view.waiters()).as(lock + " waiters after " + when).extracting(x -> x.sessionId() + "/" + x.mode())
                .containsExactlyElementsOf(expectedWaiters);
        // Entries promoted from the queue learn their token from the view, as a client would by retrying.
        for (int i = 0; i < q.size(); i++) {
            Entry e = q.get(i);
            if (e.token == 0 && holds(q, i)) {
                long token = view.holders().stream().filter(h -> h.sessionId().equals(e.session) && h.mode() == e.mode)
                        .mapToLong(h -> h.token()).max().orElseThrow();
                assertThat(token).as("promoted token beats every earlier EXCLUSIVE grant").isGreaterThan(maxExclusiveToken.getOrDefault(lock, 0L));
                if (e.mode == Mode.EXCLUSIVE) {
                    maxExclusiveToken.put(lock, token);
                }
                q.set(i, new Entry(e.session, e.requestId, e.mode, token));
            }
        }
    }
}
