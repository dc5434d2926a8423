package io.warden.service.zk;

import io.warden.service.metrics.WardenMetrics;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.jute.BinaryOutputArchive;
import org.apache.jute.Record;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.proto.CreateRequest;
import org.apache.zookeeper.proto.CreateTTLRequest;

import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * Group commit of the gateway's writes: every {@link Zk#multi} call comes here. A call that finds no batch in flight is
 * sent at once, alone; the calls that arrive while one is in flight go to ZooKeeper together in the next one, as a
 * single {@code multi}: one request, one proposal, one transaction log record, whatever the number of callers
 * (docs/design.md, "Group commit"; decisions/0006).
 *
 * <p>Each call is answered as if it had been sent alone:
 * <ul>
 *   <li>A batch never holds two sequential creates under one parent (two queue nodes of one lock), but for a session's
 *   end markers ({@link #isEndMarker}). Nodes made in one transaction share its zxid, and a queue node's czxid is its
 *   token: two of one name would tie. The second call waits for a later batch, and so do the calls after it under that
 *   parent, in order.</li>
 *   <li>A {@code multi} is all or nothing. When a batch fails at an operation (ZooKeeper evaluated it: NONODE,
 *   NODEEXISTS, BADVERSION...), the call of that operation is sent again alone and gets that reply: its own results,
 *   its own failed index. The calls before it (which ZooKeeper evaluated as good) are sent again together, and so are
 *   the calls after it (which it did not evaluate), each part split the same way if it fails in turn. No call's outcome
 *   depends on another's: each part is answered as the calls of any batch are (Apache Pulsar's metadata store sends
 *   every call of a failed batch alone, apache/pulsar#13043; three requests instead of one per call).</li>
 *   <li>When the batch fails as a whole (the connection, after Curator's retries), every call gets that failure, as it
 *   would alone.</li>
 *   <li>{@link Zk.MultiFailure#maybeApplied()} of a call is true when a connection loss or a Curator retry happened
 *   since the call was made, so a batch whose reply was lost (applied, then sent again by Curator and failed) is
 *   resolved call by call exactly as a lost single reply is.</li>
 * </ul>
 *
 * <p>Bounds ({@link Batching}): at most {@code maxOps} operations and {@code maxBytes} bytes (as ZooKeeper serialises
 * them) a batch; a call larger than that on its own is sent alone. One batch in flight by default.
 *
 * <p>Concurrency: the queue is {@link Batcher}'s. {@link Call} is immutable but for its future. Answers complete the
 * callers' futures on the ZooKeeper event thread.
 */
final class GroupCommit extends Batcher<GroupCommit.Call> {
    /** How far past the head a batch looks for calls that may join it when earlier ones must wait (same parent). */
    private static final int SCAN = 4_096;
    /** The first character of an end marker's name (see {@link #isEndMarker}). */
    private static final String END_MARKER = "~";
    /** Per operation in a multi request: its header (type, done, error). */
    private static final int OP_HEADER_BYTES = 9;

    private final Zk zk;
    private final Batching limits;
    private final WardenMetrics metrics;
    /** Zk's count of connection losses and Curator retries. */
    private final LongSupplier disconnects;

    GroupCommit(Zk zk, Batching limits, WardenMetrics metrics, LongSupplier disconnects) {
        super(limits.inFlight());
        this.zk = zk;
        this.limits = limits;
        this.metrics = metrics;
        this.disconnects = disconnects;
    }

    /** One caller's {@code multi}. */
    static final class Call {
        final List<CuratorOp> ops;
        final int bytes;
        /** Parents of the call's sequential creates. */
        final Set<String> sequentialParents;
        final long madeNanos = System.nanoTime();
        final long disconnectsAtMade;
        final CompletableFuture<List<CuratorTransactionResult>> future = new CompletableFuture<>();

        Call(List<CuratorOp> ops, long disconnectsAtMade) {
            this.ops = ops;
            this.disconnectsAtMade = disconnectsAtMade;
            int size = 0;
            Set<String> parents = Set.of();
            for (CuratorOp op : ops) {
                Op raw = op.get();
                Record record = raw.toRequestRecord();
                size += OP_HEADER_BYTES + serializedSize(record);
                int flags = record instanceof CreateRequest create ? create.getFlags()
                        : record instanceof CreateTTLRequest ttl ? ttl.getFlags() : -1;
                if (flags >= 0 && CreateMode.fromFlag(flags, CreateMode.PERSISTENT).isSequential()
                        && !isEndMarker(raw.getPath())) {
                    if (parents.isEmpty()) {
                        parents = new HashSet<>(2);
                    }
                    parents.add(parentOf(raw.getPath()));
                }
            }
            this.bytes = size;
            this.sequentialParents = parents;
        }
    }

    CompletableFuture<List<CuratorTransactionResult>> multi(List<CuratorOp> ops) {
        Call call;
        try {
            call = new Call(ops, disconnects.getAsLong());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        if (!limits.on()) {
            alone(call);
        } else {
            submit(call);
        }
        return call.future;
    }

    @Override
    List<Call> take(ArrayDeque<Call> queue) {
        List<Call> batch = new ArrayList<>();
        int ops = 0;
        int bytes = 0;
        Set<String> parents = new HashSet<>();
        Iterator<Call> it = queue.iterator();
        for (int looked = 0; it.hasNext() && looked < SCAN; looked++) {
            Call c = it.next();
            if (!batch.isEmpty() && (ops + c.ops.size() > limits.maxOps() || bytes + c.bytes > limits.maxBytes())) {
                break; // full: the rest keep their order for the next batch
            }
            boolean clash = false;
            for (String p : c.sequentialParents) {
                clash |= !parents.add(p); // taken or skipped parents stay claimed: later calls under them wait too
            }
            if (clash) {
                continue;
            }
            batch.add(c);
            ops += c.ops.size();
            bytes += c.bytes;
            it.remove();
        }
        return batch;
    }

    @Override
    CompletableFuture<Void> send(List<Call> batch) {
        if (batch.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        if (batch.size() == 1) {
            return alone(batch.get(0));
        }
        List<CuratorOp> all = new ArrayList<>();
        for (Call c : batch) {
            all.addAll(c.ops);
        }
        metrics.batch("write", batch.size());
        return zk.sendMulti(all).handle((reply, err) -> {
            if (err != null) { // never sent (the client is closed): the same for every call
                for (Call c : batch) {
                    fail(c, err);
                }
                return CompletableFuture.<Void>completedFuture(null);
            }
            if (reply.rc() == 0) {
                int at = 0;
                for (Call c : batch) {
                    answer(c, 0, reply.results().subList(at, at + c.ops.size()));
                    at += c.ops.size();
                }
                return CompletableFuture.<Void>completedFuture(null);
            }
            int failed = failedCall(batch, reply.results());
            if (failed >= 0) {
                // One call's operation failed and took the others with it. That call goes alone, so it gets the answer
                // it would have got by itself; the calls before it, which ZooKeeper found good, go again together,
                // and so do the calls after it, which it did not get to (each part split the same way should it fail
                // again). Pipelined: ZooKeeper applies one connection's requests in order.
                metrics.batchFallback("write");
                return CompletableFuture.allOf(send(batch.subList(0, failed)), alone(batch.get(failed)),
                        send(batch.subList(failed + 1, batch.size())));
            }
            for (Call c : batch) { // the request failed as a whole (connection, session): alone, each would have too
                answer(c, reply.rc(), reply.results());
            }
            return CompletableFuture.<Void>completedFuture(null);
        }).thenCompose(f -> f);
    }

    /** Sends the call's operations as one request of their own; completes when it is answered. */
    private CompletableFuture<Void> alone(Call c) {
        metrics.batch("write", 1);
        return zk.sendMulti(c.ops).handle((reply, err) -> {
            if (err != null) {
                fail(c, err);
            } else {
                answer(c, reply.rc(), reply.results());
            }
            return null;
        });
    }

    private void answer(Call c, int rc, List<CuratorTransactionResult> results) {
        metrics.zkOperation("multi", System.nanoTime() - c.madeNanos, rc);
        if (rc == 0) {
            c.future.complete(results);
        } else {
            c.future.completeExceptionally(new Zk.MultiFailure(KeeperException.Code.get(rc), results,
                    disconnects.getAsLong() != c.disconnectsAtMade));
        }
    }

    private static void fail(Call c, Throwable err) {
        c.future.completeExceptionally(Zk.unwrap(err));
    }

    /**
     * The index in {@code batch} of the call whose operation failed when ZooKeeper evaluated the batch's {@code multi}
     * (the first result that is neither ok nor "not evaluated": RUNTIMEINCONSISTENCY), or -1 when none did (the request
     * failed as a whole: the connection or the session).
     */
    private static int failedCall(List<Call> batch, List<CuratorTransactionResult> results) {
        if (results == null) {
            return -1;
        }
        for (int i = 0; i < results.size(); i++) {
            int e = results.get(i).getError();
            if (e != 0 && e != KeeperException.Code.RUNTIMEINCONSISTENCY.intValue()) {
                int at = 0;
                for (int c = 0; c < batch.size(); c++) {
                    at += batch.get(c).ops.size();
                    if (i < at) {
                        return c;
                    }
                }
                return -1;
            }
        }
        return -1;
    }

    /**
     * Whether {@code path} is a session's end marker ({@code /sessions/{sh}/{session}/~{uuid}_{seq}}). End markers say by
     * their sequence numbers in what order a session's requests ended, never by their zxid, and the creates of one
     * transaction get distinct sequence numbers in the transaction's order: so one session's releases may share a
     * batch (all of an SDK's threads share one session).
     */
    static boolean isEndMarker(String path) {
        int slash = path.lastIndexOf('/');
        return slash >= 0 && path.startsWith(END_MARKER, slash + 1) && path.contains(CellPaths.SESSIONS + "/");
    }

    private static String parentOf(String path) {
        int slash = path.lastIndexOf('/');
        return slash <= 0 ? "/" : path.substring(0, slash);
    }

    /** The bytes ZooKeeper's client writes for a request record. */
    static int serializedSize(Record record) {
        Counting out = new Counting();
        try {
            record.serialize(BinaryOutputArchive.getArchive(out), "");
        } catch (IOException e) {
            throw new IllegalStateException("cannot measure a ZooKeeper request", e);
        }
        return out.count;
    }

    private static final class Counting extends OutputStream {
        int count;

        @Override
        public void write(int b) {
            count++;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            count += len;
        }
    }
}
