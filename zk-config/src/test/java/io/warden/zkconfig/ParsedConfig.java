package io.warden.zkconfig;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Pattern;
import org.apache.zookeeper.server.quorum.QuorumPeerConfig;

/**
 * A {@code zoo.cfg} as ZooKeeper 3.9 reads it: copied to a temp directory with {@code dataDir} (and
 * {@code dataLogDir}) pointed at a temp data directory holding {@code myid}, then parsed with
 * {@link QuorumPeerConfig#parse}. The {@code zookeeper.*} system properties the parse sets are captured in
 * {@link #systemProperties} and removed again, so parses do not leak into each other.
 */
record ParsedConfig(ParsedConfig.Qpc config, Map<String, String> systemProperties, List<ZooCfgCheck.Problem> problems) {
    private static final Pattern DATA_DIRS = Pattern.compile("(?m)^(dataDir|dataLogDir)=.*$");

    /** Lints and parses {@code text} as server {@code myid}; {@code ConfigException} and the like propagate. */
    static ParsedConfig parse(String text, int myid, Path tempDir) throws QuorumPeerConfig.ConfigException {
        try {
            Path data = Files.createDirectories(tempDir.resolve("data-" + myid));
            Files.writeString(data.resolve("myid"), myid + "\n");
            String cfgText = DATA_DIRS.matcher(text).replaceAll(m -> m.group(1) + "=" + data);
            Path cfg = tempDir.resolve("zoo-" + myid + "-" + System.nanoTime() + ".cfg");
            Files.writeString(cfg, cfgText, java.nio.charset.StandardCharsets.ISO_8859_1);
            List<ZooCfgCheck.Problem> problems = ZooCfgCheck.check(cfg);
            Properties before = (Properties) System.getProperties().clone();
            Map<String, String> set = new HashMap<>();
            try {
                Qpc config = new Qpc();
                config.parse(cfg.toString());
                for (String name : System.getProperties().stringPropertyNames()) {
                    if (!before.containsKey(name)) {
                        set.put(name, System.getProperty(name));
                    }
                }
                return new ParsedConfig(config, Map.copyOf(set), problems);
            } finally {
                for (String name : System.getProperties().stringPropertyNames()) {
                    if (!before.containsKey(name)) {
                        System.clearProperty(name);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@link QuorumPeerConfig} with the quorum SASL flags it keeps in protected fields. */
    static final class Qpc extends QuorumPeerConfig {
        boolean quorumSaslEnabled() {
            return quorumEnableSasl;
        }

        boolean quorumServerRequiresSasl() {
            return quorumServerRequireSasl;
        }

        boolean quorumLearnerRequiresSasl() {
            return quorumLearnerRequireSasl;
        }
    }

    /** The text of a shipped file under {@code zk-config/}. */
    static String shipped(String relative) {
        try {
            return Files.readString(moduleDir().resolve(relative), java.nio.charset.StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code zk-config/} (Maven passes it; an IDE run from the module directory works too). */
    static Path moduleDir() {
        return Path.of(System.getProperty("zkconfig.module.dir", ".")).toAbsolutePath().normalize();
    }
}
