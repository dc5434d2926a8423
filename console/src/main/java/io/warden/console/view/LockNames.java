package io.warden.console.view;

import java.util.regex.Pattern;

/**
 * The lock-name rules (docs/api.md, Conventions), so the console can say "not a lock name" before asking the gateway:
 * a namespace {@code [a-z][a-z0-9-]{0,62}}, then 1–8 segments of {@code [A-Za-z0-9._:-]{1,128}}, none starting with
 * {@code _} or {@code .}; at most 512 characters in all.
 *
 * <p>Concurrency: stateless; safe from any thread.
 */
public final class LockNames {
    public static final int MAX_LENGTH = 512;
    private static final Pattern NAMESPACE = Pattern.compile("[a-z][a-z0-9-]{0,62}");
    private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9:-][A-Za-z0-9._:-]{0,127}");

    private LockNames() {
    }

    public static boolean isNamespace(String s) {
        return s != null && NAMESPACE.matcher(s).matches();
    }

    public static boolean isLockName(String s) {
        if (s == null || s.length() > MAX_LENGTH) {
            return false;
        }
        String[] parts = s.split("/", -1);
        if (parts.length < 2 || parts.length > 9 || !isNamespace(parts[0])) {
            return false;
        }
        for (int i = 1; i < parts.length; i++) {
            if (!SEGMENT.matcher(parts[i]).matches()) {
                return false;
            }
        }
        return true;
    }

    /**
     * @throws InvalidInput naming {@code field} when {@code s} is not a lock name
     */
    public static String require(String field, String s) {
        if (!isLockName(s)) {
            throw new InvalidInput(field, "must be a lock name: namespace/path, e.g. payments/invoice-42 (the "
                    + "namespace [a-z][a-z0-9-]{0,62}, then 1 to 8 segments of [A-Za-z0-9._:-], at most "
                    + MAX_LENGTH + " characters)");
        }
        return s;
    }

    /** The first segment of a name or prefix. */
    public static String namespaceOf(String nameOrPrefix) {
        int slash = nameOrPrefix.indexOf('/');
        return slash < 0 ? nameOrPrefix : nameOrPrefix.substring(0, slash);
    }
}
