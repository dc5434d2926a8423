package io.warden.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code warden ls}: the live locks ({@code GET /v1/locks}), following every page. */
@Command(name = "ls", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
        description = "List live locks (held or waited for) with their mode and counts of holders and waiters.",
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {
        "  0:   listed (also when none)", "  2:   bad namespace or prefix", "  5:   no gateway reachable"})
final class LsCommand implements Callable<Integer> {
    @ParentCommand
    WardenCli root;

    @Option(names = "--namespace", paramLabel = "NS", description = "Only locks of this namespace.")
    String namespace;

    @Option(names = "--prefix", paramLabel = "P", description = "Only locks whose name starts with P.")
    String prefix;

    @Option(names = "--limit", paramLabel = "N", description = "At most N locks (default: all).")
    Integer limit;

    @Override
    public Integer call() {
        if (limit != null && limit < 1) {
            throw root.usage("--limit must be at least 1");
        }
        Gateways gateways = root.gateways();
        ArrayNode all = Gateways.JSON.createArrayNode();
        JsonNode revision = null;
        String after = null;
        do {
            Map<String, String> q = new LinkedHashMap<>();
            q.put("namespace", namespace);
            q.put("prefix", prefix);
            q.put("after", after);
            if (limit != null) {
                q.put("limit", Integer.toString(limit - all.size()));
            }
            Gateways.Reply r = gateways.get("/v1/locks" + Gateways.query(q));
            if (!r.ok()) {
                throw Gateways.failure("could not list locks", r);
            }
            r.body().path("locks").forEach(all::add);
            revision = r.body().get("revision");
            after = r.body().path("next_after").asText(null);
        } while (after != null && (limit == null || all.size() < limit));
        if (root.json) {
            ObjectNode doc = Gateways.JSON.createObjectNode();
            doc.set("locks", all);
            if (revision != null) {
                doc.set("revision", revision);
            }
            root.printJson(doc);
            return ExitCodes.OK;
        }
        PrintWriter out = root.out();
        int width = 4;
        for (JsonNode l : all) {
            width = Math.max(width, l.path("name").asText().length());
        }
        out.printf("%-" + width + "s  %-9s  %7s  %7s%n", "NAME", "MODE", "HOLDERS", "WAITERS");
        for (JsonNode l : all) {
            if (l.path("too_large").asBoolean()) {
                // more entries than the gateway reads in one ZooKeeper reply: who holds it is not known
                out.printf("%-" + width + "s  %-9s  %7s  %7s  (%d entries: too large to read)%n", l.path("name").asText(),
                        "TOO_LARGE", "?", "?", l.path("entries").asInt());
                continue;
            }
            out.printf("%-" + width + "s  %-9s  %7d  %7d%n", l.path("name").asText(), l.path("mode").asText(),
                    l.path("holders").asInt(), l.path("waiters").asInt());
        }
        out.flush();
        return ExitCodes.OK;
    }
}
