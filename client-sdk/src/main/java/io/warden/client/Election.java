package io.warden.client;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Leader election on a Warden lock: the candidates of an election are the clients that {@link #campaign()} on its
 * name, and the leader is whoever holds that name's EXCLUSIVE lock. Made by {@link WardenClient#election(String)}.
 * <pre>{@code
 * try (Election election = warden.election("jobs/nightly-report")) {
 *     election.addListener(new ElectionListener() {
 *         public void elected(Leadership term) { worker.start(term); }     // keep listeners short: hand the work off
 *         public void defeated(Leadership term) { worker.stop(); }
 *     });
 *     election.campaign();
 *     ...
 * }
 *
 * // in the worker, every write carries the term's token, and the store refuses lower ones:
 * while (term.isValid()) {
 *     store.write(report, term.token());      // UPDATE ... SET fence = :token WHERE id = :id AND fence < :token
 * }
 * }</pre>
 *
 * <h2>Leadership is a lease, not a promise</h2>
 * A candidate leads while it holds the election's lock with a {@linkplain Hold#isValid() valid} hold: over HTTP, until
 * the session's local deadline (the send time of the last acknowledged keepalive plus the TTL, minus a margin), and
 * not after its session or the grant is known to be gone. {@link #isLeader()} turns false at once when that ends —
 * computed when asked, not when a timer fires — and the {@link ElectionListener#defeated defeated} listener is called
 * as soon as the election's thread sees it (it wakes at the deadline, at a loss, and at every change of the session's
 * state). But a leader can be paused (a GC pause, a stopped VM) right after it looked: it may then write as leader
 * after its session expired and another candidate leads. Only the {@link Leadership#token() fencing token}, checked by
 * the resource in the same atomic step as the write, keeps such a write out: every term's token is larger than every
 * earlier term's, of any candidate. Curator's rule holds: after {@link SessionState#SUSPENDED} you cannot be sure you
 * lead; after {@link SessionState#LOST} you do not.
 *
 * <h2>Campaigning</h2>
 * {@link #campaign()} returns at once; the election's thread queues for the lock (FIFO among the candidates) and, when
 * granted, starts a {@link Leadership}. When a term ends other than by {@link #resign()}, the thread gives the lock back
 * and queues again: a candidate whose session was only suspended becomes leader again later, with a new token. A lost
 * session ends the campaign for good (a lost session is terminal: make a new {@link WardenClient}). Failures to reach
 * a gateway are retried (with a backoff, at the next endpoint; the acquire's request_id keeps retries from queueing
 * twice). Two elections of one name in one client are two candidates (locks are not reentrant).
 *
 * <h2>Observers</h2>
 * {@link #leader()} names the current leader, whoever it is, as the election's watch of its lock last saw it (a few
 * milliseconds behind the service): its session id, client id and token. It needs no campaign, so any client can
 * follow an election.
 *
 * <p>{@link #resign()} ends the current term (if any) and stops campaigning; {@link #campaign()} rejoins. {@link #close()}
 * does the same for good and stops the watch. Closing the client ends the election too.
 *
 * <p>Thread-safety: safe for use by any number of threads. The listeners run on the election's own thread (one per
 * election, from the first {@code campaign()} until the election, its client or its session ends).
 */
public final class Election implements AutoCloseable {
    private static final System.Logger log = System.getLogger(Election.class.getName());

    private final String name;
    private final List<ElectionListener> listeners = new CopyOnWriteArrayList<>();
    private final LeaderView view;
    private final Campaign campaign;
    private final Watch watch;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * @param rules when a term lasts ({@link TermRules#CONTRACT})
     * @param round how long one acquire of the campaign waits before it is asked again ({@link Campaign#ROUND})
     */
    Election(WardenClient client, String name, TermRules rules, java.time.Duration round) {
        this.name = name;
        this.view = new LeaderView(name);
        this.campaign = new Campaign(client, name, rules, round, new Dispatch());
        this.watch = client.watch(WatchOptions.name(name), 0, view::apply);
    }

    /** The election's name: the name of its lock, {@code namespace/path}. */
    public String name() {
        return name;
    }

    /**
     * Starts campaigning in the background and returns; does nothing while campaigning already.
     *
     * @throws IllegalStateException when the election or its client was closed
     * @throws SessionLostException  when the client's session is lost
     */
    public void campaign() {
        if (closed.get()) {
            throw new IllegalStateException("the election '" + name + "' is closed");
        }
        campaign.campaign();
    }

    /** Whether this candidate campaigns (waiting for the lock, or leading): between {@link #campaign()} and a resign or close. */
    public boolean isCampaigning() {
        return campaign.campaigning();
    }

    /**
     * Whether this candidate leads at this instant: it holds the election's lock with a valid hold. No promise for the
     * next instant (see "leadership is a lease"); fence writes with {@link Leadership#token()}.
     */
    public boolean isLeader() {
        return campaign.leadership().isPresent();
    }

    /** The current term, while this candidate leads ({@link #isLeader()}); empty otherwise. */
    public Optional<Leadership> leadership() {
        return campaign.leadership();
    }

    /**
     * The leader as the election's watch last saw it (this candidate or another; empty while nobody holds the lock).
     * Behind the service by the watch's delay; while no gateway can be reached, as it was before.
     */
    public Optional<Leader> leader() {
        return view.leader();
    }

    /**
     * Stops campaigning: a queued request is cancelled, and the current term ends at once and its lock is released
     * (when no gateway answers in time, the release goes on in the background). The {@code defeated} listener is then
     * called on the election's thread. {@link #campaign()} rejoins. Idempotent; may be called from a listener.
     */
    public void resign() {
        campaign.resign();
    }

    /** Tells {@code listener} of every later election and defeat of this candidate. */
    public void addListener(ElectionListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    public void removeListener(ElectionListener listener) {
        listeners.remove(listener);
    }

    /** Resigns for good and stops the watch. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            campaign.close();
        } finally {
            watch.close();
        }
    }

    @Override
    public String toString() {
        return "Election[" + name + (isLeader() ? ", leader" : isCampaigning() ? ", campaigning" : "") + "]";
    }

    /** Calls every listener; one that throws is logged, and the others (and the election) go on. */
    private final class Dispatch implements ElectionListener {
        @Override
        public void elected(Leadership leadership) {
            each(leadership, ElectionListener::elected);
        }

        @Override
        public void defeated(Leadership leadership) {
            each(leadership, ElectionListener::defeated);
        }

        private void each(Leadership leadership, java.util.function.BiConsumer<ElectionListener, Leadership> call) {
            for (ElectionListener l : listeners) {
                try {
                    call.accept(l, leadership);
                } catch (RuntimeException e) {
                    log.log(System.Logger.Level.WARNING, "election listener " + l + " failed on " + leadership, e);
                }
            }
        }
    }
}
