package io.warden.service.config;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.apache.commons.text.similarity.LevenshteinDistance;

/**
 * Builds a {@link WardenConfig} from command-line flags, environment variables and a YAML file.
 *
 * <ul>
 *   <li>Precedence, per setting: flag &gt; environment variable &gt; config file &gt; default.</li>
 *   <li>Flags: {@code --http-port 7070} or {@code --http-port=7070}; each at most once.</li>
 *   <li>Environment: {@code WARDEN_} and the key in upper snake case ({@code WARDEN_HTTP_PORT}); {@code --zk} is
 *       {@code WARDEN_ZK_CONNECT}. An empty variable counts as unset.</li>
 *   <li>Config file: {@code --config FILE} or {@code WARDEN_CONFIG}; a YAML mapping whose keys are the flags
 *       without {@code --} ({@code http-port: 7070}).</li>
 *   <li>Durations are whole milliseconds; their names end in {@code -ms}.</li>
 * </ul>
 * Unknown flags and YAML keys, values out of range and inconsistent settings throw a {@link ConfigException}
 * whose message is one line naming the setting, where the value came from and what is allowed.
 *
 * <p>Thread-safety: immutable; {@link #load} may be called from any thread.
 */
public final class ConfigLoader {
    private static final LevenshteinDistance LEVENSHTEIN = LevenshteinDistance.getDefaultInstance();
    /** The flag, environment variable and help flag that are not settings of the record. */
    public static final String CONFIG_FLAG = "--config";
    public static final String CONFIG_ENV = "WARDEN_CONFIG";
    public static final String HELP_FLAG = "--help";
    public static final String VERSION_FLAG = "--version";

    private static final String ENV_PREFIX = "WARDEN_";
    private static final int MAX_SHOWN_VALUE = 60;

    private final Map<String, String> env;
    /** Checks of what settings name (see {@link #checking}). */
    private final FileChecks fileChecks;

    /** @param env the environment to read, e.g. {@code System.getenv()}; tests pass their own map */
    public ConfigLoader(Map<String, String> env) {
        this(Map.copyOf(Objects.requireNonNull(env, "env")), FileChecks.NONE);
    }

    private ConfigLoader(Map<String, String> env, FileChecks fileChecks) {
        this.env = env;
        this.fileChecks = fileChecks;
    }

    /**
     * A check of what settings name — that a certificate parses, a key store opens, a password or auth file reads —
     * made by the part of the gateway that will read it. Settings are plain values and this package knows no TLS,
     * ZooKeeper or auth code, so the gateway's entry point registers the checks ({@code io.warden.service.Settings});
     * a loader without them checks the values alone.
     */
    @FunctionalInterface
    public interface FileCheck {
        /** @throws IllegalArgumentException saying what is wrong */
        void check(WardenConfig config);
    }

    /**
     * The checks of what settings name; each may be null (not checked).
     *
     * @param tls        the HTTPS certificate, key and client CA (run when tls-cert is set; errors are tls-cert's)
     * @param zkPassword the ZooKeeper SASL password file (errors are zk-sasl-password-file's)
     * @param zkStores   the ZooKeeper TLS key and trust stores (errors are zk-tls-truststore's)
     * @param authFile   the auth file (run when auth-file is set; errors are auth-file's)
     */
    public record FileChecks(FileCheck tls, FileCheck zkPassword, FileCheck zkStores, FileCheck authFile) {
        static final FileChecks NONE = new FileChecks(null, null, null, null);
    }

    /** This loader, also running {@code checks} when settings are loaded. */
    public ConfigLoader checking(FileChecks checks) {
        return new ConfigLoader(env, Objects.requireNonNull(checks, "checks"));
    }

    /** Runs {@code check}, if any; its error becomes {@code setting}'s, as {@code message} says. */
    private static void runCheck(FileCheck check, Setting setting, WardenConfig c,
                                 java.util.function.UnaryOperator<String> message) {
        if (check == null) {
            return;
        }
        try {
            check.check(c);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(setting.key(), message.apply(e.getMessage()));
        }
    }

    /** A loader reading this process's environment. */
    public static ConfigLoader fromSystemEnvironment() {
        return new ConfigLoader(System.getenv());
    }

