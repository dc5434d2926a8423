package io.warden.cli;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * How {@code warden lock} starts its command so that the command never outlives warden, however warden ends —
 * SIGKILL and the kernel's OOM killer included, when no shutdown hook runs and the lock goes free as soon as the
 * session expires. The command is started as
 *
 * <pre>setpriv --pdeathsig KILL -- /bin/sh -c 'CHECK; exec "$@"' warden-lock WARDEN_PID CMD ARGS...</pre>
 *
 * <ul>
 * <li>util-linux {@code setpriv --pdeathsig KILL} asks the kernel ({@code prctl(PR_SET_PDEATHSIG)}) to SIGKILL the
 *     process when its parent ends; the setting survives the {@code exec}s that follow (it is cleared only by a
 *     set-user-ID or set-group-ID program, which such a command must not be).</li>
 * <li>A parent that ends <em>before</em> the {@code prctl} sends no signal. So the shell, which runs after it, checks
 *     that its parent is still warden ({@code $PPID}, read at the shell's start) and otherwise exits without running
 *     the command: a warden that died after the check kills the command through the signal, one that died before
 *     it is noticed by the check.</li>
 * <li>The kernel sends the signal when the <em>thread</em> that started the child ends, not only the process: the
 *     command must be started from a thread that lives until the command has ended (warden lock's waits for it).</li>
 * </ul>
 *
 * <p>Only the command's own process gets the signal; processes it starts in turn are its business (a wrapper script
 * should {@code exec} its last command, or end its children on SIGTERM). The signal is Linux's; on a system without
 * {@code setpriv} warden lock refuses to run rather than run a command that could outlive its lock.
 */
final class DiesWithParent {
    /** The shell's check and exec; {@code $1} is warden's pid, the command follows it. */
    static final String SCRIPT = "[ \"$PPID\" = \"$1\" ] || { echo 'warden lock: warden ended before the command"
            + " started; not running it' >&2; exit 137; }; shift; exec \"$@\"";
    /** The shell's {@code $0}: what its own messages are signed with. */
    static final String SHELL_NAME = "warden-lock";

    private DiesWithParent() {
    }

    /** The argv that runs {@code command} as a child of process {@code parentPid} that dies with it. */
    static List<String> argv(Path setpriv, long parentPid, List<String> command) {
        List<String> argv = new ArrayList<>(List.of(setpriv.toString(), "--pdeathsig", "KILL", "--", "/bin/sh", "-c",
                SCRIPT, SHELL_NAME, Long.toString(parentPid)));
        argv.addAll(command);
        return argv;
    }

    /** {@code setpriv} on {@code searchPath} (the value of {@code PATH}). */
    static Optional<Path> findSetpriv(String searchPath) {
        return findExecutable("setpriv", searchPath);
    }

    /**
     * Where a command named {@code name} would be found, as a shell finds it: a name with a slash as it is, any other
     * in the directories of {@code searchPath}; empty when there is none or it is not executable.
     */
    static Optional<Path> findExecutable(String name, String searchPath) {
        if (name.isEmpty()) {
            return Optional.empty();
        }
        if (name.contains("/")) {
            Path p = Path.of(name);
            return Files.isRegularFile(p) && Files.isExecutable(p) ? Optional.of(p) : Optional.empty();
        }
        for (String dir : (searchPath == null ? "" : searchPath).split(File.pathSeparator)) {
            Path p = Path.of(dir.isEmpty() ? "." : dir).resolve(name);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }
}
