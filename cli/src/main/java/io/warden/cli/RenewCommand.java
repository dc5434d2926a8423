package io.warden.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code warden renew --lease ID}: keeps a lease alive for another TTL. */
@Command(name = "renew", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
        description = "Keep a lease alive for another --ttl (call it well within the TTL).",
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {
        "  0:   renewed", "  2:   usage error", "  5:   no gateway reachable", "  6:   the lease is gone (expired or released)"})
final class RenewCommand implements Callable<Integer> {
    @ParentCommand
    WardenCli root;

    @Option(names = "--lease", required = true, paramLabel = "ID", description = "The lease id 'warden acquire' printed.")
    String leaseId;

    @Override
    public Integer call() {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("lease_id", leaseId);
        body.put("ttl", root.ttl.toMillis());
        Gateways.Reply r = root.gateways().post("/lock/renew", body, Duration.ZERO);
        if (!r.ok()) {
            throw Gateways.failure("could not renew lease " + leaseId, r);
        }
        if (root.json) {
            root.printJson(r.body());
        } else {
            root.out().println("renewed " + leaseId + " for " + Durations.format(Duration.ofMillis(r.body().path("ttl").asLong())));
            root.out().flush();
        }
        return ExitCodes.OK;
    }
}
