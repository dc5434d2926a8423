package io.warden.service.config;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * What the build wrote into the gateway: its Maven artifact version ({@code 0.1.0-SNAPSHOT}, {@code 1.2.0}), from
 * {@code io/warden/service/build.properties}, a resource the build fills in (service/src/main/resources-filtered), so
 * the classes run from the IDE, the tests and the shaded jar all report the version of the build that made them.
 *
 * <p>Thread-safety: immutable; read once when the class loads.
 */
public final class BuildInfo {
    static final String RESOURCE = "/io/warden/service/build.properties";

    private static final String VERSION = read(RESOURCE);

    private BuildInfo() {
    }

    /** This gateway's Maven artifact version, exactly as in its pom.xml. */
    public static String version() {
        return VERSION;
    }

    static String read(String resource) {
        try (InputStream in = BuildInfo.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is missing from the classpath: the gateway was not built"
                        + " by Maven (mvn package fills it in)");
            }
            Properties p = new Properties();
            p.load(in);
            String version = p.getProperty("version");
            if (version == null || version.isBlank() || version.contains("${")) {
                throw new IllegalStateException(resource + " has no version filled in (version=" + version
                        + "): the build's resource filtering did not run");
            }
            return version.strip();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
    }
}
