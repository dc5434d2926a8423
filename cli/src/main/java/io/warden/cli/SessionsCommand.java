package io.warden.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;

/** {@code warden sessions ID}: one session ({@code GET /v1/sessions/{id}}): its TTL, holds and queued requests. */
@Command(name = "sessions", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
        description = "Show a session (or a lease, which is a session): client, TTL and time left, holds with tokens, queued requests.",
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {
        "  0:   shown", "  2:   bad session id", "  5:   no gateway reachable", "  6:   no such session (expired or closed)"})
final class SessionsCommand implements Callable<Integer> {
    @ParentCommand
    WardenCli root;

    @Parameters(index = "0", paramLabel = "SESSION_ID", description = "Session id (or lease id).")
    String sessionId;

    @Override
    public Integer call() {
        Gateways.Reply r = root.gateways().get("/v1/sessions/" + Gateways.namePath(sessionId));
        if (!r.ok()) {
            throw Gateways.failure("could not read session " + sessionId, r);
        }
        JsonNode b = r.body();
        if (root.json) {
            root.printJson(b);
            return ExitCodes.OK;
        }
        PrintWriter out = root.out();
        out.println("session " + b.path("session_id").asText() + "  client " + b.path("client_id").asText()
                + "  ttl " + Durations.format(Duration.ofMillis(b.path("ttl_ms").asLong()))
                + "  remaining " + Durations.format(Duration.ofMillis(b.path("ttl_ms_remaining").asLong())));
        for (JsonNode h : b.path("holds")) {
            out.println("  holds    " + h.path("name").asText() + "  " + h.path("mode").asText() + "  token " + h.path("token").asLong());
        }
        for (JsonNode w : b.path("waiting")) {
            out.println("  waiting  " + w.path("name").asText() + "  " + w.path("mode").asText() + "  request " + w.path("request_id").asText());
        }
        out.flush();
        return ExitCodes.OK;
    }
}
