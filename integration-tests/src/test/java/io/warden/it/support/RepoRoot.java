package io.warden.it.support;

import java.io.IOException;
import java.nio.file.Path;

/** The repository's root, for tests that check its files: {@code ..} from this module, or {@code -Dwarden.repo.root}. */
public final class RepoRoot {
    private RepoRoot() {
    }

    /** The root as a real path; a test can point it at another tree (a copy to show a check failing). */
    public static Path path() {
        try {
            return Path.of(System.getProperty("warden.repo.root", "..")).toRealPath();
        } catch (IOException e) {
            throw new IllegalStateException("the repository root (property warden.repo.root, default ..)", e);
        }
    }
}
