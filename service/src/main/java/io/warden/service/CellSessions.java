package io.warden.service;

import io.warden.service.api.CloseResult;
import io.warden.service.api.SessionView;
import io.warden.service.api.WardenException;
import io.warden.service.session.SessionManager;
import io.warden.service.zk.Zk;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Sessions across the cells of a gateway that serves several. A session is opened in the default cell, its home; the
 * first time it acquires in another cell, its record is made there (same id, TTL and lock-delay;
 * {@link SessionManager#join}) and then that cell is added to the home record's list ({@link SessionManager#addCell}).
 * In that order: a record in a cell the home does not list yet holds nothing (the acquire comes after both) and simply
 * expires there, while a listed cell always has the record, unless the session expired or was closed there. A keepalive
 * is acknowledged only when every cell the home record lists acknowledges it too (each cell vouches as for a one-cell
 * session, guarantee 3), so no cell expires a session early; a cell that no longer has the session (it expired there
 * after keepalives failed to reach it) ends the session in every cell and the keepalive answers SESSION_NOT_FOUND. What
 * is not atomic across cells: a close or an expiry ends the session cell by cell (the home last), and a hold in one cell
 * may be released before another's.
 *
 * <p>Concurrency: immutable (the cells are the gateway's live {@link CellSet}); every call may come from any thread, and
 * each cell's session manager keeps its own rules.
 */
final class CellSessions {
    private static final Logger log = LoggerFactory.getLogger(CellSessions.class);

    private final CellRuntime home;
    /** Every cell by name, the default first (cells added while the gateway runs included). */
    private final CellSet cells;

    CellSessions(CellRuntime home, CellSet cells) {
        this.home = home;
        this.cells = cells;
    }

    /**
     * The session as its home cell knows it (client, TTL, time left), with its holds and waits in every cell it uses
     * (each cell's read once; the revision is the home's). A cell that cannot answer makes it a 503: a view without
     * some holds would look complete.
     */
    CompletableFuture<SessionView> view(String sessionId) {
        return home.service().session(sessionId).thenCompose(atHome -> otherCells(sessionId).thenCompose(others -> {
            List<CompletableFuture<SessionView>> views = new ArrayList<>();
            for (CellRuntime cell : others) {
                views.add(cell.service().session(sessionId).exceptionally(e -> {
                    if (Zk.unwrap(e) instanceof WardenException we
                            && we.code() == WardenException.ErrorCode.SESSION_NOT_FOUND) {
                        return null; // gone there (its end is under way): nothing of it to show
                    }
                    throw Zk.translate(e);
                }));
            }
            return CompletableFuture.allOf(views.toArray(CompletableFuture[]::new)).thenApply(v -> {
                List<SessionView.Hold> holds = new ArrayList<>(atHome.holds());
                List<SessionView.Wait> waiting = new ArrayList<>(atHome.waiting());
                for (CompletableFuture<SessionView> f : views) {
                    SessionView there = f.join();
                    if (there != null) {
                        holds.addAll(there.holds());
                        waiting.addAll(there.waiting());
                    }
                }
                return new SessionView(atHome.sessionId(), atHome.clientId(), atHome.ttlMs(), atHome.ttlMsRemaining(),
                        atHome.lockDelayMs(), holds, waiting, atHome.revision());
            });
        }));
    }

    /**
     * The home's keepalive, and each other cell's the session uses: all asked at once when this gateway tracks the session
     * (it knows the cells), the cells it learns of from the home's answer (a takeover reads the record) asked after it.
     * Acknowledged only when every one acknowledges.
     */
    CompletableFuture<Long> keepalive(String sessionId, Long newTtlMs) {
        List<String> known = home.sessions().cellsOf(sessionId);
        Map<String, CompletableFuture<Long>> asked = new LinkedHashMap<>();
        if (known != null) {
            for (String name : known) {
                asked.put(name, keepaliveIn(name, sessionId, newTtlMs));
            }
        }
        CompletableFuture<Long> atHome = home.service().keepalive(sessionId, newTtlMs);
        return atHome.thenCompose(ttl -> {
            List<String> others = home.sessions().cellsOf(sessionId);
            if (others == null || others.isEmpty()) {
                return CompletableFuture.completedFuture(ttl);
            }
            List<CompletableFuture<Long>> acks = new ArrayList<>();
            for (String name : others) {
                acks.add(asked.computeIfAbsent(name, n -> keepaliveIn(n, sessionId, newTtlMs)));
            }
            return CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).handle((v, err) -> {
                if (err == null) {
                    return CompletableFuture.completedFuture(ttl);
                }
                Throwable cause = Zk.unwrap(err);
                if (cause instanceof WardenException we && we.code() == WardenException.ErrorCode.SESSION_NOT_FOUND) {
                    // Gone in a cell it uses: it expired there (keepalives stopped reaching that cell) or was closed
                    // there by a close under way. Either way it ends everywhere, late in the other cells, never early.
                    log.info("session {} is gone in one of its cells {}: ending it in the others", sessionId, others);
                    return close(sessionId).<Long>handle((r, e) -> {
                        throw WardenException.sessionNotFound(sessionId);
                    });
                }
                return CompletableFuture.<Long>failedFuture(cause);
            }).thenCompose(f -> f);
        });
    }

    private CompletableFuture<Long> keepaliveIn(String cellName, String sessionId, Long newTtlMs) {
        CellRuntime cell = cells.get(cellName);
        return cell == null ? CompletableFuture.failedFuture(unknownCell(sessionId, cellName))
                : cell.service().keepalive(sessionId, newTtlMs);
    }

    private static WardenException unknownCell(String sessionId, String cell) {
        return WardenException.unavailable("session " + sessionId + " has locks in cell " + cell + ", which this gateway "
                + "does not serve; send it to a gateway that serves every cell", null);
    }

    /** Ends the session in every cell it uses, the home last (so that a retry after a failure still finds the list). */
    CompletableFuture<CloseResult> close(String sessionId) {
        return otherCells(sessionId).thenCompose(others -> {
            List<CompletableFuture<CloseResult>> closes = new ArrayList<>();
            for (CellRuntime cell : others) {
                closes.add(cell.service().closeSession(sessionId).exceptionally(e -> {
                    if (Zk.unwrap(e) instanceof WardenException we && we.code() == WardenException.ErrorCode.SESSION_NOT_FOUND) {
                        return new CloseResult(List.of(), List.of(), 0); // already gone there
                    }
                    throw Zk.translate(e);
                }));
            }
            return CompletableFuture.allOf(closes.toArray(CompletableFuture[]::new))
                    .thenCompose(v -> home.service().closeSession(sessionId))
                    .thenApply(atHome -> {
                        List<String> released = new ArrayList<>(atHome.released());
                        List<String> cancelled = new ArrayList<>(atHome.cancelled());
                        for (CompletableFuture<CloseResult> c : closes) {
                            released.addAll(c.join().released());
                            cancelled.addAll(c.join().cancelled());
                        }
                        return new CloseResult(released, cancelled, atHome.revision());
                    });
        });
    }

    /**
     * The cells besides the home that the session has records in: from the home cell's memory when this gateway tracks
     * the session there, else from its record (one read).
     */
    private CompletableFuture<List<CellRuntime>> otherCells(String sessionId) {
        try {
            SessionManager.validateSessionId(sessionId);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        List<String> known = home.sessions().cellsOf(sessionId);
        CompletableFuture<List<String>> names = known != null ? CompletableFuture.completedFuture(known)
                : home.sessions().record(sessionId).thenApply(r -> r.cells());
        return names.thenApply(list -> {
            List<CellRuntime> out = new ArrayList<>();
            for (String name : list) {
                CellRuntime cell = cells.get(name);
                if (cell == null) {
                    throw unknownCell(sessionId, name);
                }
                out.add(cell);
            }
            return out;
        });
    }

    /**
     * Makes sure the session has its record in {@code cell} and that its home lists the cell, before anything of the
     * session is written there: first the record in the cell (tracked by this gateway), then the home's list.
     */
    CompletableFuture<Void> joined(String sessionId, CellRuntime cell) {
        if (cell == home) {
            return CompletableFuture.completedFuture(null);
        }
        try {
            SessionManager.validateSessionId(sessionId);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        List<String> known = home.sessions().cellsOf(sessionId);
        if (known != null && known.contains(cell.name()) && cell.sessions().tracks(sessionId)) {
            return CompletableFuture.completedFuture(null);
        }
        return home.sessions().record(sessionId)
                .thenCompose(record -> cell.sessions().join(sessionId, record)
                        .thenCompose(ttl -> record.cells().contains(cell.name()) ? CompletableFuture.completedFuture(null)
                                : home.sessions().addCell(sessionId, cell.name())))
                .handle((v, err) -> {
                    if (err != null) {
                        throw Zk.translate(err);
                    }
                    return null;
                });
    }

    /** Ends the request in every cell of the session: a request id names one request, in whichever cell it was made. */
    CompletableFuture<Boolean> releaseRequest(String sessionId, String requestId) {
        return otherCells(sessionId).thenCompose(others -> {
            List<CompletableFuture<Boolean>> ends = new ArrayList<>();
            ends.add(home.service().releaseRequest(sessionId, requestId));
            for (CellRuntime cell : others) {
                ends.add(cell.service().releaseRequest(sessionId, requestId));
            }
            return CompletableFuture.allOf(ends.toArray(CompletableFuture[]::new))
                    .thenApply(v -> ends.stream().anyMatch(CompletableFuture::join));
        });
    }
}
