package io.warden.client.direct;

import io.warden.client.LockNames;

/**
 * Lock names as the gateway accepts them (docs/api.md, Conventions): {@code namespace/path}, the namespace
 * {@code [a-z][a-z0-9-]{0,62}}, then 1–8 segments of {@code [A-Za-z0-9._:-]{1,128}} none starting with {@code _} or
 * {@code .}, at most 512 characters in all. In direct mode nothing checks again, and a name the gateway would refuse
 * must not make a ZooKeeper path the gateway never looks at, so the check here is the only one: the HTTP client's
 * {@link LockNames}.
 */
final class DirectNames {
    private DirectNames() {
    }

    /** The gateway's rules for lock names (docs/api.md, Conventions); see {@link LockNames#check}. */
    static String check(String name) {
        return LockNames.check(name);
    }

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
