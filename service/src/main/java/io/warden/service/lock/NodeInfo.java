package io.warden.service.lock;

import io.warden.service.api.Mode;
import io.warden.service.queue.QueueNodeData;

/**
 * What a queue node says about its request, with its token (czxid plus the cell's token floor). {@code data} is null
 * for a node that is not Warden's (a plain Curator client's lock node). {@code ctimeMs} is the node's creation time (ZooKeeper's ctime: the
 * wall clock of the server that led the transaction).
 */
record NodeInfo(String path, long token, Mode mode, QueueNodeData data, long ctimeMs) {
    String sessionId() {
        return data == null ? null : data.sessionId();
    }

    String clientId() {
        return data == null ? "curator" : data.clientId();
    }

    String principal() {
        return data == null ? null : data.principal();
    }

    String requestId() {
        return data == null ? null : data.requestId();
    }
}
