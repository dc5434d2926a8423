package io.warden.service.zk;

import io.warden.service.metrics.WardenMetrics;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.OpResult;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Reads after a batch: the lock reads ({@link Zk#childrenAndStat}: the grant decision's, and listings') that arrive
 * while one is in flight go to ZooKeeper together as one read-only {@code multi} ({@code getChildren} and
 * {@code getData} of each lock: the data's stat is the one {@code getChildren} alone returns), and each is answered as if
 * read alone. A read-only {@code multi} is not all or nothing: a lock that is gone answers NONODE for itself only. A
 * read that finds no read in flight is sent at once, alone (Curator's {@code getChildren}, as before).
 *
 * <p>Order: a read is sent no earlier than it was made, on the gateway's one connection, so it still sees every write
 * whose reply came before it was made (the grant decision's read sees the call's own {@code multi}: docs/design.md,
 * "Acquire").
 *
 * <p>Size: ZooKeeper's client drops its connection on a reply over {@code jute.maxbuffer} (1 MiB by default), and a
 * lock's queue alone may take most of that (10,000 waiters: about 620 KB). So a read joins a batch only when its lock
 * was read lately ({@link Batching#sizeHintMs()}, a second by default); its share of the batch is estimated at twice
 * what its queue's names took then, plus 1 KiB, and must be at most half of {@link Batching#maxReadBytes()} (256 KiB by
 * default, and never more than a quarter of the client's limit: {@link Batching#within}; so, by default, locks of up
 * to about 63 KiB of names, some 1,000 entries), and all of a batch's shares at most all of it. Any other read goes
 * alone, at once. The hints are kept for at most {@value #MAX_HINTS} locks (least recently used evicted; a miss only
 * sends that read alone). A batch's reply can exceed its estimate only by what its locks grew within the hints' age
 * (a second): bounded by what the whole cell writes in a second, well inside the three quarters of the limit kept in
 * reserve.
 *
 * <p>When a read batch fails as a whole (the connection), each of its reads is sent again alone through Curator, which
 * retries it as it retries every read.
 *
 * <p>Concurrency: the queue is {@link Batcher}'s; {@link #hints} is a concurrent bounded map. Answers complete the
 * callers' futures on the ZooKeeper event thread.
 */
final class GroupRead extends Batcher<GroupRead.Read> {
    static final int MAX_HINTS = 10_000;
    private static final int SCAN = 4_096;

    private final Zk zk;
    private final Batching limits;
    private final WardenMetrics metrics;
    /** How recent a lock's size must be for its read to join a batch. */
    private final long hintNanos;
    /** Per lock path: the bytes of its children's names when last read, and when. */
    private final Map<String, long[]> hints = com.github.benmanes.caffeine.cache.Caffeine.newBuilder()
            .maximumSize(MAX_HINTS).<String, long[]>build().asMap();

    GroupRead(Zk zk, Batching limits, WardenMetrics metrics) {
        super(limits.inFlight());
        this.zk = zk;
        this.limits = limits;
        this.metrics = metrics;
        this.hintNanos = TimeUnit.MILLISECONDS.toNanos(limits.sizeHintMs());
    }

    /** One caller's read. */
    static final class Read {
        final String path;
        final int estimate;
        final long madeNanos = System.nanoTime();
        final CompletableFuture<Zk.ChildrenAndStat> future = new CompletableFuture<>();

        Read(String path, int estimate) {
            this.path = path;
            this.estimate = estimate;
        }
    }

    CompletableFuture<Zk.ChildrenAndStat> read(String path) {
        int estimate = limits.on() ? estimate(path) : -1;
        Read r = new Read(path, estimate);
        if (estimate < 0) {
            alone(path, List.of(r));
        } else {
            submit(r);
        }
        return r.future;
    }

    /** The estimated reply bytes of this lock's read in a batch, or -1 when it must be read alone. */
    private int estimate(String path) {
        long[] hint = hints.get(path);
        if (hint == null || System.nanoTime() - hint[1] > hintNanos) {
            return -1;
        }
        long estimate = 2 * hint[0] + 1024;
        return estimate > limits.maxReadBytes() / 2 ? -1 : (int) estimate;
    }

    @Override
    List<Read> take(ArrayDeque<Read> queue) {
        List<Read> batch = new ArrayList<>();
        java.util.Set<String> paths = new java.util.HashSet<>();
        long bytes = 0;
        Iterator<Read> it = queue.iterator();
        for (int looked = 0; it.hasNext() && looked < SCAN; looked++) {
            Read r = it.next();
            if (!paths.contains(r.path)) { // a second read of a lock in the batch shares its answer, at no cost
                if (!batch.isEmpty() && (paths.size() >= limits.maxReads() || bytes + r.estimate > limits.maxReadBytes())) {
                    break;
                }
                paths.add(r.path);
                bytes += r.estimate;
            }
            batch.add(r);
            it.remove();
        }
        return batch;
    }

    @Override
    CompletableFuture<Void> send(List<Read> batch) {
        Map<String, List<Read>> byPath = new LinkedHashMap<>();
        for (Read r : batch) {
            byPath.computeIfAbsent(r.path, k -> new ArrayList<>(1)).add(r);
        }
        if (byPath.size() == 1) {
            Map.Entry<String, List<Read>> only = byPath.entrySet().iterator().next();
            return alone(only.getKey(), only.getValue());
        }
        List<String> paths = new ArrayList<>(byPath.keySet());
        metrics.batch("read", batch.size());
        return zk.readMulti(paths).handle((results, err) -> {
            if (err != null || results == null || results.size() != 2 * paths.size()) {
                // The request failed as a whole: read each alone, with Curator's retries, as it would have been.
                metrics.batchFallback("read");
                List<CompletableFuture<Void>> each = new ArrayList<>(paths.size());
                byPath.forEach((path, reads) -> each.add(alone(path, reads)));
                return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new));
            }
            for (int i = 0; i < paths.size(); i++) {
                String path = paths.get(i);
                OpResult children = results.get(2 * i);
                OpResult data = results.get(2 * i + 1);
                int rc = children instanceof OpResult.ErrorResult e ? e.getErr()
                        : data instanceof OpResult.ErrorResult e2 ? e2.getErr() : 0;
                if (rc == 0) {
                    Zk.ChildrenAndStat cs = new Zk.ChildrenAndStat(List.copyOf(((OpResult.GetChildrenResult) children).getChildren()),
                            ((OpResult.GetDataResult) data).getStat());
                    answer(path, byPath.get(path), cs, null, 0);
                } else {
                    answer(path, byPath.get(path), null, KeeperException.create(KeeperException.Code.get(rc), path), rc);
                }
            }
            return CompletableFuture.<Void>completedFuture(null);
        }).thenCompose(f -> f);
    }

    /** Reads the lock in a request of its own and answers {@code reads} (all of that lock) with it. */
    private CompletableFuture<Void> alone(String path, List<Read> reads) {
        metrics.batch("read", 1);
        return zk.childrenAndStatAlone(path).handle((cs, err) -> {
            if (err == null) {
                answer(path, reads, cs, null, 0);
            } else {
                KeeperException.Code code = Zk.code(err);
                answer(path, reads, null, Zk.unwrap(err), code == null ? KeeperException.Code.SYSTEMERROR.intValue() : code.intValue());
            }
            return null;
        });
    }

    private void answer(String path, List<Read> reads, Zk.ChildrenAndStat cs, Throwable err, int rc) {
        if (cs != null) {
            hints.put(path, new long[]{namesBytes(cs.children()), System.nanoTime()});
        } else {
            hints.remove(path);
        }
        long now = System.nanoTime();
        for (Read r : reads) {
            metrics.zkOperation("getChildren", now - r.madeNanos, rc);
            if (cs != null) {
                r.future.complete(cs);
            } else {
                r.future.completeExceptionally(err);
            }
        }
    }

    /** What the names take in a reply: a length and the UTF-8 bytes each. */
    private static long namesBytes(List<String> names) {
        long n = 0;
        for (String s : names) {
            n += 4 + (isAscii(s) ? s.length() : s.getBytes(StandardCharsets.UTF_8).length);
        }
        return n;
    }

    private static boolean isAscii(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) >= 0x80) {
                return false;
            }
        }
        return true;
    }
}
