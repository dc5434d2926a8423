package io.warden.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code warden release --lease ID RESOURCE}: ends a lease taken with {@code warden acquire}. */
@Command(name = "release", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
        description = "End a lease taken with 'warden acquire', releasing its lock.",
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {
        "  0:   released", "  2:   usage error", "  5:   no gateway reachable",
        "  6:   nothing released: the lease is unknown or gone, or does not hold RESOURCE"})
final class ReleaseCommand implements Callable<Integer> {
    @ParentCommand
    WardenCli root;

    @Option(names = "--lease", required = true, paramLabel = "ID", description = "The lease id 'warden acquire' printed.")
    String leaseId;

    @Parameters(index = "0", paramLabel = "RESOURCE", description = "The resource of the lease.")
    String resource;

    @Override
    public Integer call() {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("resource", resource);
        body.put("lease_id", leaseId);
        Gateways.Reply r = root.gateways().post("/lock/release", body, Duration.ZERO);
        if (!r.ok()) {
            throw Gateways.failure("could not release " + resource, r);
        }
        boolean released = r.body().path("released").asBoolean(false);
        if (root.json) {
            root.printJson(r.body());
        } else if (released) {
            root.out().println("released " + resource);
            root.out().flush();
        }
        if (!released) {
            throw new CliException(ExitCodes.NOT_FOUND, "nothing released: lease " + leaseId
                    + " is unknown or gone, or does not hold " + resource);
        }
        return ExitCodes.OK;
    }
}
