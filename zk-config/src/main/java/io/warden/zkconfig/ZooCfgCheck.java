package io.warden.zkconfig;

import io.warden.zkconfig.ZooCfgKeys.Key;
import io.warden.zkconfig.metrics.PrometheusMetricsProvider;
import org.apache.commons.text.similarity.LevenshteinDistance;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.zookeeper.metrics.impl.DefaultMetricsProvider;
import org.apache.zookeeper.server.quorum.QuorumPeerConfig;

/**
 * Checks a ZooKeeper 3.9 {@code zoo.cfg} for what ZooKeeper itself lets through: keys it does not know (which it
 * silently turns into unused system properties), values of the wrong form, keys set twice (the last one wins
 * silently), settings that only work as JVM flags, and {@code metricsProvider.*} keys the provider does not read.
 *
 * <p>{@code bin/zk-server --check CONF_DIR} runs {@link #main}: these checks, then ZooKeeper's own
 * {@link QuorumPeerConfig#parse}, which needs {@code dataDir/myid}. Exit status 0: valid; 2: invalid (one line per
 * problem on stderr); 1: usage or unreadable file.
 */
public final class ZooCfgCheck {
    private static final LevenshteinDistance LEVENSHTEIN = LevenshteinDistance.getDefaultInstance();
    /** One thing wrong with a {@code zoo.cfg}: {@code line} is 1-based. */
    public record Problem(int line, String key, String message) {
        @Override
        public String toString() {
            return "line " + line + ": " + key + ": " + message;
        }
    }

    /** One {@code key=value} line of a {@code zoo.cfg}, as {@link java.util.Properties} reads it (keys and values trimmed). */
    public record Entry(int line, String key, String value) {
    }

    private static final Pattern SERVER = Pattern.compile("server\\.(\\d+)");
    private static final Pattern GROUP_OR_WEIGHT = Pattern.compile("(group|weight)\\.\\d+");
    private static final int MAX_SERVER_ID_WITH_EXTENDED_TYPES = 254;

    private ZooCfgCheck() {
    }

