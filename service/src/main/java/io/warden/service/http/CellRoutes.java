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
 *
 * <p>{@code PUT /v1/cells/{cell}}: adds a cell ({@link #add}).
 *
 * <p>{@code PUT /v1/namespaces/{namespace}/cell}: moves a namespace to another cell; an admin of every namespace only
 * (it raises the target cell's token floor, which every namespace there sees). The call is held (no thread) until the
 * move is done.
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

    /**
     * {@code PUT /v1/cells/{cell}} {@code {zk, chroot?}}: adds a cell to every gateway; an admin of every namespace only
     * (it names infrastructure, and moves to it raise its floor). 201 with the cell when this call added it, 200 when it
     * was there already at that address. Held (no thread) while this gateway reaches the new ensemble.
     */
    void add(Context ctx) {
        requests.noQuery(exchange.query(ctx));
        String cell = Requests.cellName("cell", ctx.pathParam("cell"));
        Requests.AddCell a = requests.addCell(exchange.body(ctx));
        Caller caller = Access.caller(ctx);
        access.needEverywhere(caller, Role.ADMIN, "add cell " + cell);
        exchange.reply(ctx, added -> added.created() ? 201 : 200,
                () -> warden.addCell(cell, a.zk(), a.chroot(), caller.label()), added -> view(added.cell(), caller, true));
    }

    /** The reply of a move. */
    record Moved(String namespace, String from, String to, int forced, Long floor, long tookMs) {
    }

    void move(Context ctx) {
        requests.noQuery(exchange.query(ctx));
        String namespace = ctx.pathParam("namespace");
        io.warden.service.api.LockName.validateNamespace("namespace", namespace);
        Requests.Move m = requests.move(exchange.body(ctx));
        Caller caller = Access.caller(ctx);
        access.needEverywhere(caller, Role.ADMIN, "move namespace " + namespace);
        exchange.reply(ctx, () -> warden.moveNamespace(namespace, m.cell(), m.deadlineMs(), caller.label()),
                r -> new Moved(r.namespace(), r.from(), r.to(), r.forced(), r.floor() < 0 ? null : r.floor(), r.tookMs()));
    }

    /** The reply of a floor raise: the floor raised to, absent when the cell's tokens were above already. */
    record Raised(String cell, long above, Long floor) {
    }

    /** {@code POST /v1/cells/{cell}/token-floor} {@code {above}}: an admin of every namespace only. */
    void raiseFloor(Context ctx) {
        requests.noQuery(exchange.query(ctx));
        String cell = ctx.pathParam("cell");
        long above = requests.raiseFloor(exchange.body(ctx));
        Caller caller = Access.caller(ctx);
        access.needEverywhere(caller, Role.ADMIN, "raise the token floor of cell " + cell);
        exchange.reply(ctx, () -> warden.raiseTokenFloor(cell, above, caller.label()),
                floor -> new Raised(cell, above, floor < 0 ? null : floor));
    }

    private static Cell view(CellView c, Caller caller, boolean admin) {
        return new Cell(c.name(), admin ? c.zk() : null, admin ? c.chroot() : null, c.serving(), c.detail(),
                c.namespaces().stream().filter(ns -> caller.may(ns, Role.READ)).toList());
    }
}
