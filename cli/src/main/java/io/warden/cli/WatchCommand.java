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
@Command(name = "watch", mixinStandardHelpOptions = true,
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
    private Long lastRevision;

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
        HttpRequest request = HttpRequest.newBuilder(Gateways.resolve(endpoint, "/v1/watch" + Gateways.query(q)))
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
            StringBuilder data = new StringBuilder();
            for (String line; (line = reader.readLine()) != null; ) {
                if (line.isEmpty()) {
                    if (data.length() > 0 && emit(event, data.toString())) {
                        return true;
                    }
                    event = null;
                    data.setLength(0);
                } else if (line.startsWith("event:")) {
                    event = line.substring(6).trim();
                } else if (line.startsWith("data:")) {
                    if (data.length() > 0) {
                        data.append('\n');
                    }
                    data.append(line.substring(5).startsWith(" ") ? line.substring(6) : line.substring(5));
                }
                // "id:" repeats the revision, which data carries; ":" lines are keepalive comments
            }
        }
        return false;
    }

    private boolean emit(String event, String data) {
        JsonNode e = Gateways.parse(data);
        if (e.hasNonNull("revision")) {
            lastRevision = e.get("revision").asLong();
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
