package io.warden.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/** {@code warden get NAME}: a lock's holders and waiters ({@code GET /v1/locks/{name}}, a linearizable read). */
@Command(name = "get", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
        description = "Show a lock: its mode (FREE, EXCLUSIVE, SHARED, SEMAPHORE), holders with their tokens, and waiters.",
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {
        "  0:   shown (also when FREE)", "  2:   bad lock name", "  5:   no gateway reachable"})
final class GetCommand implements Callable<Integer> {
    @ParentCommand
    WardenCli root;

    @Parameters(index = "0", paramLabel = "NAME", description = "Lock name, namespace/path.")
    String name;

    @Override
    public Integer call() {
        Gateways.Reply r = root.gateways().get("/v1/locks/" + Gateways.namePath(name));
        if (!r.ok()) {
            throw Gateways.failure("could not read " + name, r);
        }
        JsonNode b = r.body();
        if (root.json) {
            root.printJson(b);
            return ExitCodes.OK;
        }
        PrintWriter out = root.out();
        out.println(b.path("name").asText(name) + "  " + b.path("mode").asText() + "  (revision " + b.path("revision").asText("-") + ")");
        for (JsonNode h : b.path("holders")) {
            out.println("  holder  client " + h.path("client_id").asText() + "  session " + h.path("session_id").asText()
                    + "  " + h.path("mode").asText() + "  token " + h.path("token").asLong()
                    + (h.path("expired").asBoolean(false) ? "  (expired, lock-delay)" : ""));
        }
        for (JsonNode w : b.path("waiters")) {
            out.println("  waiter " + w.path("position").asInt() + "  client " + w.path("client_id").asText()
                    + "  session " + w.path("session_id").asText() + "  " + w.path("mode").asText()
                    + "  request " + w.path("request_id").asText());
        }
        out.flush();
        return ExitCodes.OK;
    }
}
