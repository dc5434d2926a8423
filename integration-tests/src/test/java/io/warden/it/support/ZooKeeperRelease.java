package io.warden.it.support;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A ZooKeeper server release other than the build's: its {@code zookeeper} and {@code zookeeper-jute} jars, which the
 * build copies into a directory beside the tests (integration-tests' {@code pom.xml}, {@code maven-dependency-plugin}).
 * Its servers run on those two jars plus this JVM's class path without the build's ZooKeeper jars: the libraries a
 * server needs besides its own code (Netty, SLF4J and Logback, snappy, metrics-core) are the build's.
 *
 * <p>Concurrency: immutable.
 */
public final class ZooKeeperRelease {
    /** The build's own ZooKeeper jars, left out of a server class path built on another release. */
    private static final Pattern ZOOKEEPER_JAR = Pattern.compile("zookeeper(-jute)?-\\d[\\w.-]*\\.jar");

    private final String version;
    private final List<Path> jars;

    private ZooKeeperRelease(String version, List<Path> jars) {
        this.version = version;
        this.jars = List.copyOf(jars);
    }

    /**
     * The oldest release docs/running-without-ansible.md claims: {@code -Dwarden.zk.oldest.version} (the parent pom's
     * {@code zookeeper.oldest.version}) in {@code -Dwarden.zk.oldest.dir}, both set by Failsafe.
     */
    public static ZooKeeperRelease oldestClaimed() {
        String version = required("warden.zk.oldest.version");
        Path dir = Path.of(required("warden.zk.oldest.dir"));
        List<Path> jars = new ArrayList<>();
        for (String artifact : List.of("zookeeper", "zookeeper-jute")) {
            Path jar = dir.resolve(artifact + "-" + version + ".jar");
            if (!Files.isRegularFile(jar)) {
                throw new IllegalStateException("no " + jar + ": the build copies it there (mvn verify -pl integration-tests"
                        + " runs maven-dependency-plugin's copy at generate-test-resources)");
            }
            jars.add(jar);
        }
        return new ZooKeeperRelease(version, jars);
    }

    public String version() {
        return version;
    }

    /** This release's jars first, then this JVM's class path without the build's ZooKeeper jars. */
    public String serverClasspath() {
        List<String> entries = new ArrayList<>();
        jars.forEach(j -> entries.add(j.toString()));
        for (String entry : JavaLauncher.classpath().split(File.pathSeparator)) {
            if (!ZOOKEEPER_JAR.matcher(Path.of(entry).getFileName().toString()).matches()) {
                entries.add(entry);
            }
        }
        return String.join(File.pathSeparator, entries);
    }

    private static String required(String property) {
        String value = System.getProperty(property);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException("-D" + property + " is not set (Failsafe sets it from integration-tests' pom.xml)");
        }
        return value;
    }

    @Override
    public String toString() {
        return "ZooKeeper " + version + " " + jars;
    }
}