    /** True when {@code --help} (or {@code -h}) is among the arguments: print {@link #usage()} and stop. */
    public static boolean helpRequested(String... args) {
        for (String arg : args) {
            if (arg.equals(HELP_FLAG) || arg.equals("-h")) {
                return true;
            }
        }
        return false;
    }

    /** True when {@code --version} is among the arguments: print {@link BuildInfo#version()} and stop. */
    public static boolean versionRequested(String... args) {
        for (String arg : args) {
            if (arg.equals(VERSION_FLAG)) {
                return true;
            }
        }
        return false;
    }

    /** @see #load(List) */
    public WardenConfig load(String... args) {
        return load(List.of(args));
    }

    /**
     * Reads the flags in {@code args}, this loader's environment and the config file they name.
     *
     * @throws ConfigException for the first bad setting found, as one line
     */
    public WardenConfig load(List<String> args) {
        Map<Setting, Raw> flags = new EnumMap<>(Setting.class);
        Raw configFlag = parseFlags(args, flags);

        Raw configPath = configFlag != null ? configFlag : envValue(CONFIG_ENV);
        Map<Setting, Raw> file = configPath == null ? Map.of() : readFile(configPath);

        Map<Setting, Raw> fromEnv = new EnumMap<>(Setting.class);
        for (Setting s : Setting.values()) {
            Raw raw = envValue(s.envVar());
            if (raw != null) {
                fromEnv.put(s, raw);
            }
        }

        WardenConfig.Builder builder = WardenConfig.builder();
        Map<Setting, String> sources = new EnumMap<>(Setting.class);
        for (Setting s : Setting.values()) {
            Raw raw = flags.containsKey(s) ? flags.get(s) : fromEnv.containsKey(s) ? fromEnv.get(s) : file.get(s);
            if (raw == null) {
                sources.put(s, "default");
                continue;
            }
            s.set(builder, parse(s, raw));
            sources.put(s, raw.source());
        }
        WardenConfig config = builder.build();
        checkConsistency(config, sources);
        return config;
    }

    /** The {@code WARDEN_*} variables of this loader's environment that are no setting (likely typos). */
    public List<String> unknownEnvironmentVariables() {
        Set<String> known = new TreeSet<>();
        known.add(CONFIG_ENV);
        for (Setting s : Setting.values()) {
            known.add(s.envVar());
        }
        List<String> unknown = new ArrayList<>();
        for (String name : new TreeSet<>(env.keySet())) {
            if (name.startsWith(ENV_PREFIX) && !known.contains(name)) {
                unknown.add(name);
            }
        }
        return unknown;
    }

    /** The {@code --help} text: every setting with its flag, environment variable and default. */
    public static String usage() {
        StringBuilder out = new StringBuilder();
        out.append("Usage: java -jar warden-service.jar [--setting value | --setting=value]...\n\n")
                .append("Starts a Warden gateway. Without --zk it starts an embedded single ZooKeeper server\n")
                .append("(for trying it out; data under <data-dir>/zookeeper); with --zk it joins that ensemble.\n\n")
                .append("Every setting has a flag, an environment variable and a config-file key (the flag\n")
                .append("without --). Precedence: flag > environment variable > config file > default.\n")
                .append("Durations are whole milliseconds. An empty environment variable counts as unset.\n\n");
        line(out, CONFIG_FLAG + " FILE", CONFIG_ENV, "(none)",
                "YAML file of settings, e.g. 'http-port: 7070'");
        line(out, HELP_FLAG, null, null, "print this text and exit");
        line(out, VERSION_FLAG, null, null, "print the gateway's version (its Maven artifact version) and exit");
        for (Setting s : Setting.values()) {
            line(out, s.flag() + " " + s.kind().metavar(), s.envVar(), s.defaultText(), s.help());
        }
        out.append("\nExit status: 0 after --help or --version, 1 when start-up fails, 2 for a bad setting. SIGTERM or SIGINT\n")
                .append("drains the gateway, then the JVM exits with 143 or 130.\n");
        return out.toString();
    }

    private static void line(StringBuilder out, String flag, String envVar, String defaultText, String help) {
        out.append("  ").append(flag);
        if (envVar != null) {
            out.append(" ".repeat(Math.max(1, 40 - flag.length()))).append("env ").append(envVar);
        }
        if (defaultText != null) {
            out.append(", default ").append(defaultText);
        }
        out.append("\n      ").append(help).append('\n');
    }

