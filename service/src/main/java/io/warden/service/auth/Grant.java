package io.warden.service.auth;

import java.util.Objects;

/** One grant of an auth-file principal: {@code role} in {@code namespace}, or in every namespace when it is {@code *}. */
public record Grant(String namespace, Role role) {
    public static final String ANY = "*";

    public Grant {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(role, "role");
    }

    boolean covers(String ns) {
        return namespace.equals(ANY) || namespace.equals(ns);
    }
}