    /** Every problem of the file, in line order; empty when it is fine. */
    public static List<Problem> check(Path zooCfg) {
        try {
            return check(Files.readAllLines(zooCfg, StandardCharsets.ISO_8859_1));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + zooCfg, e);
        }
    }

    /** {@link #check(Path)} on the lines of a file. */
    public static List<Problem> check(List<String> lines) {
        List<Problem> problems = new ArrayList<>();
        List<Entry> entries = read(lines, problems);
        Map<String, Entry> byKey = new HashMap<>();
        for (Entry e : entries) {
            Entry before = byKey.putIfAbsent(e.key(), e);
            if (before != null) {
                problems.add(new Problem(e.line(), e.key(), "set again (first on line " + before.line()
                        + "); ZooKeeper would silently use this later value"));
            }
        }
        String providerClass = Optional.ofNullable(byKey.get("metricsProvider.className")).map(Entry::value)
                .orElse(DefaultMetricsProvider.class.getName());
        boolean extendedTypes = Optional.ofNullable(byKey.get("extendedTypesEnabled")).map(e -> e.value().equals("true"))
                .orElse(false);
        for (Entry e : entries) {
            String problem = problem(e, providerClass, extendedTypes);
            if (problem != null) {
                problems.add(new Problem(e.line(), e.key(), problem));
            }
        }
        problems.sort(java.util.Comparator.comparingInt(Problem::line));
        return problems;
    }

    /** The entries of a file: keys and values split as {@link java.util.Properties#load} splits them. */
    public static List<Entry> read(List<String> lines, List<Problem> problems) {
        List<Entry> entries = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            int number = i + 1;
            if (line.isEmpty() || line.startsWith("#") || line.startsWith("!")) {
                continue;
            }
            if (line.contains("\\")) {
                problems.add(new Problem(number, line, "backslashes (escapes, continued lines) are not allowed here"));
                continue;
            }
            int end = 0;
            while (end < line.length() && "=: \t\f".indexOf(line.charAt(end)) < 0) {
                end++;
            }
            String key = line.substring(0, end);
            String rest = line.substring(end).stripLeading();
            if (!rest.isEmpty() && (rest.charAt(0) == '=' || rest.charAt(0) == ':')) {
                rest = rest.substring(1);
            }
            entries.add(new Entry(number, key, rest.strip()));
        }
        return entries;
    }

    private static String problem(Entry e, String providerClass, boolean extendedTypes) {
        String key = e.key();
        String value = e.value();
        Optional<Key> known = ZooCfgKeys.exact(key);
        if (known.isPresent()) {
            return known.get().type().problem(value);
        }
        Matcher server = SERVER.matcher(key);
        if (server.matches()) {
            long id = Long.parseLong(server.group(1));
            if (id < 1) {
                return "server ids start at 1";
            }
            if (extendedTypes && id > MAX_SERVER_ID_WITH_EXTENDED_TYPES) {
                return "with extendedTypesEnabled=true server ids must be 1-254 (Admin Guide: Advanced Configuration)";
            }
            return value.isEmpty() ? "expected host:quorumPort:electionPort[:role][;[clientAddress:]clientPort]" : null;
        }
        if (GROUP_OR_WEIGHT.matcher(key).matches()) {
            return ValueType.TEXT.problem(value);
        }
        if (key.startsWith("metricsProvider.")) {
            return metricsProviderProblem(key.substring("metricsProvider.".length()), value, providerClass);
        }
        if (key.startsWith("ssl.quorum.")) {
            ValueType type = ZooCfgKeys.SSL_SUFFIXES.get(key.substring("ssl.quorum.".length()));
            return type != null ? type.problem(value) : unknown(key, "ssl.quorum." , ZooCfgKeys.SSL_SUFFIXES.keySet());
        }
        if (key.startsWith("ssl.")) {
            String suffix = key.substring("ssl.".length());
            ValueType type = ZooCfgKeys.SSL_SUFFIXES.getOrDefault(suffix, ZooCfgKeys.SSL_CLIENT_ONLY_SUFFIXES.get(suffix));
            if (type != null) {
                return type.problem(value);
            }
            Set<String> all = new TreeSet<>(ZooCfgKeys.SSL_SUFFIXES.keySet());
            all.addAll(ZooCfgKeys.SSL_CLIENT_ONLY_SUFFIXES.keySet());
            return unknown(key, "ssl.", all);
        }
        if (key.startsWith("authProvider.") && key.length() > "authProvider.".length()) {
            return ValueType.CLASS.problem(value);
        }
        String misplaced = ZooCfgKeys.MISPLACED.get(key);
        if (misplaced != null) {
            return misplaced;
        }
        if (key.startsWith("zookeeper.")) {
            String bare = key.substring("zookeeper.".length());
            if (ZooCfgKeys.exact(bare).isPresent()) {
                return "drop the zookeeper. prefix: ZooKeeper adds it (write " + bare + ")";
            }
        }
        return "unknown key: ZooKeeper 3.9 would turn it into the unused system property zookeeper." + key
                + closest(key).map(c -> " (did you mean " + c + "?)").orElse("");
    }

    private static String metricsProviderProblem(String setting, String value, String providerClass) {
        if (providerClass.equals(PrometheusMetricsProvider.class.getName())) {
            if (!PrometheusMetricsProvider.CONFIG_KEYS.contains(setting)) {
                return "not a setting of " + providerClass + " (known: " + new TreeSet<>(PrometheusMetricsProvider.CONFIG_KEYS) + ")";
            }
            return switch (setting) {
                case "httpPort" -> ValueType.PORT.problem(value);
                case "exportJvmInfo" -> ValueType.BOOL.problem(value);
                default -> ValueType.HOST.problem(value);
            };
        }
        return "not a setting of " + providerClass + " (this check knows the settings of "
                + PrometheusMetricsProvider.class.getName() + " only)";
    }

    private static String unknown(String key, String prefix, Set<String> suffixes) {
        return "unknown key; " + prefix + "* keys are " + new TreeSet<>(suffixes);
    }

    /** A known key within two edits of a misspelt one, if there is exactly one best. */
    static Optional<String> closest(String key) {
        String best = null;
        int bestDistance = 3;
        for (Key k : ZooCfgKeys.all()) {
            int d = LEVENSHTEIN.apply(key.toLowerCase(java.util.Locale.ROOT), k.name().toLowerCase(java.util.Locale.ROOT));
            if (d < bestDistance) {
                bestDistance = d;
                best = k.name();
            }
        }
        return Optional.ofNullable(best);
    }


    /**
     * {@code ZooCfgCheck ZOO_CFG}: the checks above, then {@link QuorumPeerConfig#parse}; prints a summary line.
     */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length != 1) {
            err.println("usage: zk-server --check CONF_DIR   (checks CONF_DIR/zoo.cfg)");
            return 1;
        }
        Path cfg = Path.of(args[0]);
        if (!Files.isReadable(cfg)) {
            err.println("zk-server: cannot read " + cfg);
            return 1;
        }
        List<Problem> problems = check(cfg);
        for (Problem p : problems) {
            err.println("zk-server: " + cfg + ": " + p);
        }
        if (!problems.isEmpty()) {
            return 2;
        }
        QuorumPeerConfig config = new QuorumPeerConfig();
        try {
            config.parse(cfg.toString());
        } catch (QuorumPeerConfig.ConfigException | RuntimeException e) {
            StringBuilder why = new StringBuilder(String.valueOf(e.getMessage()));
            for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
                why.append(": ").append(c.getMessage());
            }
            err.println("zk-server: " + cfg + ": ZooKeeper rejects it: " + why);
            return 2;
        }
        out.println("zk-server: " + cfg + " is valid: server " + config.getServerId() + " of "
                + config.getQuorumVerifier().getVotingMembers().size() + " voting members, tickTime "
                + config.getTickTime() + " ms, session timeouts " + config.getMinSessionTimeout() + "-"
                + config.getMaxSessionTimeout() + " ms");
        return 0;
    }
}
