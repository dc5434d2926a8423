package io.warden.service;

import io.warden.service.api.Warden;
import io.warden.service.config.WardenConfig;
import io.warden.service.time.Clock;

/**
 * One running gateway: a Curator client on the cell's chroot, the lock engine, sessions, and the HTTP API.
 * (Being written; the signatures are final.)
 */
public final class Gateway implements AutoCloseable {
    /** Connects to {@code config.zkConnect()} (must be set), registers the gateway and serves HTTP on {@code config.httpPort()} (0 = any free port). */
    public static Gateway start(WardenConfig config) {
        throw new UnsupportedOperationException("being written");
    }

    /** Same, with an injected clock (tests). */
    public static Gateway start(WardenConfig config, Clock clock) {
        throw new UnsupportedOperationException("being written");
    }

    public int httpPort() {
        throw new UnsupportedOperationException("being written");
    }

    public String gatewayId() {
        throw new UnsupportedOperationException("being written");
    }

    public Warden warden() {
        throw new UnsupportedOperationException("being written");
    }

    /** SIGTERM: stop taking new requests, answer held calls, deregister, stop. Idempotent. */
    public void drain() {
        throw new UnsupportedOperationException("being written");
    }

    /** Stops at once (no drain). Idempotent. */
    @Override
    public void close() {
        throw new UnsupportedOperationException("being written");
    }
}
