package io.warden.client.direct;

import java.util.regex.Pattern;

/**
 * Lock names as the gateway accepts them (contract §1): {@code namespace/path}, the namespace
 * {@code [a-z][a-z0-9-]{0,62}}, then 1–8 segments of {@code [A-Za-z0-9._:-]{1,128}} none starting with {@code _} or
 * {@code .}, at most 512 characters in all. In direct mode nothing checks again, and a name the gateway would refuse
 * must not make a ZooKeeper path the gateway never looks at, so the check here is the only one. (The same rules as
 * the HTTP client's {@code io.warden.client.LockNames}, which is package-private there.)
 */
final class DirectNames {
    static final int MAX_LENGTH = 512;
    private static final Pattern NAMESPACE = Pattern.compile("[a-z][a-z0-9-]{0,62}");
    private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9:-][A-Za-z0-9._:-]{0,127}");

    private DirectNames() {
    }

    static String check(String name) {
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

    /** A cell's chroot ({@code /warden}, {@code /a/b}, or {@code /}) as a Curator namespace ({@code warden}, {@code a/b}, or null). */
    static String namespace(String chroot) {
        if (chroot == null) {
            throw new NullPointerException("chroot is null");
        }
        if (!chroot.startsWith("/") || (chroot.length() > 1 && chroot.endsWith("/")) || chroot.contains("//")) {
            throw new IllegalArgumentException("chroot must be an absolute ZooKeeper path such as /warden, got '" + chroot + "'");
        }
        return chroot.length() == 1 ? null : chroot.substring(1);
    }
}
