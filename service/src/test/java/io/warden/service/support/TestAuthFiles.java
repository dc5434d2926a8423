package io.warden.service.support;

import io.warden.service.auth.AuthFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Auth files for tests: principals with their bearer tokens' SHA-256s. */
public final class TestAuthFiles {
    private TestAuthFiles() {
    }

    /**
     * {@code dir/auth.yaml} with one principal per {@code name, token} pair, each with {@code lock} on every namespace.
     */
    public static Path lockers(Path dir, String... namesAndTokens) throws IOException {
        StringBuilder yaml = new StringBuilder("principals:\n");
        for (int i = 0; i + 1 < namesAndTokens.length; i += 2) {
            yaml.append("  - name: ").append(namesAndTokens[i]).append("\n    token_sha256: ")
                    .append(AuthFile.sha256(namesAndTokens[i + 1]))
                    .append("\n    grants: [{namespace: \"*\", role: lock}]\n");
        }
        Path f = dir.resolve("auth.yaml");
        Files.writeString(f, yaml);
        return f;
    }
}
