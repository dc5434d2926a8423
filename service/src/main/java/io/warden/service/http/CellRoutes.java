package io.warden.service.http;

import io.javalin.http.Context;
import io.warden.service.api.CellView;
import io.warden.service.api.Warden;
import io.warden.service.auth.Caller;
import io.warden.service.auth.Role;

import java.util.List;

/**
 * {@code GET /v1/cells}: the cells this gateway serves, each with its state and the namespaces routed to it. Any caller
 * that may read somewhere sees the cells and their state, and the routed namespaces it may read; only an admin of every
 * namespace sees each cell's ensemble and chroot (they name the infrastructure).
 */
final class CellRoutes {
    /** The reply: one entry per cell, the default first. */
    record Reply(List<Cell> cells) {
    }

    /** One cell; {@code zk} and {@code chroot} are null for callers that are not admins everywhere. */
    record Cell(String name, String zk, String chroot, boolean serving, String detail, List<String> namespaces) {
    }

    private final Warden warden;
    private final Requests requests;
    private final Exchange exchange;
    private final Access access;

    CellRoutes(Warden warden, Requests requests, Exchange exchange, Access access) {
        this.warden = warden;
        this.requests = requests;
        this.exchange = exchange;
        this.access = access;
    }

    void cells(Context ctx) {
        requests.noQuery(exchange.query(ctx));
        Caller caller = Access.caller(ctx);
        access.needSomewhere(caller, Role.READ, "list cells");
        boolean admin = caller.mayEverywhere(Role.ADMIN);
        exchange.reply(ctx, warden::cells, cells -> new Reply(cells.stream().map(c -> view(c, caller, admin)).toList()));
    }

    private static Cell view(CellView c, Caller caller, boolean admin) {
        return new Cell(c.name(), admin ? c.zk() : null, admin ? c.chroot() : null, c.serving(), c.detail(),
                c.namespaces().stream().filter(ns -> caller.may(ns, Role.READ)).toList());
    }
}
