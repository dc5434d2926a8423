package io.warden.it.jepsen;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.client.BrokenElection;
import io.warden.client.Election;
import io.warden.client.ElectionListener;
import io.warden.client.Leadership;
import io.warden.client.SessionState;
import io.warden.client.WardenClient;
import io.warden.it.support.Await;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The election workload of the proof suite: {@link #CANDIDATES} threads in the workload's JVM, each an SDK client (its
 * own session, over every gateway) campaigning in one {@link Election} ({@link #ELECTION}). A candidate campaigns,
 * samples {@link Election#leadership()} every {@value #SAMPLE_MS} ms for a random while, then resigns (or, half the
 * time, campaigns on), and makes a new client when its session was lost. Faults (a stopped workload JVM, lost replies,
 * dead gateways) end leaderships by loss or by the local deadline; the election checker ({@link ElectionChecker})
 * looks at what every candidate believed and when.
 *
 * <p>What is recorded, as {@link Seen} lines in {@code DIR/election-PREFIX.jsonl}, for each election instance (one per
 * client; {@code election} names it): {@code CAMPAIGN} at the moment {@code campaign()} was called (the next term of
 * that instance is asked for after it); {@code ELECTED} and {@code DEFEATED} at the moment their listener was entered
 * (the term began before the first, ended before the second; an instance asks for its next term only after the
 * second); {@code LEADING} for a sample that found a valid term, from before the call to after it; {@code RESIGNED}
 * around {@code resign()} (the term, if any, had ended when it returned). Times are {@code System.nanoTime()}.
 *
 * <p>Concurrency: each candidate thread owns its client and election; the listeners run on the election's thread; both
 * append to a concurrent queue.
 */
final class ElectionWorkload {
    static final String ELECTION = "jepsen/election";
    static final int CANDIDATES = 3;
    static final long SAMPLE_MS = 20;

    /** One thing a candidate did or was told (see the class comment); {@code token} 0 where there is none. */
    record Seen(String election, String session, String kind, long token, long t0, long t1) {
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private final List<URI> gateways;
    private final long ttlMs;
    /** Null: the SDK's elections; else elections built with this deliberate bug. */
    private final BrokenElection.Bug bug;
    private final ConcurrentLinkedQueue<Seen> seen = new ConcurrentLinkedQueue<>();
    private final AtomicInteger instances = new AtomicInteger();

    ElectionWorkload(List<URI> gateways, long ttlMs, BrokenElection.Bug bug) {
        this.gateways = List.copyOf(gateways);
        this.ttlMs = ttlMs;
        this.bug = bug;
    }

    /** Starts the candidates; they stop at {@code until}. */
    List<Thread> start(String prefix, Random seeds, long until) {
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < CANDIDATES; i++) {
            long seed = seeds.nextLong();
            String process = prefix + "-candidate-" + i;
            Thread t = new Thread(() -> candidate(process, new Random(seed), until), process);
            threads.add(t);
            t.start();
        }
        return threads;
    }

    /** One candidate: an election instance of a client, recorded as {@code id}. */
    record Candidate(String id, WardenClient client, Election election) {
    }

    private void candidate(String process, Random rnd, long until) {
        while (System.nanoTime() - until < 0) {
            WardenClient client;
            try {
                client = client(process);
            } catch (RuntimeException e) {
                Await.sleepQuietly(Duration.ofMillis(200));
                continue;
            }
            try (client) {
                Candidate c = candidate(client, ELECTION, process + "#" + instances.incrementAndGet());
                try (Election ignored = c.election()) {
                    campaignOn(c, rnd, until);
                }
            } catch (RuntimeException e) {
                // no gateway for the watch, or the client went away: a new client
                Await.sleepQuietly(Duration.ofMillis(100));
            }
        }
    }

    WardenClient client(String clientId) {
        return client(clientId, gateways);
    }

    /** A client of the run's TTL through {@code endpoints} (e.g. proxies of the workload's own). */
    WardenClient client(String clientId, List<URI> endpoints) {
        return WardenClient.builder().endpoints(endpoints.stream().map(URI::toString).toArray(String[]::new))
                .clientId(clientId).sessionTtl(Duration.ofMillis(ttlMs)).build();
    }

    /** A candidate in the election {@code name} whose listeners record ELECTED and DEFEATED as {@code id}. */
    Candidate candidate(WardenClient client, String name, String id) {
        return candidate(client, name, id, null);
    }

    /** As {@link #candidate(WardenClient, String, String)}, campaigning {@code round} at a time (null: the SDK's). */
    Candidate candidate(WardenClient client, String name, String id, Duration round) {
        Election election = round != null ? BrokenElection.of(bug, round, client, name)
                : bug == null ? client.election(name) : BrokenElection.of(bug, client, name);
        String session = client.sessionId();
        election.addListener(new ElectionListener() {
            @Override
            public void elected(Leadership term) {
                long t = System.nanoTime();
                seen.add(new Seen(id, session, "ELECTED", term.token(), t, t));
            }

            @Override
            public void defeated(Leadership term) {
                long t = System.nanoTime();
                seen.add(new Seen(id, session, "DEFEATED", term.token(), t, t));
            }
        });
        return new Candidate(id, client, election);
    }

    private void campaignOn(Candidate c, Random rnd, long until) {
        while (System.nanoTime() - until < 0) {
            if (!campaign(c)) {
                return;
            }
            long phaseEnd = System.nanoTime() + Duration.ofMillis(500 + rnd.nextInt(2500)).toNanos();
            while (System.nanoTime() - phaseEnd < 0 && System.nanoTime() - until < 0) {
                if (c.client().state() == SessionState.LOST) {
                    return; // terminal: a new client
                }
                sample(c);
                Await.sleepQuietly(Duration.ofMillis(SAMPLE_MS));
            }
            if (rnd.nextBoolean()) {
                resign(c);
                Await.sleepQuietly(Duration.ofMillis(rnd.nextInt(300)));
            }
        }
        resign(c);
    }

    /** {@code campaign()}, recorded; false when the client or its session is gone. */
    boolean campaign(Candidate c) {
        long t0 = System.nanoTime();
        seen.add(new Seen(c.id(), c.client().sessionId(), "CAMPAIGN", 0, t0, t0));
        try {
            c.election().campaign();
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** One look at the election: a LEADING line when this candidate leads; returns the term. */
    Optional<Leadership> sample(Candidate c) {
        long t0 = System.nanoTime();
        Optional<Leadership> term = c.election().leadership();
        long t1 = System.nanoTime();
        term.ifPresent(l -> seen.add(new Seen(c.id(), c.client().sessionId(), "LEADING", l.token(), t0, t1)));
        return term;
    }

    void resign(Candidate c) {
        long t0 = System.nanoTime();
        try {
            c.election().resign();
        } catch (RuntimeException e) {
            // the session is gone: the term has ended all the same
        }
        seen.add(new Seen(c.id(), c.client().sessionId(), "RESIGNED", 0, t0, System.nanoTime()));
    }

    List<Seen> seen() {
        return List.copyOf(seen);
    }

    void write(Path file) {
        try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            for (Seen s : seen) {
                out.write(JSON.writeValueAsString(s));
                out.newLine();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("writing " + file, e);
        }
    }

    static List<Seen> read(Path file) {
        List<Seen> all = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                if (!line.isBlank()) {
                    all.add(JSON.readValue(line, Seen.class));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + file, e);
        }
        return all;
    }
}
