package io.warden.console.view;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.StringJoiner;

/**
 * The console's URLs, built in one place so that names with slashes and odd characters always round-trip. Every
 * path segment and query value is percent-encoded; a lock name keeps its slashes (the lock route takes the rest of
 * the path).
 *
 * <p>Concurrency: stateless; safe from any thread.
 */
public final class Urls {
    public static final String ROOT = "/console";

    private Urls() {
    }

    public static String overview() {
        return ROOT;
    }

    public static String cells() {
        return ROOT + "/cells";
    }

    public static String lock(String name) {
        StringJoiner path = new StringJoiner("/", ROOT + "/locks/", "");
        for (String segment : name.split("/", -1)) {
            path.add(segment(segment));
        }
        return path.toString();
    }

    public static String namespace(String namespace) {
        return ROOT + "/ns/" + segment(namespace);
    }

    public static String namespace(String namespace, String prefix, String after, int limit) {
        return namespace(namespace) + query("prefix", prefix, "after", after,
                "limit", limit == LockListing.DEFAULT_LIMIT ? null : Integer.toString(limit));
    }

    public static String session(String sessionId) {
        return ROOT + "/sessions/" + segment(sessionId);
    }

    public static String sessions(String namespace, String client) {
        return ROOT + "/sessions" + query("ns", namespace, "client", client);
    }

    public static String forceRelease(String lock, long token) {
        return ROOT + "/actions/force-release" + query("name", lock, "token", Long.toString(token));
    }

    public static String askRelease(String lock, long token) {
        return ROOT + "/actions/ask-release" + query("name", lock, "token", Long.toString(token));
    }

    public static String expireSession(String sessionId) {
        return ROOT + "/actions/expire-session" + query("session", sessionId);
    }

    public static String login(String next) {
        return ROOT + "/login" + query("next", next);
    }

    /** {@code ?k1=v1&k2=v2} of the pairs whose value is neither null nor empty; empty when none is. */
    public static String query(String... pairs) {
        StringJoiner q = new StringJoiner("&", "?", "");
        q.setEmptyValue("");
        for (int i = 0; i + 1 < pairs.length; i += 2) {
            if (pairs[i + 1] != null && !pairs[i + 1].isEmpty()) {
                q.add(component(pairs[i]) + "=" + component(pairs[i + 1]));
            }
        }
        return q.toString();
    }

    /** A query component ({@code application/x-www-form-urlencoded}). */
    public static String component(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /** A path segment: like a query component, but a space is {@code %20} (a {@code +} in a path is a plus). */
    public static String segment(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
