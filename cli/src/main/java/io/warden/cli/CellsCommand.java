package io.warden.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code warden cells}: the cells (ZooKeeper ensembles) the gateway serves ({@code GET /v1/cells}): each with whether it
 * serves now, why not, and the namespaces routed to it. {@code warden cells add} adds a cell, {@code warden cells move}
 * moves a namespace.
 */
@Command(name = "cells", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
        subcommands = {CellsAddCommand.class, CellsMoveCommand.class, CellsBumpTokensCommand.class},
        description = "List the cells (ZooKeeper ensembles) the gateways serve: each cell's state and the namespaces "
                + "routed to it (every other namespace is served by the cell named default).",
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {
        "  0:   listed, every cell serving", "  5:   no gateway reachable, or a cell listed does not serve",
        "  7:   not allowed"})
final class CellsCommand implements Callable<Integer> {
    @ParentCommand
    WardenCli root;

    @Override
    public Integer call() {
        Gateways.Reply r = root.gateways().get("/v1/cells");
        if (!r.ok()) {
            throw Gateways.failure("could not list the cells", r);
        }
        JsonNode cells = r.body().path("cells");
        boolean allServing = true;
        for (JsonNode c : cells) {
            allServing &= c.path("serving").asBoolean();
        }
        if (root.json) {
            root.printJson(r.body());
            return allServing ? ExitCodes.OK : ExitCodes.UNREACHABLE;
        }
        PrintWriter out = root.out();
        for (JsonNode c : cells) {
            List<String> namespaces = new ArrayList<>();
            c.path("namespaces").forEach(n -> namespaces.add(n.asText()));
            String where = c.hasNonNull("zk") ? "  " + c.path("zk").asText() + c.path("chroot").asText("") : "";
            String serves = c.path("name").asText().equals("default") ? "every namespace not routed elsewhere"
                    : namespaces.isEmpty() ? "none" : String.join(",", namespaces);
            out.println(c.path("name").asText() + "  " + (c.path("serving").asBoolean() ? "serving" : "NOT SERVING")
                    + where + "  namespaces: " + serves
                    + (c.hasNonNull("detail") ? "  (" + c.path("detail").asText() + ")" : ""));
        }
        out.flush();
        return allServing ? ExitCodes.OK : ExitCodes.UNREACHABLE;
    }
}
