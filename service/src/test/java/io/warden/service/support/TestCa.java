package io.warden.service.support;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Certificates for TLS tests, made with {@code openssl} in a directory of the test's: CAs, and certificates they
 * issue, as {@code NAME.pem} (certificate) and {@code NAME.key} (unencrypted PKCS#8 key). RSA 2048, valid two days.
 */
public final class TestCa {
    private final Path dir;

    public TestCa(Path dir) {
        this.dir = dir;
    }

    public Path dir() {
        return dir;
    }

    public Path pem(String name) {
        return dir.resolve(name + ".pem");
    }

    public Path key(String name) {
        return dir.resolve(name + ".key");
    }

    /** A self-signed CA named {@code ca} (its CN). */
    public TestCa ca(String ca) throws IOException, InterruptedException {
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca + ".key", "-out", ca + ".pem", "-days", "2",
                "-subj", "/CN=" + ca);
        return this;
    }

    /** A certificate with CN {@code name} and subject alternative names {@code sans} (e.g. {@code IP:127.0.0.1}). */
    public TestCa issue(String ca, String name, String sans) throws IOException, InterruptedException {
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr", "-subj", "/CN=" + name);
        Files.writeString(dir.resolve(name + ".ext"), "subjectAltName=" + sans + "\n");
        openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".pem", "-CAkey", ca + ".key", "-CAcreateserial",
                "-out", name + ".pem", "-days", "2", "-extfile", name + ".ext");
        return this;
    }

    private void openssl(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("openssl " + String.join(" ", args) + " failed (is openssl installed? "
                    + ".ci/run installs it): " + out);
        }
    }
}