    // ---- flags ------------------------------------------------------------------------------------------------

    /** Fills {@code flags}; returns the {@code --config} value, or null. */
    private static Raw parseFlags(List<String> args, Map<Setting, Raw> flags) {
        Raw config = null;
        for (int i = 0; i < args.size(); i++) {
            String arg = Objects.requireNonNull(args.get(i), "argument");
            if (!arg.startsWith("--") || arg.length() == 2) {
                throw new ConfigException(null, "unexpected argument " + show(arg)
                        + ": settings are given as --name value or --name=value (see --help)");
            }
            int eq = arg.indexOf('=');
            String name = eq < 0 ? arg : arg.substring(0, eq);
            if (name.equals(HELP_FLAG)) {
                continue;
            }
            Setting setting = name.equals(CONFIG_FLAG) ? null : Setting.byKey(name.substring(2));
            if (setting == null && !name.equals(CONFIG_FLAG)) {
                throw new ConfigException(null, "unknown flag " + show(name) + suggestion(name.substring(2), "--")
                        + " (see --help)");
            }
            String value;
            if (eq >= 0) {
                value = arg.substring(eq + 1);
            } else if (i + 1 < args.size() && !args.get(i + 1).startsWith("--")) {
                value = args.get(++i);
            } else {
                throw new ConfigException(keyOf(setting), "flag " + name + " needs a value: " + name + " "
                        + (setting == null ? "FILE" : setting.kind().metavar()) + " or " + name + "=...");
            }
            Raw raw = new Raw(value, "flag " + name);
            boolean repeated = setting == null ? config != null : flags.containsKey(setting);
            if (repeated) {
                throw new ConfigException(keyOf(setting), "flag " + name + " is given more than once");
            }
            if (setting == null) {
                config = raw;
            } else {
                flags.put(setting, raw);
            }
        }
        return config;
    }

    private static String keyOf(Setting setting) {
        return setting == null ? "config" : setting.key();
    }

    // ---- environment ------------------------------------------------------------------------------------------

    private Raw envValue(String name) {
        String value = env.get(name);
        if (value == null || value.isBlank()) {
            return null;
        }
        return new Raw(value, "env " + name);
    }

    // ---- YAML file --------------------------------------------------------------------------------------------

    private static Map<Setting, Raw> readFile(Raw configPath) {
        String given = configPath.value().strip();
        if (given.isEmpty()) {
            throw new ConfigException("config", "config file (from " + configPath.source() + ") is empty:"
                    + " expected the path of a YAML file");
        }
        Path path;
        try {
            path = Path.of(given);
        } catch (InvalidPathException e) {
            throw new ConfigException("config", "config file " + show(given) + " (from " + configPath.source()
                    + ") is not a valid path");
        }
        String where = "config file " + path + " (from " + configPath.source() + ")";
        if (Files.isDirectory(path)) {
            throw new ConfigException("config", where + " is a directory: expected a YAML file");
        }
        JsonNode root;
        try {
            root = yamlMapper().readTree(path.toFile());
        } catch (JsonProcessingException e) {
            JsonLocation at = e.getLocation();
            String position = at == null ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr();
            throw new ConfigException("config", where + " is not valid YAML" + position + ": "
                    + firstLine(e.getOriginalMessage()));
        } catch (NoSuchFileException e) {
            throw new ConfigException("config", where + " does not exist");
        } catch (AccessDeniedException e) {
            throw new ConfigException("config", where + " cannot be read: permission denied");
        } catch (IOException e) {
            if (!Files.exists(path)) {
                throw new ConfigException("config", where + " does not exist");
            }
            throw new ConfigException("config", where + " cannot be read: " + e.getMessage());
        }
        Map<Setting, Raw> values = new EnumMap<>(Setting.class);
        if (root == null || root.isMissingNode() || root.isNull()) {
            return values; // an empty file sets nothing
        }
        if (!root.isObject()) {
            throw new ConfigException("config", where + " must be a YAML mapping of setting: value, e.g. 'http-port: 7070'");
        }
        String file = "file " + path;
        for (Map.Entry<String, JsonNode> field : root.properties()) {
            String key = field.getKey();
            Setting setting = Setting.byKey(key);
            if (setting == null) {
                String hint = key.startsWith("--") ? " (write keys without the leading --)" : suggestion(key, "");
                throw new ConfigException(null, "unknown key " + show(key) + " in " + where + hint
                        + "; the keys are the flags without -- (see --help)");
            }
            JsonNode node = field.getValue();
            String source = "key " + key + " in " + file;
            if (node.isNull()) {
                throw new ConfigException(key, "setting " + key + " (" + source + ") has no value: expected "
                        + setting.kind().allowed() + ", or leave the key out");
            }
            if (!node.isValueNode()) {
                throw new ConfigException(key, "setting " + key + " (" + source + ") must be a single value, not a "
                        + (node.isArray() ? "list" : "mapping") + ": expected " + setting.kind().allowed());
            }
            values.put(setting, new Raw(node.asText(), source));
        }
        return values;
    }

