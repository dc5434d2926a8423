package io.warden.service.config;

import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/** The {@code zk-acl} setting's value: parsed when the setting is read, and into the ACL every node made gets. */
public final class ZkAcl {
    /** The schemes ZooKeeper knows. */
    private static final Set<String> SCHEMES = Set.of("world", "auth", "digest", "ip", "sasl", "x509", "super");

    private ZkAcl() {
    }

    /**
     * The ACL a {@code zk-acl} value stands for: {@code auto} ({@code sasl:USER:cdrwa} when {@code saslUser} is set,
     * else open), {@code open}, or {@code scheme:id:perms} entries separated by commas. An x509 id is a distinguished
     * name with commas of its own, so a comma starts a new entry only before a known scheme ({@link #SCHEMES}).
     *
     * @throws IllegalArgumentException saying what is wrong with which entry
     */
    public static List<ACL> parse(String text, String saslUser) {
        String value = text.strip();
        if (value.equals("open")) {
            return ZooDefs.Ids.OPEN_ACL_UNSAFE;
        }
        if (value.equals("auto")) {
            return saslUser == null ? ZooDefs.Ids.OPEN_ACL_UNSAFE
                    : readOnly(List.of(new ACL(ZooDefs.Perms.ALL, new Id("sasl", saslUser))));
        }
        List<String> entries = new ArrayList<>();
        for (String piece : value.split(",", -1)) {
            int colon = piece.indexOf(':');
            boolean starts = colon > 0 && SCHEMES.contains(piece.substring(0, colon).strip().toLowerCase(Locale.ROOT));
            if (starts || entries.isEmpty()) {
                entries.add(piece.strip());
            } else {
                entries.set(entries.size() - 1, entries.get(entries.size() - 1) + "," + piece);
            }
        }
        List<ACL> out = new ArrayList<>();
        for (String entry : entries) {
            int first = entry.indexOf(':');
            int last = entry.lastIndexOf(':');
            if (first <= 0 || last == first) {
                throw new IllegalArgumentException("\"" + entry + "\" is not scheme:id:perms");
            }
            String scheme = entry.substring(0, first).toLowerCase(Locale.ROOT);
            String id = entry.substring(first + 1, last);
            String perms = entry.substring(last + 1);
            if (!SCHEMES.contains(scheme)) {
                throw new IllegalArgumentException("\"" + entry + "\": unknown scheme " + scheme);
            }
            if (scheme.equals("world") && !id.equals("anyone")) {
                throw new IllegalArgumentException("\"" + entry + "\": the world scheme's only id is anyone");
            }
            if (id.isEmpty() && !scheme.equals("auth")) {
                throw new IllegalArgumentException("\"" + entry + "\": no id");
            }
            if (!perms.matches("[crwda]{1,5}") || perms.chars().distinct().count() != perms.length()) {
                throw new IllegalArgumentException("\"" + entry + "\": perms must be letters of crwda, each at most once");
            }
            int p = 0;
            for (char ch : perms.toCharArray()) {
                p |= switch (ch) {
                    case 'c' -> ZooDefs.Perms.CREATE;
                    case 'd' -> ZooDefs.Perms.DELETE;
                    case 'r' -> ZooDefs.Perms.READ;
                    case 'w' -> ZooDefs.Perms.WRITE;
                    default -> ZooDefs.Perms.ADMIN;
                };
            }
            out.add(new ACL(p, new Id(scheme, id)));
        }
        if (out.stream().noneMatch(a -> (a.getPerms() & ZooDefs.Perms.ALL) == ZooDefs.Perms.ALL)) {
            throw new IllegalArgumentException("no entry has all of cdrwa: the gateways themselves could not work the cell");
        }
        return readOnly(out);
    }

    /** Not {@code List.copyOf}: ZooKeeper's create asks the list {@code contains(null)}, which List.of's lists refuse. */
    private static List<ACL> readOnly(List<ACL> acl) {
        return java.util.Collections.unmodifiableList(new ArrayList<>(acl));
    }
}
