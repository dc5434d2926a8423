package io.warden.cli;

import picocli.CommandLine;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * {@code warden --version}: the Maven version of the build this CLI came from, which the build writes into
 * {@code io/warden/cli/build.properties} (resource filtering), so it cannot drift from the artifact's version.
 */
final class BuildVersion implements CommandLine.IVersionProvider {
    private static final String RESOURCE = "build.properties";

    @Override
    public String[] getVersion() {
        return new String[]{version()};
    }

    /** The artifact version, e.g. {@code 0.1.0-SNAPSHOT}. */
    static String version() {
        Properties p = new Properties();
        try (InputStream in = BuildVersion.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the CLI's jar: a broken build");
            }
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + RESOURCE, e);
        }
        String v = p.getProperty("version", "");
        if (v.isBlank() || v.contains("${")) {
            throw new IllegalStateException(RESOURCE + " names no version (" + v + "): the build did not filter it");
        }
        return v.strip();
    }
}
