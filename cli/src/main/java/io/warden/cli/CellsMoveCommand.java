package io.warden.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code warden cells move NAMESPACE CELL}: moves a namespace to another cell ({@code PUT /v1/namespaces/{ns}/cell}),
 * waiting for the move to be done.
 */
@Command(name = "move", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
        description = "Move a namespace to another cell: new acquires wait while its holds in the old cell end (those left "
                + "at the deadline are ended, audited); tokens keep growing. Asking again completes a move cut short.",
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {
        "  0:   moved (or already there)", "  2:   bad namespace, cell or deadline",
        "  3:   not moved: the namespace is being moved to another cell, or its old cell has entries Warden cannot end "
                + "(it stays frozen: ask again once they are gone)",
        "  5:   no gateway reachable", "  7:   not allowed (an admin of every namespace only)"})
final class CellsMoveCommand implements Callable<Integer> {
    @ParentCommand
    CellsCommand cells;

    @Parameters(index = "0", paramLabel = "NAMESPACE", description = "The namespace to move.")
    String namespace;

    @Parameters(index = "1", paramLabel = "CELL", description = "The cell to move it to (default, or a name of the gateways' cells).")
    String cell;

    @Option(names = "--deadline", paramLabel = "DURATION", defaultValue = "30s", converter = Durations.Converter.class,
            description = "How long its holds in the old cell may take to end by themselves (default: ${DEFAULT-VALUE}; at most 5m).")
    Duration deadline;

    @Override
    public Integer call() {
        WardenCli root = cells.root;
        // The call is held until the move is done: at most the deadline, plus the lock-delays it waits, plus some.
        Gateways.Reply r = root.gateways().call("PUT", "/v1/namespaces/" + Gateways.namePath(namespace) + "/cell",
                Map.of("cell", cell, "deadline_ms", deadline.toMillis()),
                root.timeout.plus(deadline).plus(Duration.ofSeconds(70)));
        if (!r.ok()) {
            throw Gateways.failure("could not move namespace " + namespace + " to cell " + cell, r);
        }
        JsonNode b = r.body();
        if (root.json) {
            root.printJson(b);
            return ExitCodes.OK;
        }
        PrintWriter out = root.out();
        if (b.path("from").asText().equals(b.path("to").asText())) {
            out.println("namespace " + namespace + " is in cell " + cell + " already");
        } else {
            out.println("moved namespace " + namespace + " from cell " + b.path("from").asText() + " to cell "
                    + b.path("to").asText() + " in " + Durations.format(Duration.ofMillis(b.path("took_ms").asLong()))
                    + (b.path("forced").asInt() > 0 ? "; " + b.path("forced").asInt() + " holds and waits ended at the "
                    + "deadline" : ""));
        }
        out.flush();
        return ExitCodes.OK;
    }
}