    private static YAMLMapper yamlMapper() {
        return YAMLMapper.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();
    }

    // ---- values -----------------------------------------------------------------------------------------------

    private static Object parse(Setting setting, Raw raw) {
        String text = raw.value().strip();
        try {
            if (text.isEmpty() && !setting.kind().allowsEmpty()) {
                throw new IllegalArgumentException();
            }
            return setting.kind().parse(text);
        } catch (IllegalArgumentException e) {
            String shown = setting.kind() == Setting.Kind.SECRET ? "(value hidden, " + raw.value().strip().length()
                    + " characters)" : show(raw.value());
            String reason = e instanceof Setting.BadValue ? e.getMessage() + "; " : "";
            throw new ConfigException(setting.key(), "invalid " + setting.key() + " " + shown
                    + " (from " + raw.source() + "): " + reason + "expected " + setting.kind().allowed());
        }
    }

    /** The rules that tie settings together; each names every setting involved and where it came from. */
    private void checkConsistency(WardenConfig c, Map<Setting, String> sources) {
        Duration min = c.sessionTtlMin();
        Duration max = c.sessionTtlMax();
        Duration dflt = c.sessionTtlDefault();
        if (min.compareTo(max) > 0) {
            throw new ConfigException(Setting.SESSION_TTL_MIN_MS.key(), describe(Setting.SESSION_TTL_MIN_MS, c, sources)
                    + " is greater than " + describe(Setting.SESSION_TTL_MAX_MS, c, sources)
                    + ": expected session-ttl-min-ms <= session-ttl-max-ms");
        }
        if (dflt.compareTo(min) < 0 || dflt.compareTo(max) > 0) {
            throw new ConfigException(Setting.SESSION_TTL_DEFAULT_MS.key(),
                    describe(Setting.SESSION_TTL_DEFAULT_MS, c, sources) + " is outside "
                            + describe(Setting.SESSION_TTL_MIN_MS, c, sources) + " .. "
                            + describe(Setting.SESSION_TTL_MAX_MS, c, sources)
                            + ": expected session-ttl-min-ms <= session-ttl-default-ms <= session-ttl-max-ms");
        }
        if (c.zkConnect() == null && c.embeddedZkPort() != 0 && c.embeddedZkPort() == c.httpPort()) {
            throw new ConfigException(Setting.EMBEDDED_ZK_PORT.key(), describe(Setting.EMBEDDED_ZK_PORT, c, sources)
                    + " is the same as " + describe(Setting.HTTP_PORT, c, sources)
                    + ": expected two different ports (or 0 for any free port)");
        }
        // The gateway lists a lock only when its listing fits in half its packet limit (zk.PacketLimit#listable: 62
        // bytes an entry, 1,024 for the reply's header): every lock Warden admits must be one it can read.
        long listable = (c.zkMaxPacketBytes() / 2 - 1024L) / 62;
        if (c.maxEntriesPerLock() > listable) {
            throw new ConfigException(Setting.MAX_ENTRIES_PER_LOCK.key(), describe(Setting.MAX_ENTRIES_PER_LOCK, c, sources)
                    + " is more than " + describe(Setting.ZK_MAX_PACKET_BYTES, c, sources) + " lets the gateway list ("
                    + listable + " entries: half the packet, 62 bytes an entry): expected zk-max-packet-bytes of at least "
                    + (2 * (1024L + 62L * c.maxEntriesPerLock())) + ", or a lower max-entries-per-lock");
        }
        checkCells(c, sources);
        if ((c.tlsCert() == null) != (c.tlsKey() == null)) {
            Setting missing = c.tlsCert() == null ? Setting.TLS_CERT : Setting.TLS_KEY;
            Setting given = missing == Setting.TLS_CERT ? Setting.TLS_KEY : Setting.TLS_CERT;
            throw new ConfigException(missing.key(), describe(given, c, sources) + " needs " + missing.key() + " too");
        }
        if (c.tlsClientCa() != null && c.tlsCert() == null) {
            throw new ConfigException(Setting.TLS_CERT.key(), describe(Setting.TLS_CLIENT_CA, c, sources)
                    + " needs tls-cert and tls-key: client certificates come only over HTTPS");
        }
        if (c.tlsCert() != null) {
            runCheck(fileChecks.tls(), Setting.TLS_CERT, c, why -> "TLS: " + why);
        }
        checkZooKeeperSecurity(c, sources);
        if (c.authFile() != null) {
            // a bad file stops start-up with its one line
            runCheck(fileChecks.authFile(), Setting.AUTH_FILE, c, why -> why + " (auth-file from " + sources.get(Setting.AUTH_FILE) + ")");
        } else if (c.metricsAuth()) {
            throw new ConfigException(Setting.METRICS_AUTH.key(), describe(Setting.METRICS_AUTH, c, sources)
                    + " needs auth-file: without principals there is nobody to let in");
        }
    }

