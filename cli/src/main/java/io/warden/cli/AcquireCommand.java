package io.warden.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code warden acquire RESOURCE}: a lease (docs/api.md, {@code POST /lock/acquire}) that outlives this process: the
 * lease is a session of its own that holds the lock until {@code release}, or until its TTL runs out without a
 * {@code renew}.
 */
@Command(name = "acquire", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
        description = {"Take a lease on a resource (the lease API: the lock LEASE-NAMESPACE/RESOURCE, namespace "
                + "'default' unless the cell is configured otherwise). The lease outlives this process: renew it "
                + "within --ttl with 'warden renew', end it with 'warden release'.",
                "Prints the lease id, the fencing token and the granted TTL.",
                "Example: eval \"$(warden acquire --ttl 60s user:42 --env)\"; ...; warden release --lease \"$WARDEN_LEASE\" user:42"},
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {
        "  0:   granted", "  2:   usage error", "  3:   held by someone else (after --wait)", "  5:   no gateway reachable"})
final class AcquireCommand implements Callable<Integer> {
    @ParentCommand
    WardenCli root;

    @Parameters(index = "0", paramLabel = "RESOURCE", description = "The resource, e.g. user:42.")
    String resource;

    @Option(names = "--wait", paramLabel = "DURATION", converter = Durations.Converter.class, defaultValue = "0",
            description = "How long to wait while it is held (max 5m; default: try once).")
    Duration wait;

    @Option(names = "--env", description = "Print shell assignments WARDEN_LEASE=..., WARDEN_TOKEN=..., WARDEN_TTL_MS=... instead.")
    boolean env;

    @Override
    public Integer call() {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("resource", resource);
        body.put("client_id", root.clientId());
        body.put("ttl", root.ttl.toMillis());
        body.put("wait_ms", wait.toMillis());
        Gateways.Reply r = root.gateways().post("/lock/acquire", body, wait);
        if (!r.ok()) {
            if (r.status() == 409) {
                String holder = r.body().path("holder").path("client_id").asText(null);
                throw new CliException(ExitCodes.NOT_ACQUIRED, "resource " + resource + " is held"
                        + (holder == null ? "" : " by client '" + holder + "'"));
            }
            throw Gateways.failure("could not acquire " + resource, r);
        }
        JsonNode b = r.body();
        if (root.json) {
            root.printJson(b);
        } else if (env) {
            root.out().println("WARDEN_LEASE=" + b.path("lease_id").asText());
            root.out().println("WARDEN_TOKEN=" + b.path("fencing_token").asLong());
            root.out().println("WARDEN_TTL_MS=" + b.path("ttl").asLong());
        } else {
            root.out().println("lease  " + b.path("lease_id").asText());
            root.out().println("token  " + b.path("fencing_token").asLong());
            root.out().println("ttl    " + Durations.format(java.time.Duration.ofMillis(b.path("ttl").asLong())));
        }
        root.out().flush();
        return ExitCodes.OK;
    }
}
