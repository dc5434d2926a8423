package io.warden.service.api;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The answer to a multi-lock acquire. {@code tokens} (name to token, in the request's order) is set when GRANTED: the
 * request holds every name. {@code position} when QUEUED: the entries ahead of the request on the first of its names,
 * in its order, that it does not hold yet (the one it waits for). {@code holders}: each name's holders, as far as they
 * were read. {@code revision} is the largest zxid the answer reflects.
 */
public record MultiAcquireResult(AcquireResult.Status status, Map<String, Long> tokens, Integer position,
                                 Map<String, List<Holder>> holders, long revision, String cell) {
    public MultiAcquireResult {
        tokens = tokens == null ? null : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(tokens));
        holders = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(holders));
    }

    /** An answer that names no cell: a one-cell gateway's. */
    public MultiAcquireResult(AcquireResult.Status status, Map<String, Long> tokens, Integer position,
                              Map<String, List<Holder>> holders, long revision) {
        this(status, tokens, position, holders, revision, null);
    }

    /** This answer, from cell {@code name}. */
    public MultiAcquireResult inCell(String name) {
        return new MultiAcquireResult(status, tokens, position, holders, revision, name);
    }
}
