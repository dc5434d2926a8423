package io.warden.client;

import java.util.regex.Pattern;

/**
 * Checks lock names against the rules of docs/api.md (Conventions) before anything is sent: {@code namespace/path},
 * the namespace {@code [a-z][a-z0-9-]{0,62}}, then 1–8 segments of {@code [A-Za-z0-9._:-]{1,128}} none starting with
 * {@code _} or {@code .}, at most 512 characters in all. (The gateway checks again; this only fails faster and closer
 * to the bug.)
 *
 * <p>Public for the SDK's own packages (direct mode); not part of the supported API. Thread-safe (stateless).
 */
public final class LockNames {
    static final int MAX_LENGTH = 512;
    private static final Pattern NAMESPACE = Pattern.compile("[a-z][a-z0-9-]{0,62}");
    private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9:-][A-Za-z0-9._:-]{0,127}");

    private LockNames() {
    }

    /** Returns {@code name}, or throws {@link IllegalArgumentException} saying what is wrong with it. */
    public static String check(String name) {
        if (name == null) {
            throw new NullPointerException("lock name is null");
        }
        if (name.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("lock name is at most " + MAX_LENGTH + " characters, got " + name.length());
        }
        String[] parts = name.split("/", -1);
        if (parts.length < 2 || parts.length > 9) {
            throw new IllegalArgumentException("lock name '" + name + "' must be namespace/path with 1 to 8 path segments");
        }
        if (!NAMESPACE.matcher(parts[0]).matches()) {
            throw new IllegalArgumentException("lock name '" + name + "': namespace '" + parts[0]
                    + "' must match [a-z][a-z0-9-]{0,62}");
        }
        for (int i = 1; i < parts.length; i++) {
            if (!SEGMENT.matcher(parts[i]).matches()) {
                throw new IllegalArgumentException("lock name '" + name + "': segment '" + parts[i]
                        + "' must be 1-128 characters of [A-Za-z0-9._:-], not starting with '_' or '.'");
            }
        }
        return name;
    }

    /**
     * The lock's ZooKeeper node below the cell's chroot, {@code /locks/{namespace}/{shard}/{leaf}}: {@code leaf} is the
     * path with '/' written '~', {@code shard} the first 12 bits of the name's SHA-256 as 3 hex digits. A plain
     * Curator {@code InterProcessReadWriteLock} on this path (with the chroot, e.g. {@code /warden}) excludes, and is
     * excluded by, Warden's holders of the name. The gateway's {@code CellPaths.lock} is the same function.
     */
    public static String zkPath(String name) {
        check(name);
        int slash = name.indexOf('/');
        String namespace = name.substring(0, slash);
        byte[] hash;
        try {
            hash = java.security.MessageDigest.getInstance("SHA-256").digest(name.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
        int bits = (hash[0] & 0xff) << 4 | (hash[1] & 0xf0) >>> 4;
        return "/locks/" + namespace + "/" + String.format("%03x", bits) + "/" + name.substring(slash + 1).replace('/', '~');
    }
}
