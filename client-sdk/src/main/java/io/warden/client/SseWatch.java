package io.warden.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A {@link Watch} over {@code GET /v1/watch} (Server-Sent Events, docs/api.md), read by one thread of its own that
 * also calls the listener: the thread reads the stream's connection ({@link Http1Client.Stream}) itself, so an event
 * reaches the listener without passing through another thread.
 *
 * <p><b>Resume without gaps or repeats.</b> After a stream ends (the gateway stops or drains, the connection breaks,
 * nothing arrived for {@link #IDLE_LIMIT}: the gateway sends a comment every 15 s) the watch reconnects to the next
 * endpoint, after a backoff, with {@code since_revision}. Several events may share a revision, and a stream can break
 * between them; so it resumes from one below the last revision delivered and drops, at that revision, the events it
 * already delivered. After a RESYNC at revision R (which includes every change up to R) it resumes from R. A watch that
 * started "from now" and broke before its first event resumes with {@code since_revision=0}: a RESYNC with the state.
 *
 * <p>Concurrency: {@code lastRevision} is volatile, written by the watch thread only; {@code atLast},
 * {@code replay} and {@code resyncAtLast} belong to the watch thread. {@code closed} and {@code body} are volatile.
 * The listener runs while holding {@code delivering}, so {@link #close()} can wait for a call in progress.
 */
final class SseWatch implements Watch {
    static final Duration IDLE_LIMIT = Duration.ofSeconds(45);
    private static final System.Logger log = System.getLogger(SseWatch.class.getName());
    private static final AtomicInteger WATCHES = new AtomicInteger();

    private final HttpGateway gateway;
    private final WatchOptions options;
    private final Consumer<LockEvent> listener;
    private final ScheduledExecutorService scheduler;
    private final Duration requestTimeout;
    private final Runnable onDone;
    /** Never gives up before its first stream (the watch of a session's own holds); otherwise see {@link #start()}. */
    private final boolean persistent;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    /** Completes when the first stream is open, or exceptionally when none could be opened in time. */
    private final CompletableFuture<Void> firstOpen = new CompletableFuture<>();
    private final Object delivering = new Object();
    private final Thread thread;
    private final AtomicInteger streamsOpened = new AtomicInteger();

    private volatile boolean closed;
    /** The stream being opened or read, closed to stop it (from any thread). */
    private volatile java.io.Closeable body;
    private volatile long lastReadNanos;
    private volatile long lastRevision = -1;
    /** The revision given by the caller (-1: from now); used until the first event. */
    private final long since;
    private final List<LockEvent> atLast = new ArrayList<>();
    private final List<LockEvent> replay = new ArrayList<>();
    private boolean resyncAtLast;
    private boolean connectedOnce;
    private int index;
    private ScheduledFuture<?> watchdog;

    SseWatch(HttpGateway gateway, WatchOptions options, long sinceRevision, Consumer<LockEvent> listener,
             ScheduledExecutorService scheduler, Duration requestTimeout, Runnable onDone) {
        this(gateway, options, sinceRevision, listener, scheduler, requestTimeout, onDone, false);
    }

    SseWatch(HttpGateway gateway, WatchOptions options, long sinceRevision, Consumer<LockEvent> listener,
             ScheduledExecutorService scheduler, Duration requestTimeout, Runnable onDone, boolean persistent) {
        this.persistent = persistent;
        this.gateway = gateway;
        this.options = options;
        this.since = sinceRevision;
        this.listener = listener;
        this.scheduler = scheduler;
        this.requestTimeout = requestTimeout;
        this.onDone = onDone;
        this.index = gateway.currentIndex();
        this.thread = new Thread(this::run, "warden-watch-" + WATCHES.incrementAndGet());
        thread.setDaemon(true);
    }

    /** Starts the watch thread and waits until the first stream is open; throws (closed) when none opened in time. */
    void start() {
        thread.start();
        try {
            watchdog = scheduler.scheduleWithFixedDelay(this::checkIdle, 1, 1, TimeUnit.SECONDS);
        } catch (RejectedExecutionException closing) {
            close();
            throw new WardenClientException("watching " + options + ": the client is closed");
        }
        try {
            firstOpen.get(requestTimeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            close();
            Thread.currentThread().interrupt();
            throw new WardenClientException("interrupted while opening a watch of " + options, e);
        } catch (Exception e) {
            close();
            Throwable cause = Failures.unwrap(e);
            if (cause instanceof WardenClientException w) {
                throw w;
            }
            throw new WardenClientException("watching " + options + ": no gateway opened the stream within "
                    + requestTimeout.toMillis() + " ms: " + cause, cause);
        }
    }

    /**
     * Starts the watch thread and returns at once; the watch keeps trying every endpoint until a stream opens, a
     * gateway refuses it for good ({@link #done()} fails), or it is closed. For watches nobody waits on.
     */
    void startInBackground() {
        thread.start();
        try {
            watchdog = scheduler.scheduleWithFixedDelay(this::checkIdle, 1, 1, TimeUnit.SECONDS);
        } catch (RejectedExecutionException closing) {
            close();
        }
    }

    /** Streams opened so far: 1 plus the reconnects (tests, diagnostics). */
    int streamsOpened() {
        return streamsOpened.get();
    }

    @Override
    public long lastRevision() {
        return lastRevision;
    }

    @Override
    public CompletionStage<Void> done() {
        return done.minimalCompletionStage();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        closeBody();
        if (Thread.currentThread() != thread) {
            thread.interrupt(); // wakes a backoff (closing the body woke a connect or a read)
            synchronized (delivering) {
                // waits for a listener call in progress: none starts after this
            }
        }
        finish(null);
    }

    @Override
    public String toString() {
        return "Watch[" + options + ", last revision " + lastRevision + (closed ? ", closed" : "") + "]";
    }

    private void finish(Throwable failure) {
        ScheduledFuture<?> w = watchdog;
        if (w != null) {
            w.cancel(false);
        }
        boolean first = failure == null ? done.complete(null) : done.completeExceptionally(failure);
        firstOpen.completeExceptionally(failure != null ? failure : new WardenClientException("the watch was closed"));
        if (first) {
            onDone.run();
        }
    }

    private void closeBody() {
        java.io.Closeable b = body;
        if (b != null) {
            try {
                b.close();
            } catch (IOException ignored) {
                // the stream is being dropped anyway
            }
        }
    }

    private void checkIdle() {
        if (body != null && System.nanoTime() - lastReadNanos > IDLE_LIMIT.toNanos()) {
            log.log(System.Logger.Level.DEBUG, "watch of {0}: nothing from {1} for {2}; reconnecting", options,
                    gateway.endpoint(index), IDLE_LIMIT);
            closeBody(); // a read blocked on the stream fails at once; the loop reconnects
        }
    }

    // --- the watch thread ------------------------------------------------------------------------------------

    private void run() {
        long firstDeadline = System.nanoTime() + requestTimeout.toNanos();
        int failures = 0;
        int exhausted = 0;
        Throwable last = null;
        while (!closed) {
            boolean received = false;
            try {
                received = stream(gateway.endpoint(index));
            } catch (WardenClientException refused) {
                if (persistent && refused.code().filter("RESOURCE_EXHAUSTED"::equals).isPresent()) {
                    // A gateway with all its slots taken (429): not a refusal for good. The watch of a session's own
                    // holds waits longer each time (1 s doubling, at most 30 s) and tries the next gateway.
                    exhausted++;
                    last = refused;
                } else if (!Failures.retryable(refused)) {
                    log.log(System.Logger.Level.WARNING, "watch of {0} refused: {1}", options, refused.getMessage());
                    finish(refused);
                    return;
                }
                last = refused;
            } catch (IOException | RuntimeException e) {
                last = e;
            } finally {
                body = null;
            }
            if (closed) {
                break;
            }
            if (!persistent && !connectedOnce && System.nanoTime() - firstDeadline > 0) {
                firstOpen.completeExceptionally(new WardenClientException("watching " + options + ": no gateway "
                        + "opened the stream within " + requestTimeout.toMillis() + " ms; last: " + last, last));
                return; // start() closes the watch
            }
            failures = received ? 1 : failures + 1;
            if (received) {
                exhausted = 0;
            }
            index = (index + 1) % gateway.endpointCount();
            log.log(System.Logger.Level.DEBUG, "watch of {0}: stream ended ({1}); resuming after revision {2} at {3}",
                    options, last == null ? "closed by the gateway" : last.toString(), lastRevision, gateway.endpoint(index));
            last = null;
            try {
                TimeUnit.MILLISECONDS.sleep(exhausted > 0 && !received ? exhaustedDelayMs(exhausted) : Backoff.delayMs(failures));
            } catch (InterruptedException e) {
                Thread.interrupted();
            }
        }
    }

    /** The pause after the {@code n}th answer in a row that all slots are taken: 1 s doubling, at most 30 s, jittered. */
    static long exhaustedDelayMs(int n) {
        long d = Math.min(30_000L, 1000L << Math.min(n - 1, 5));
        return d / 2 + java.util.concurrent.ThreadLocalRandom.current().nextLong(d / 2 + 1);
    }

    /** One stream at {@code base}, read until it ends. True when it delivered or read anything past its headers. */
    private boolean stream(String base) throws IOException {
        String sinceParam = sinceParameter();
        String target = "/v1/watch?" + options.query() + (sinceParam == null ? "" : "&since_revision=" + sinceParam);
        try (Http1Client.Stream stream = gateway.stream(base)) {
            lastReadNanos = System.nanoTime(); // the open has its own timeout; the watchdog counts from here
            body = stream;
            if (closed) {
                return false;
            }
            int status = stream.open("GET", target, gateway.streamHeaders("text/event-stream"), requestTimeout);
            lastReadNanos = System.nanoTime();
            return closed ? false : read(base, status, stream.body());
        }
    }

    /** Reads an opened stream until it ends; see {@link #stream}. */
    private boolean read(String base, int status, InputStream in) throws IOException {
        if (status != 200) {
            byte[] problem;
            try (in) {
                problem = in.readNBytes(64 * 1024);
            }
            Wire.Problem p = null;
            try {
                p = problem.length == 0 ? null : Wire.JSON.readValue(problem, Wire.Problem.class);
            } catch (IOException notAProblemDocument) {
                // the status says enough
            }
            throw Failures.fromAnswer("watching " + options + " at " + base, status, p);
        }
        connectedOnce = true;
        streamsOpened.incrementAndGet();
        firstOpen.complete(null);
        replay.clear();
        replay.addAll(atLast);
        boolean received = false;
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            StringBuilder data = new StringBuilder();
            String line;
            while (!closed && (line = reader.readLine()) != null) {
                lastReadNanos = System.nanoTime();
                received = true;
                if (line.isEmpty()) {
                    if (data.length() > 0) {
                        dispatch(data.toString());
                        data.setLength(0);
                    }
                } else if (line.startsWith("data:")) {
                    if (data.length() > 0) {
                        data.append('\n');
                    }
                    data.append(fieldValue(line, 5));
                }
                // comments (":"), "id:" (the revision is in the data too) and "event:" (so is the type) are skipped
            }
        }
        return received;
    }

    private static String fieldValue(String line, int colon) {
        return line.length() > colon && line.charAt(colon) == ' ' ? line.substring(colon + 1) : line.substring(colon);
    }

    /** What to resume from: see the class comment. Null: from now. */
    private String sinceParameter() {
        if (lastRevision >= 0) {
            if (resyncAtLast || atLast.isEmpty()) {
                return Long.toString(lastRevision);
            }
            return Long.toString(Math.max(0, lastRevision - 1));
        }
        if (since >= 0) {
            return Long.toString(since);
        }
        return connectedOnce ? "0" : null;
    }

    private void dispatch(String data) throws IOException {
        JsonNode json = Wire.JSON.readTree(data);
        LockEvent event = parse(json);
        if (event == null) {
            return;
        }
        long revision = event.revision();
        if (revision < lastRevision && event.type() != LockEvent.Type.RESYNC) {
            return; // never sent by a gateway (it sends only later revisions); kept out to be sure
        }
        // A RESYNC at a lower revision is the new start: the cell's revisions went back (ZooKeeper restored from a
        // backup, a new ensemble), the gateway found our revision in its future.
        if (revision == lastRevision) {
            if (resyncAtLast || replay.remove(event)) {
                return; // delivered before the reconnect
            }
            atLast.add(event);
        } else {
            lastRevision = revision;
            atLast.clear();
            replay.clear();
            resyncAtLast = event.type() == LockEvent.Type.RESYNC;
            if (!resyncAtLast) {
                atLast.add(event);
            }
        }
        synchronized (delivering) {
            if (closed) {
                return;
            }
            try {
                listener.accept(event);
            } catch (RuntimeException e) {
                log.log(System.Logger.Level.WARNING, "watch listener of " + options + " failed on " + event, e);
            }
        }
    }

    private LockEvent parse(JsonNode json) throws IOException {
        String type = json.path("type").asText("");
        long revision = json.path("revision").asLong(-1);
        if ("RESYNC".equals(type)) {
            List<LockState> locks = new ArrayList<>();
            for (JsonNode lock : json.path("locks")) {
                locks.add(Wire.JSON.treeToValue(lock, LockState.class));
            }
            return new LockEvent(revision, LockEvent.Type.RESYNC, null, null, null, null, locks);
        }
        LockEvent.Type t;
        try {
            t = LockEvent.Type.valueOf(type);
        } catch (IllegalArgumentException unknown) {
            log.log(System.Logger.Level.DEBUG, "watch of {0}: skipping an event of unknown type {1}", options, type);
            return null;
        }
        LockMode mode = null;
        if (json.hasNonNull("mode")) {
            try {
                mode = LockMode.valueOf(json.get("mode").asText());
            } catch (IllegalArgumentException unknown) {
                // a newer gateway's mode: left null
            }
        }
        return new LockEvent(revision, t, textOrNull(json, "name"), textOrNull(json, "session_id"),
                textOrNull(json, "client_id"), mode,
                json.hasNonNull("token") ? json.get("token").asLong() : null, List.of());
    }

    private static String textOrNull(JsonNode json, String field) {
        return json.hasNonNull(field) ? json.get(field).asText() : null;
    }
}