    /**
     * The cells and routes rules: every cell a route names is default or one of cells, and no two cells (the default
     * one, zk under chroot, included) are on one ZooKeeper path, the same servers under the same chroot, where they
     * would share their lock queues. Without zk the default cell is the embedded server, which no cell can name.
     */
    private static void checkCells(WardenConfig c, Map<Setting, String> sources) {
        List<String> known = new ArrayList<>();
        known.add(Setting.DEFAULT_CELL);
        for (CellAddress cell : c.cells()) {
            known.add(cell.name());
        }
        for (Map.Entry<String, String> route : c.routes().entrySet()) {
            if (!known.contains(route.getValue())) {
                throw new ConfigException(Setting.ROUTES.key(), describe(Setting.ROUTES, c, sources)
                        + " sends namespace " + route.getKey() + " to cell " + route.getValue() + ", which is no cell: "
                        + "expected one of " + String.join(", ", known) + " (cells from " + sources.get(Setting.CELLS)
                        + ")");
            }
        }
        // Each cell's path: the set of its servers and its chroot, or --chroot's when it has none.
        Map<List<Object>, String> paths = new java.util.HashMap<>();
        if (c.zkConnect() != null) {
            paths.put(List.of(servers(c.zkConnect()), c.chroot()), Setting.DEFAULT_CELL);
        }
        for (CellAddress cell : c.cells()) {
            String chroot = cell.chroot() != null ? cell.chroot() : c.chroot();
            String other = paths.putIfAbsent(List.of(servers(cell.zkConnect()), chroot), cell.name());
            if (other == null) {
                continue;
            }
            String shared = other.equals(Setting.DEFAULT_CELL)
                    ? "the default cell's: " + describe(Setting.ZK, c, sources) + " under "
                            + describe(Setting.CHROOT, c, sources)
                    : "cell " + other + "'s: " + String.join(",", servers(cell.zkConnect())) + " under " + chroot
                            + (cell.chroot() == null ? " (chroot from " + sources.get(Setting.CHROOT) + ")" : "");
            throw new ConfigException(Setting.CELLS.key(), describe(Setting.CELLS, c, sources) + " puts cell "
                    + cell.name() + " on the same ZooKeeper path as " + shared + "; two cells on one ZooKeeper path "
                    + "would share their lock queues: expected another chroot or another ensemble for cell "
                    + cell.name());
        }
    }

