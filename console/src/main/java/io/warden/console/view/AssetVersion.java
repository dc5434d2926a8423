package io.warden.console.view;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * A short hash of the console's stylesheet and script, appended to their URLs ({@code ?v=...}) so that browsers may
 * cache them for long and still never use an old copy after an upgrade.
 *
 * <p>Concurrency: computed once at class initialization; immutable.
 */
public final class AssetVersion {
    /** Where the console's assets live on the classpath. */
    public static final String BASE = "/io/warden/console/static/";
    public static final List<String> FILES = List.of("console.css", "console.js", "favicon.svg");
    public static final String VERSION = compute();

    private AssetVersion() {
    }

    /** The bytes of one asset. */
    public static byte[] read(String file) {
        try (InputStream in = AssetVersion.class.getResourceAsStream(BASE + file)) {
            if (in == null) {
                throw new IllegalStateException("console asset missing from the classpath: " + BASE + file);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read console asset " + file, e);
        }
    }

    private static String compute() {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            for (String file : FILES) {
                digest.update(read(file));
            }
            return HexFormat.of().formatHex(digest.digest()).substring(0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available", e);
        }
    }
}
