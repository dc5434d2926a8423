package io.warden.service.lock;

import java.util.Map;

/**
 * The bounds of the lock engine's in-memory hints (docs/design.md, "Memory: what bounds every map"). Each such map only
 * saves a ZooKeeper read: an entry evicted (least recently used first, by Caffeine) costs one read when it would have
 * been used, never a wrong answer.
 */
final class Hints {
    /**
     * Per-session hints: 100,000, the default max-sessions-per-gateway, so that one hint per session tracked here, and
     * one made request per session, stay cached; about 25 MB each at most.
     */
    static final int PER_SESSION = 100_000;

    private Hints() {
    }

    /** A concurrent map of at most {@code max} entries, the least recently used evicted first. */
    static <K, V> Map<K, V> bounded(int max) {
        return com.github.benmanes.caffeine.cache.Caffeine.newBuilder().maximumSize(max).<K, V>build().asMap();
    }
}
