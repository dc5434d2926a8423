package io.warden.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.io.PrintWriter;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code warden cells bump-tokens CELL --above N}: raises a cell's token floor ({@code POST /v1/cells/{cell}/token-floor})
 * so that every token it gives from now on is above N: after its ensemble was restored from an older snapshot.
 */
@Command(name = "bump-tokens", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
        description = "Raise a cell's token floor so every token it gives from now on is above --above (the largest "
                + "token it may have given before: after its ensemble was restored from an older snapshot). Never lowers it.",
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {
        "  0:   raised (or the cell's tokens were above already)", "  2:   bad cell or token", "  5:   no gateway reachable",
        "  7:   not allowed (an admin of every namespace only)"})
final class CellsBumpTokensCommand implements Callable<Integer> {
    @ParentCommand
    CellsCommand cells;

    @Parameters(index = "0", paramLabel = "CELL", description = "The cell (default, or a name of the gateways' cells).")
    String cell;

    @Option(names = "--above", required = true, paramLabel = "TOKEN",
            description = "Every token of the cell from now on is above this one.")
    long above;

    @Override
    public Integer call() {
        WardenCli root = cells.root;
        Gateways.Reply r = root.gateways().post("/v1/cells/" + Gateways.namePath(cell) + "/token-floor",
                Map.of("above", above), java.time.Duration.ZERO);
        if (!r.ok()) {
            throw Gateways.failure("could not raise the token floor of cell " + cell, r);
        }
        JsonNode b = r.body();
        if (root.json) {
            root.printJson(b);
            return ExitCodes.OK;
        }
        PrintWriter out = root.out();
        out.println(b.has("floor") ? "raised the token floor of cell " + cell + " to " + b.path("floor").asLong()
                + ": every token from now on is above " + above
                : "cell " + cell + ": every token from now on is above " + above + " already; nothing raised");
        out.flush();
        return ExitCodes.OK;
    }
}
