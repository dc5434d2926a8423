package io.warden.service.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The principals of an auth file ({@code --auth-file}), parsed and checked as a whole: a file with any bad entry is
 * refused with one line naming the entry, so a gateway keeps the last good one (see {@link Authenticator}).
 *
 * <pre>
 * principals:
 *   - name: billing                      # [a-z0-9._-]{1,64}
 *     token_sha256: 9f86d08...           # hex SHA-256 of the bearer token (tokens are never stored in clear)
 *     grants: [{namespace: payments, role: lock}, {namespace: "*", role: read}]
 *   - name: ci-runner.example.com        # no token: named by a verified client certificate (mTLS) only
 *     grants: [{namespace: builds, role: lock}]
 * </pre>
 *
 * <p>Immutable once made; lookups are map reads, safe from any thread.
 */
public final class AuthFile {
    /** At most this many principals: the file is read whole, and every gateway keeps it in memory. */
    public static final int MAX_PRINCIPALS = 10_000;
    /** A file larger than this is refused before it is parsed. */
    public static final long MAX_BYTES = 4L << 20;

    private static final Pattern NAME = Pattern.compile("[a-z0-9._-]{1,64}");
    private static final Pattern HASH = Pattern.compile("[0-9a-fA-F]{64}");
    private static final Pattern NAMESPACE = Pattern.compile("[a-z][a-z0-9-]{0,62}");
    private static final Set<String> TOP = Set.of("principals");
    private static final Set<String> ENTRY = Set.of("name", "token_sha256", "grants");
    private static final Set<String> GRANT = Set.of("namespace", "role");

    private final Map<String, Caller> byName;
    private final Map<String, Caller> byTokenHash;

    private AuthFile(Map<String, Caller> byName, Map<String, Caller> byTokenHash) {
        this.byName = Map.copyOf(byName);
        this.byTokenHash = Map.copyOf(byTokenHash);
    }

    /** Reads and checks {@code file}; {@link AuthFileException} names what is wrong in one line. */
    public static AuthFile read(Path file) {
        byte[] bytes;
        try {
            long size = Files.size(file);
            if (size > MAX_BYTES) {
                throw new AuthFileException("auth file " + file + ": " + size + " bytes, more than the " + MAX_BYTES + " allowed");
            }
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new AuthFileException("auth file " + file + ": cannot be read: " + e);
        }
        return parse(file.toString(), bytes);
    }

    /** Parses the YAML {@code bytes}; {@code source} names the file in messages. */
    static AuthFile parse(String source, byte[] bytes) {
        JsonNode root;
        try {
            root = new ObjectMapper(new YAMLFactory()).readTree(bytes);
        } catch (IOException e) {
            String why = e.getMessage() == null ? e.toString() : e.getMessage().lines().findFirst().orElse("");
            throw new AuthFileException("auth file " + source + ": not valid YAML: " + why);
        }
        String at = "auth file " + source + ": ";
        if (root == null || !root.isObject()) {
            throw new AuthFileException(at + "expected a mapping with the key 'principals'");
        }
        unknownKeys(at, root, TOP);
        JsonNode list = root.get("principals");
        if (list == null || !list.isArray()) {
            throw new AuthFileException(at + "'principals' must be a list");
        }
        if (list.size() > MAX_PRINCIPALS) {
            throw new AuthFileException(at + list.size() + " principals, more than the " + MAX_PRINCIPALS + " allowed");
        }
        Map<String, Caller> byName = new LinkedHashMap<>();
        Map<String, Caller> byHash = new LinkedHashMap<>();
        for (int i = 0; i < list.size(); i++) {
            JsonNode entry = list.get(i);
            String where = at + "principals[" + i + "]";
            if (!entry.isObject()) {
                throw new AuthFileException(where + ": expected a mapping with name, token_sha256 and grants");
            }
            String name = text(entry, "name");
            if (name == null || !NAME.matcher(name).matches()) {
                throw new AuthFileException(where + ": name must match [a-z0-9._-]{1,64}");
            }
            where += " (" + name + ")";
            unknownKeys(where + ": ", entry, ENTRY);
            if (byName.containsKey(name)) {
                throw new AuthFileException(where + ": the name is used by an earlier entry too");
            }
            Caller caller = new Caller(name, grants(where, entry.get("grants")));
            byName.put(name, caller);
            JsonNode hashNode = entry.get("token_sha256");
            if (hashNode != null && !hashNode.isNull()) {
                String hash = hashNode.isTextual() ? hashNode.asText() : null;
                if (hash == null || !HASH.matcher(hash).matches()) {
                    throw new AuthFileException(where + ": token_sha256 must be 64 hex characters (sha256sum of the token)");
                }
                hash = hash.toLowerCase(java.util.Locale.ROOT);
                Caller other = byHash.putIfAbsent(hash, caller);
                if (other != null) {
                    throw new AuthFileException(where + ": token_sha256 is the same as " + other.name() + "'s");
                }
            }
        }
        return new AuthFile(byName, byHash);
    }

    private static List<Grant> grants(String where, JsonNode node) {
        if (node == null || !node.isArray() || node.isEmpty()) {
            throw new AuthFileException(where + ": grants must be a non-empty list of {namespace, role}");
        }
        List<Grant> grants = new ArrayList<>();
        for (int g = 0; g < node.size(); g++) {
            JsonNode grant = node.get(g);
            String gw = where + ": grants[" + g + "]";
            if (!grant.isObject()) {
                throw new AuthFileException(gw + ": expected {namespace, role}");
            }
            unknownKeys(gw + ": ", grant, GRANT);
            String ns = text(grant, "namespace");
            if (ns == null || !(ns.equals(Grant.ANY) || NAMESPACE.matcher(ns).matches())) {
                throw new AuthFileException(gw + ": namespace must be \"*\" or match [a-z][a-z0-9-]{0,62}");
            }
            Role role = Role.parse(text(grant, "role"));
            if (role == null) {
                throw new AuthFileException(gw + ": role must be read, lock or admin");
            }
            grants.add(new Grant(ns, role));
        }
        return grants;
    }

    private static String text(JsonNode node, String key) {
        JsonNode v = node.get(key);
        return v != null && v.isTextual() ? v.asText() : null;
    }

    private static void unknownKeys(String where, JsonNode node, Set<String> allowed) {
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String key = it.next();
            if (!allowed.contains(key)) {
                throw new AuthFileException(where + "unknown key '" + key + "' (allowed: " + String.join(", ", new java.util.TreeSet<>(allowed)) + ")");
            }
        }
    }

    /** The principal whose token this is, or null. The token is hashed first: the file holds no token in clear. */
    public Caller byToken(String token) {
        return byTokenHash.get(sha256(token));
    }

    /** The principal named {@code name} (a client certificate's), or null. */
    public Caller byName(String name) {
        return byName.get(name);
    }

    public int size() {
        return byName.size();
    }

    /** Hex SHA-256 of the UTF-8 bytes of {@code token}, as {@code sha256sum} prints it. */
    public static String sha256(String token) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
