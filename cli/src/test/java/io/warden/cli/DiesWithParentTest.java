package io.warden.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class DiesWithParentTest {
    @TempDir
    Path tmp;

    private static Path setpriv() {
        return DiesWithParent.findSetpriv(System.getenv("PATH"))
                .orElseThrow(() -> new AssertionError("setpriv not on PATH: install util-linux"));
    }

    @Test
    void theCommandRuns_whenItsParentIsTheOneNamed() throws Exception {
        Path out = tmp.resolve("out");
        Process p = new ProcessBuilder(DiesWithParent.argv(setpriv(), ProcessHandle.current().pid(),
                List.of("sh", "-c", "echo \"$0 $1\" > '" + out + "'", "a b", "c"))).inheritIO().start();
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
        assertThat(Files.readString(out)).as("arguments pass through unchanged").isEqualTo("a b c\n");
    }

    @Test
    void theCommandHasTheParentDeathSignalSet() throws Exception {
        Path out = tmp.resolve("status");
        // /proc/self/status has no PDEATHSIG line; setpriv --dump shows it for the process that runs it
        Process p = new ProcessBuilder(DiesWithParent.argv(setpriv(), ProcessHandle.current().pid(),
                List.of(setpriv().toString(), "--dump"))).redirectOutput(out.toFile()).start();
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(Files.readString(out)).containsPattern("(?i)parent death signal: (kill|9)");
    }

    /** The parent died before the signal was set: the check sees another parent and never runs the command. */
    @Test
    void theCommandDoesNotRun_whenItsParentIsNotTheOneNamed() throws Exception {
        Path ran = tmp.resolve("ran");
        long notOurs = ProcessHandle.current().pid() + 1_000_000;
        Process p = new ProcessBuilder(DiesWithParent.argv(setpriv(), notOurs, List.of("touch", ran.toString())))
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isEqualTo(137);
        assertThat(out).contains("not running it");
        assertThat(ran).doesNotExist();
    }

    @Test
    void findExecutable_searchesPathAsAShellDoes() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("bin"));
        Path tool = Files.writeString(dir.resolve("tool"), "#!/bin/sh\n");
        Path plain = Files.writeString(dir.resolve("plain"), "not executable");
        Files.setPosixFilePermissions(tool, PosixFilePermissions.fromString("rwxr-xr-x"));

        assertThat(DiesWithParent.findExecutable("tool", "/nonexistent:" + dir)).contains(dir.resolve("tool"));
        assertThat(DiesWithParent.findExecutable("plain", dir.toString())).isEmpty();
        assertThat(DiesWithParent.findExecutable("missing", dir.toString())).isEmpty();
        assertThat(DiesWithParent.findExecutable(tool.toString(), "")).contains(tool);
        assertThat(DiesWithParent.findExecutable(plain.toString(), dir.toString())).isEmpty();
        assertThat(DiesWithParent.findExecutable("", dir.toString())).isEmpty();
        assertThat(DiesWithParent.findSetpriv(dir.toString())).as("no setpriv there").isEmpty();
    }
}
