package io.warden.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code warden cells add CELL --zk HOST:PORT,... [--chroot PATH]}: adds a cell to every gateway ({@code PUT
 * /v1/cells/{cell}}). The gateway asked reaches the ensemble first, so an address it cannot reach adds nothing.
 */
@Command(name = "add", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
        description = "Add a cell (a ZooKeeper ensemble under a chroot) to every gateway. It serves no namespace until "
                + "one is moved to it (warden cells move). A cell's ensemble and chroot never change.",
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {
        "  0:   added (or there already, at this address)",
        "  2:   bad cell name, connect string or chroot, or an ensemble the gateway cannot reach",
        "  3:   not added: the cell exists at another address, another cell is on that ZooKeeper path, or the "
                + "deployment has the most cells", "  5:   no gateway reachable",
        "  7:   not allowed (an admin of every namespace only)"})
final class CellsAddCommand implements Callable<Integer> {
    @ParentCommand
    CellsCommand cells;

    @Parameters(index = "0", paramLabel = "CELL", description = "The new cell's name ([a-z][a-z0-9-]{0,31}, not default).")
    String cell;

    @Option(names = "--zk", required = true, paramLabel = "HOST:PORT,...",
            description = "The cell's ZooKeeper connect string, without a chroot.")
    String zk;

    @Option(names = "--chroot", paramLabel = "PATH", description = "The cell's chroot (default: the gateways' --chroot).")
    String chroot;

    @Override
    public Integer call() {
        WardenCli root = cells.root;
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("zk", zk);
        if (chroot != null) {
            body.put("chroot", chroot);
        }
        // The gateway reaches the ensemble before it answers: up to its start's wait, plus some.
        Gateways.Reply r = root.gateways().call("PUT", "/v1/cells/" + Gateways.namePath(cell), body,
                root.timeout.plus(Duration.ofSeconds(40)));
        if (!r.ok()) {
            throw Gateways.failure("could not add cell " + cell, r);
        }
        JsonNode b = r.body();
        if (root.json) {
            root.printJson(b);
            return ExitCodes.OK;
        }
        PrintWriter out = root.out();
        String where = b.path("zk").asText(zk) + b.path("chroot").asText(chroot == null ? "" : chroot);
        out.println(r.status() == 201
                ? "added cell " + cell + " at " + where + ": every gateway serves it; move namespaces to it with "
                        + "warden cells move NAMESPACE " + cell
                : "cell " + cell + " is there already, at " + where + "; nothing changed");
        out.flush();
        return ExitCodes.OK;
    }
}
