package io.warden.it.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One child JVM started by {@link JavaLauncher}, with its output in a log file that is kept after the run.
 *
 * <p>Faults: {@link #kill9()} (SIGKILL), {@link #terminate()} (SIGTERM), {@link #pause()} / {@link #resume()}
 * (SIGSTOP / SIGCONT). Every child is also killed by a JVM shutdown hook, so a crashed test leaves no orphans.
 *
 * <p>Concurrency: the fields are final; {@link Process} is thread-safe.
 */
public final class ChildProcess implements AutoCloseable {
    private final String name;
    private final Process process;
    private final Path log;
    private final List<String> command;

    ChildProcess(String name, Process process, Path log, List<String> command) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.command = List.copyOf(command);
    }

    public String name() {
        return name;
    }

    public long pid() {
        return process.pid();
    }

    public Path log() {
        return log;
    }

    public List<String> command() {
        return command;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** SIGKILL, then waits (bounded) until the process is gone. */
    public void kill9() {
        process.destroyForcibly();
        awaitExit(Duration.ofSeconds(20));
    }

    /** SIGTERM, without waiting. */
    public void terminate() {
        process.destroy();
    }

    /** SIGSTOP: the process freezes (its sockets stay open), as in a long GC pause. */
    public void pause() {
        signal("STOP");
    }

    /** SIGCONT. */
    public void resume() {
        signal("CONT");
    }

    /** Waits until the process has exited; true if it did within {@code timeout}. */
    public boolean awaitExit(Duration timeout) {
        try {
            return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    public int exitValue() {
        return process.exitValue();
    }

    /** The last {@code lines} lines of the log, for failure messages. */
    public String logTail(int lines) {
        try {
            if (!Files.exists(log)) {
                return "(no log at " + log + ")";
            }
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(log " + log + " unreadable: " + e + ")";
        }
    }

    private void signal(String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
                    .redirectErrorStream(true)
                    .start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed: "
                        + new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("kill -" + signal + " " + process.pid(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted sending SIG" + signal + " to " + name, e);
        }
    }

    /** SIGKILL if still running (a SIGSTOPped process dies too). Idempotent. */
    @Override
    public void close() {
        if (process.isAlive()) {
            kill9();
        }
    }

    @Override
    public String toString() {
        return name + "(pid " + process.pid() + ", log " + log + ")";
    }
}
