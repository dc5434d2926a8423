package io.warden.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code warden watch}: the {@code GET /v1/watch} Server-Sent Events stream, one line per event, until interrupted.
 * When a stream ends or breaks it reconnects (next gateway on failure) with {@code since_revision} set to the last
 * revision seen, so no event is missed (or a RESYNC with the current state comes first, when that history is gone).
 */
@Command(name = "watch", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
        description = {"Print lock events (QUEUED, GRANTED, RELEASED, CANCELLED, EXPIRED, RESYNC) of one lock or a "
                + "prefix as they happen, until Ctrl-C. Reconnects by itself, resuming after the last revision seen.",
                "With --json, each event is one line of JSON as the gateway sent it."},
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {
        "  0:   --max-events reached, or interrupted", "  2:   usage error, or the gateway refused the watch",
        "  5:   no gateway reachable when starting"})
final class WatchCommand implements Callable<Integer> {
    @ParentCommand
    WardenCli root;

    static final class Target {
        @Option(names = "--name", paramLabel = "N", description = "Watch one lock.")
        String name;

        @Option(names = "--prefix", paramLabel = "P", description = "Watch every lock whose name starts with P.")
        String prefix;
    }

    @ArgGroup(exclusive = true, multiplicity = "1")
    Target target;

    @Option(names = "--since", paramLabel = "REV",
            description = "Resume after this revision (0: first a RESYNC with the current state). Default: from now.")
    Long since;

    @Option(names = "--max-events", paramLabel = "N", description = "Stop after N events (default: never).")
    Long maxEvents;

    private long seen;
    /** The last revision the stream confirmed whole: the value of its last {@code id:} line (or --since). */
    private Long lastRevision;
    /** The revision of the events printed after the last {@code id:}: a transaction seen in part (null: none). */
    private Long partialRevision;
    /** How many events of {@link #partialRevision} were printed. */
    private int partialCount;
    /** Events of {@link #partialRevision} still to skip on this stream: the resume repeats the ones already printed. */
    private int skip;

    @Override
    public Integer call() throws Exception {
        if (since != null && since < 0) {
            throw root.usage("--since must not be negative");
        }
        if (maxEvents != null && maxEvents < 1) {
            throw root.usage("--max-events must be at least 1");
        }
        Gateways gateways = root.gateways();
        List<URI> endpoints = gateways.endpoints();
        lastRevision = since;
        boolean everConnected = false;
        int failuresInARow = 0;
        int next = 0;
        while (true) {
            URI endpoint = endpoints.get(next % endpoints.size());
            try {
                if (stream(gateways, endpoint)) {
                    return ExitCodes.OK;
                }
                everConnected = true;
                failuresInARow = 0;
            } catch (IOException e) {
                failuresInARow++;
                next++;
                if (!everConnected && failuresInARow >= endpoints.size()) {
                    throw new CliException(ExitCodes.UNREACHABLE, "no gateway answered the watch: " + Gateways.describe(e));
                }
                if (failuresInARow % endpoints.size() == 0) {
                    root.err().println("warden: watch: no gateway reachable (" + Gateways.describe(e) + "); retrying");
                    root.err().flush();
                    Thread.sleep(Math.min(5000, 200L * failuresInARow));
                }
            }
        }
    }

    /** Reads one stream to its end; true when --max-events was reached. */
    private boolean stream(Gateways gateways, URI endpoint) throws IOException, InterruptedException {
        Map<String, String> q = new LinkedHashMap<>();
        q.put("name", target.name);
        q.put("prefix", target.prefix);
        q.put("since_revision", lastRevision == null ? null : Long.toString(lastRevision));
        // The stream resumes after the last whole transaction: the events of a transaction it printed in part come
        // again, in the same order (every gateway publishes a transaction's events alike), and are not printed twice.
        skip = partialRevision == null ? 0 : partialCount;
        HttpRequest request = gateways.authorize(HttpRequest.newBuilder(Gateways.resolve(endpoint, "/v1/watch" + Gateways.query(q))))
                .header("Accept", "text/event-stream").GET().build();
        HttpResponse<InputStream> r = gateways.http().send(request, HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream in = r.body();
             BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            if (r.statusCode() == 503) {
                throw new IOException("503 from " + endpoint);
            }
            if (r.statusCode() != 200) {
                StringBuilder body = new StringBuilder();
                for (String line; (line = reader.readLine()) != null; ) {
                    body.append(line);
                }
                throw Gateways.failure("the gateway refused the watch", new Gateways.Reply(r.statusCode(), Gateways.parse(body.toString())));
            }
            String event = null;
            String id = null;
            StringBuilder data = new StringBuilder();
            for (String line; (line = reader.readLine()) != null; ) {
                if (line.isEmpty()) {
                    if (data.length() > 0 && emit(event, data.toString())) {
                        return true;
                    }
                    if (id != null) {
                        confirmed(id);
                    }
                    event = null;
                    id = null;
                    data.setLength(0);
                } else if (line.startsWith("id:")) {
                    id = line.substring(3).trim();
                } else if (line.startsWith("event:")) {
                    event = line.substring(6).trim();
                } else if (line.startsWith("data:")) {
                    if (data.length() > 0) {
                        data.append('\n');
                    }
                    data.append(line.substring(5).startsWith(" ") ? line.substring(6) : line.substring(5));
                }
                // ":" lines are keepalive comments
            }
        }
        return false;
    }

    /**
     * An {@code id:} line: the gateway sends it only after the last event of a transaction (several events share a
     * revision), so it, not an event's revision, is where a resume may start without skipping the rest of a
     * transaction.
     */
    private void confirmed(String id) {
        try {
            lastRevision = Long.parseLong(id);
        } catch (NumberFormatException e) {
            return;
        }
        partialRevision = null;
        partialCount = 0;
        skip = 0;
    }

    private boolean emit(String event, String data) {
        JsonNode e = Gateways.parse(data);
        if (e.hasNonNull("revision") && !"RESYNC".equals(e.path("type").asText(event))) {
            long revision = e.get("revision").asLong();
            if (skip > 0 && partialRevision == revision) {
                skip--;
                return false;
            }
            skip = 0;
            if (partialRevision == null || partialRevision != revision) {
                partialRevision = revision;
                partialCount = 0;
            }
            partialCount++;
        } else {
            // A RESYNC starts over from the state it shows: nothing printed before it is repeated.
            partialRevision = null;
            partialCount = 0;
            skip = 0;
        }
        if (root.json) {
            root.out().println(e.isObject() ? e.toString() : data);
        } else {
            String type = e.path("type").asText(event == null ? "?" : event);
            StringBuilder line = new StringBuilder().append(e.path("revision").asText("-")).append("  ").append(type);
            if (e.hasNonNull("name")) {
                line.append("  ").append(e.get("name").asText());
            }
            if (e.hasNonNull("mode")) {
                line.append("  ").append(e.get("mode").asText());
            }
            if (e.hasNonNull("token")) {
                line.append("  token ").append(e.get("token").asLong());
            }
            if (e.hasNonNull("session_id")) {
                line.append("  session ").append(e.get("session_id").asText());
            }
            if ("RESYNC".equals(type)) {
                line.append("  ").append(data);
            }
            root.out().println(line);
        }
        root.out().flush();
        seen++;
        return maxEvents != null && seen >= maxEvents;
    }
}