    /** A connect string's servers as host:port, sorted, ZooKeeper's 2181 when no port is given, hosts in lower case. */
    static Set<String> servers(String connect) {
        Set<String> out = new TreeSet<>();
        for (String server : connect.split(",")) {
            String s = server.strip().toLowerCase(Locale.ROOT);
            int colon = s.lastIndexOf(':');
            boolean port = colon > s.lastIndexOf(']'); // an [ipv6] address has colons of its own
            out.add(port ? s.substring(0, colon) + ":" + Integer.parseInt(s.substring(colon + 1)) : s + ":2181");
        }
        return out;
    }

    /** The zk-tls-*, zk-sasl-* and zk-acl rules; the stores and the password file are read here, once. */
    private void checkZooKeeperSecurity(WardenConfig c, Map<Setting, String> sources) {
        Setting[] remote = {Setting.ZK_TLS_TRUSTSTORE, Setting.ZK_TLS_KEYSTORE, Setting.ZK_SASL_USER};
        for (Setting s : remote) {
            if (s.get(c) != null && c.zkConnect() == null) {
                throw new ConfigException(s.key(), describe(s, c, sources) + " needs zk: the embedded ZooKeeper is "
                        + "reached over loopback without TLS or SASL");
            }
        }
        requires(c, sources, Setting.ZK_TLS_KEYSTORE, Setting.ZK_TLS_TRUSTSTORE);
        requires(c, sources, Setting.ZK_TLS_TRUSTSTORE_PASSWORD_FILE, Setting.ZK_TLS_TRUSTSTORE);
        requires(c, sources, Setting.ZK_TLS_KEYSTORE_PASSWORD_FILE, Setting.ZK_TLS_KEYSTORE);
        requires(c, sources, Setting.ZK_SASL_USER, Setting.ZK_SASL_PASSWORD_FILE);
        requires(c, sources, Setting.ZK_SASL_PASSWORD_FILE, Setting.ZK_SASL_USER);
        runCheck(fileChecks.zkPassword(), Setting.ZK_SASL_PASSWORD_FILE, c, why -> why);
        runCheck(fileChecks.zkStores(), Setting.ZK_TLS_TRUSTSTORE, c, why -> why);
    }

    private static void requires(WardenConfig c, Map<Setting, String> sources, Setting given, Setting needed) {
        if (given.get(c) != null && needed.get(c) == null) {
            throw new ConfigException(needed.key(), describe(given, c, sources) + " needs " + needed.key() + " too");
        }
    }

    private static String describe(Setting s, WardenConfig c, Map<Setting, String> sources) {
        return s.key() + " " + s.kind().render(s.get(c)) + " (from " + sources.get(s) + ")";
    }

    /** A value as shown in a message: quoted, control characters escaped, cut when long. */
    static String show(String value) {
        StringBuilder out = new StringBuilder("\"");
        int shown = 0;
        for (int i = 0; i < value.length(); i++) {
            char ch = value.charAt(i);
            if (shown++ >= MAX_SHOWN_VALUE) {
                out.append("...");
                break;
            }
            if (ch == '"' || ch == '\\') {
                out.append('\\').append(ch);
            } else if (ch < 0x20 || ch == 0x7f) {
                out.append(String.format(Locale.ROOT, "\\u%04x", (int) ch));
            } else {
                out.append(ch);
            }
        }
        return out.append('"').toString();
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "unreadable";
        }
        String line = message.strip().split("\\R", 2)[0].strip();
        return line.isEmpty() ? "unreadable" : line;
    }

    /** " (did you mean --http-port?)" for a near miss, else "". */
    private static String suggestion(String typed, String prefix) {
        Setting best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (Setting s : Setting.values()) {
            int d = LEVENSHTEIN.apply(typed, s.key());
            if (d < bestDistance) {
                bestDistance = d;
                best = s;
            }
        }
        int configDistance = LEVENSHTEIN.apply(typed, "config");
        if (!prefix.isEmpty() && configDistance < bestDistance && configDistance <= 2) {
            return " (did you mean " + CONFIG_FLAG + "?)";
        }
        return best != null && bestDistance <= Math.max(2, typed.length() / 4)
                ? " (did you mean " + prefix + best.key() + "?)" : "";
    }


    /** A value as given, and where it was given ("flag --http-port", "env WARDEN_HTTP_PORT", "key ... in file ..."). */
    private record Raw(String value, String source) {
    }
}
