package io.warden.cli;

import io.warden.client.AcquireTimeoutException;
import io.warden.client.FencedLock;
import io.warden.client.Hold;
import io.warden.client.LockMode;
import io.warden.client.LockOwnershipLostException;
import io.warden.client.MultiLock;
import io.warden.client.SessionLostException;
import io.warden.client.SessionState;
import io.warden.client.WardenClient;
import io.warden.client.WardenClientException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code warden lock NAME... -- CMD...}: runs a command while holding the lock, like {@code etcdctl lock}; with several
 * names, while holding all of them, taken together as one multi-lock request (never deadlocking another such request,
 * whatever the order of its names). The command gets each token in its environment: {@code WARDEN_TOKEN} and
 * {@code WARDEN_LOCK} for one name; for several, {@code WARDEN_LOCK_COUNT} and, for the i-th name given (from 1),
 * {@code WARDEN_LOCK_i} and {@code WARDEN_TOKEN_i} (lock names may hold characters no variable name can, hence numbers;
 * {@code WARDEN_TOKEN} is then not set, so that a script written for one name fails rather than use a wrong token). The session
 * is kept alive in the background; when it is lost — or can no longer be confirmed (SUSPENDED: no keepalive
 * acknowledged within the TTL, so the cell may already have given the lock to someone else) — the command is
 * terminated (SIGTERM to it and its descendants, then SIGKILL after {@code --kill-grace}) and warden exits 4; so is it
 * when any name's grant ends elsewhere (an admin's force-release). With {@code --on-revoke=term} an admin's request to
 * let go of any name (a revoke) sends the command SIGTERM; the locks are released when it exits, and warden exits with
 * its code (143 for a command SIGTERM ended).
 *
 * <p>The command never outlives warden: a SIGTERM or Ctrl-C to warden stops it as a lost lock does before the session
 * is closed, and if warden dies without a chance to clean up (SIGKILL, the OOM killer) the kernel kills the command at
 * once ({@link DiesWithParent}: Linux's parent-death signal, set with util-linux {@code setpriv}). Without that the
 * command would run on, re-parented, while the lock goes free when the session expires.
 */
@Command(name = "lock", mixinStandardHelpOptions = true, versionProvider = BuildVersion.class,
        description = {"Run a command while holding a lock; the command gets the fencing token in WARDEN_TOKEN "
                + "and the lock name in WARDEN_LOCK. The lock is released when the command exits; if the session is "
                + "lost (or can no longer be confirmed) while it runs, the command is killed; so is it when warden "
                + "itself dies, by any means (SIGKILL included: Linux's parent-death signal, set with util-linux setpriv).",
                "With several names (before --), all are taken together as one multi-lock request; the command then "
                + "gets WARDEN_LOCK_COUNT, and WARDEN_LOCK_i and WARDEN_TOKEN_i for the i-th name (i from 1; "
                + "WARDEN_TOKEN is not set). If any of them is lost, the command is killed.",
                "Example: warden lock payments/invoice-42 --wait 30s -- ./charge.sh 42",
                "         warden lock bank/acct-1 bank/acct-2 -- ./transfer.sh"},
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {
        "  N:   the command's own exit code (128+signal when killed by a signal)",
        "  2:   usage error",
        "  3:   not acquired within --wait (the command did not run)",
        "  4:   lock lost while the command ran; the command was killed",
        "  5:   no gateway reachable",
        "127:   the command could not be started"})
final class LockCommand implements Callable<Integer> {
    @ParentCommand
    WardenCli root;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0..*", arity = "1..*", paramLabel = "NAME... -- CMD",
            description = "Lock names, namespace/path (e.g. payments/invoice-42), then --, then the command and its "
                    + "arguments. Without --, the first is the one name and the rest the command.")
    List<String> positionals;

    /** The names, and the command, split where {@code --} stood. */
    private List<String> names;
    private List<String> command;
    /** The names as one string, for messages. */
    private String name;

    @Option(names = "--wait", paramLabel = "DURATION", converter = Durations.Converter.class,
            description = "How long to wait for the lock, with a unit: 250ms, 30s, 1m30s, 2h (0: try once; "
                    + "default: wait until granted).")
    Duration wait;

    /** --wait, or a year when it is not given ("until granted"). */
    private Duration waitOrForever() {
        return wait != null ? wait : Duration.ofDays(365);
    }

    @Option(names = "--shared", description = "Take the lock SHARED (a read lock) instead of EXCLUSIVE.")
    boolean shared;

    @Option(names = "--kill-grace", paramLabel = "DURATION", converter = Durations.Converter.class, defaultValue = "10s",
            description = "After the lock is lost: how long the command gets after SIGTERM before SIGKILL (default: ${DEFAULT-VALUE}).")
    Duration killGrace;

    /** What to do when an admin asks the holder to let go ({@code POST /v1/revoke}). */
    enum OnRevoke { ignore, term }

    @Option(names = "--on-revoke", paramLabel = "ACTION", defaultValue = "ignore",
            description = "When an admin asks this holder to let go (a revoke): 'term' sends the command SIGTERM (and its "
                    + "descendants), so it can finish and exit before the revoke's grace runs out; 'ignore' leaves it "
                    + "running until the lock is force-released (default: ${DEFAULT-VALUE}).")
    OnRevoke onRevoke;

    /** setpriv, found before the lock is taken: without it the command could outlive warden (see DiesWithParent). */
    private Path setpriv;

    @Override
    public Integer call() throws Exception {
        split();
        String searchPath = System.getenv("PATH");
        setpriv = DiesWithParent.findSetpriv(searchPath).orElseThrow(() -> new CliException(ExitCodes.CANNOT_START,
                "warden lock needs setpriv (util-linux) on PATH, so that the command dies with warden however warden "
                        + "ends; install util-linux"));
        if (DiesWithParent.findExecutable(command.get(0), searchPath).isEmpty()) {
            throw new CliException(ExitCodes.CANNOT_START, "could not start " + command.get(0)
                    + ": no such executable file" + (command.get(0).contains("/") ? "" : " on PATH"));
        }
        WardenClient client = root.client();
        java.util.concurrent.atomic.AtomicReference<Process> child = new java.util.concurrent.atomic.AtomicReference<>();
        // SIGTERM or Ctrl-C: stop the command (SIGTERM, SIGKILL after --kill-grace) before the session is closed, so
        // the locks are released only once it has ended. (SIGKILL runs no hook: then the kernel kills the command.)
        Thread hook = new Thread(() -> {
            Process p = child.get();
            if (p != null && p.isAlive()) {
                stop(p);
            }
            client.close();
        }, "warden-lock-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            HeldLocks hold = acquire(client);
            return run(client, hold, child);
        } finally {
            client.close();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs or ran
            }
        }
    }

    /**
     * Where {@code --} stood in the command line: the positionals after it are the command, those before the names.
     * (picocli drops the {@code --} itself; the original arguments still have it.)
     */
    private void split() {
        List<String> original = spec.commandLine().getParseResult().originalArgs();
        int dashes = original.indexOf("--");
        int commandSize = dashes < 0 ? positionals.size() - 1 : original.size() - dashes - 1;
        int nameCount = positionals.size() - commandSize;
        if (nameCount < 1 || commandSize < 1) {
            throw root.usage("give one or more lock names, then --, then the command");
        }
        names = List.copyOf(positionals.subList(0, nameCount));
        command = List.copyOf(positionals.subList(nameCount, positionals.size()));
        name = String.join(" ", names);
    }

    private HeldLocks acquire(WardenClient client) {
        if (names.size() > 1) {
            return acquireAll(client);
        }
        FencedLock lock;
        try {
            lock = shared ? client.readWriteLock(name).readLock() : client.lock(name);
        } catch (IllegalArgumentException e) {
            throw root.usage(e.getMessage());
        }
        try {
            if (wait != null && wait.isZero()) {
                Optional<Hold> hold = lock.tryAcquire();
                return HeldLocks.of(hold.orElseThrow(() -> new CliException(ExitCodes.NOT_ACQUIRED, "lock " + name + " is held")));
            }
            return HeldLocks.of(lock.acquire(waitOrForever()));
        } catch (AcquireTimeoutException e) {
            throw new CliException(ExitCodes.NOT_ACQUIRED, "lock " + name + " was not granted within " + Durations.format(waitOrForever()));
        } catch (SessionLostException e) {
            throw new CliException(ExitCodes.LOCK_LOST, "the session was lost while waiting for " + name + ": " + e.getMessage());
        } catch (WardenClientException e) {
            throw WardenCli.fromClient("could not acquire " + name, e);
        }
    }

    /** Several names: one multi-lock request. */
    private HeldLocks acquireAll(WardenClient client) {
        MultiLock lock;
        try {
            lock = client.multiLock(names, shared ? LockMode.SHARED : LockMode.EXCLUSIVE);
        } catch (IllegalArgumentException e) {
            throw root.usage(e.getMessage());
        }
        try {
            return HeldLocks.of(lock.acquire(waitOrForever()));
        } catch (AcquireTimeoutException e) {
            throw new CliException(ExitCodes.NOT_ACQUIRED, wait != null && wait.isZero() ? "locks " + name + " are not all free"
                    : "locks " + name + " were not granted within " + Durations.format(waitOrForever()));
        } catch (SessionLostException e) {
            throw new CliException(ExitCodes.LOCK_LOST, "the session was lost while waiting for " + name + ": " + e.getMessage());
        } catch (WardenClientException e) {
            throw WardenCli.fromClient("could not acquire " + name, e);
        }
    }

    /**
     * Runs the command under the hold. Note on threads: the command is started from, and waited for on, the calling
     * thread; the kernel's parent-death signal fires when that thread ends, so it must outlive the command.
     */
    private int run(WardenClient client, HeldLocks hold, java.util.concurrent.atomic.AtomicReference<Process> child) throws InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(DiesWithParent.argv(setpriv, ProcessHandle.current().pid(), command))
                .inheritIO();
        Map<String, Long> tokens = hold.tokens();
        if (names.size() == 1) {
            pb.environment().put("WARDEN_TOKEN", Long.toString(tokens.get(name)));
            pb.environment().put("WARDEN_LOCK", name);
        } else {
            pb.environment().remove("WARDEN_TOKEN");
            pb.environment().remove("WARDEN_LOCK");
            pb.environment().put("WARDEN_LOCK_COUNT", Integer.toString(names.size()));
            for (int i = 0; i < names.size(); i++) {
                pb.environment().put("WARDEN_LOCK_" + (i + 1), names.get(i));
                pb.environment().put("WARDEN_TOKEN_" + (i + 1), Long.toString(tokens.get(names.get(i))));
            }
        }
        pb.environment().put("WARDEN_SESSION", client.sessionId());
        Process process;
        try {
            process = pb.start();
            child.set(process);
        } catch (IOException e) {
            releaseQuietly(hold);
            throw new CliException(ExitCodes.CANNOT_START, "could not start " + command.get(0) + ": " + e.getMessage());
        }
        if (onRevoke == OnRevoke.term) {
            hold.onRevokeRequested(() -> {
                java.io.PrintWriter err = root.err();
                err.println("warden: the holder of " + name + " is asked to let go; sending the command SIGTERM");
                err.flush();
                process.descendants().forEach(ProcessHandle::destroy);
                process.destroy();
            });
        }
        CompletableFuture<String> lost = new CompletableFuture<>();
        hold.lost().whenComplete((v, e) -> lost.complete(names.size() == 1 ? "the lock was lost"
                : "one of the locks was lost"));
        client.addListener(state -> {
            if (state == SessionState.LOST) {
                lost.complete("the session was lost");
            } else if (state == SessionState.SUSPENDED) {
                lost.complete("no keepalive was acknowledged within the TTL: the lock can no longer be confirmed");
            }
        });
        SessionState now = client.state();
        if (now == SessionState.LOST || now == SessionState.SUSPENDED) {
            lost.complete("the session is " + now);
        }
        CompletableFuture<Void> stopped = new CompletableFuture<>();
        lost.thenAccept(why -> {
            Thread killer = new Thread(() -> {
                try {
                    stop(process);
                } finally {
                    stopped.complete(null);
                }
            }, "warden-lock-kill");
            killer.setDaemon(true);
            killer.start();
        });
        int code;
        try {
            code = process.waitFor();
        } catch (InterruptedException e) {
            stop(process);
            throw e;
        }
        if (lost.isDone()) {
            // The command has ended, but what it started may still be in its grace period: warden exits (and stops
            // looking after them) only once they are gone too.
            try {
                stopped.get(killGrace.toMillis() + 5_000, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                root.err().println("warden: processes the command started may still run: " + e);
                root.err().flush();
            }
            throw new CliException(ExitCodes.LOCK_LOST, "lock " + name + " lost while the command ran (" + lost.join()
                    + "); the command was stopped (exit " + code + ")");
        }
        try {
            hold.release();
        } catch (LockOwnershipLostException e) {
            throw new CliException(ExitCodes.LOCK_LOST, "lock " + name + " was lost before the command ended (exit "
                    + code + "): " + e.getMessage());
        }
        return code;
    }

    /**
     * SIGTERM to the command and its descendants; SIGKILL to what is left of them after {@code --kill-grace}. The
     * descendants are listed before the command is signalled: once it has ended, its children are no longer its
     * descendants (they are re-parented), and would otherwise be missed.
     */
    private void stop(Process process) {
        List<ProcessHandle> tree = new ArrayList<>(process.descendants().toList());
        tree.add(process.toHandle());
        tree.forEach(ProcessHandle::destroy);
        long deadline = System.nanoTime() + killGrace.toNanos();
        try {
            for (ProcessHandle p : tree) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                try {
                    p.onExit().get(left, TimeUnit.NANOSECONDS);
                } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
                    break;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            tree.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
        }
    }

    private static void releaseQuietly(HeldLocks hold) {
        try {
            hold.release();
        } catch (RuntimeException ignored) {
            // closing the client releases it anyway
        }
    }
}
