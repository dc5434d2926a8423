package io.warden.it.support;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Starts child JVMs with the JVM that runs the tests ({@code ProcessHandle.current().info().command()}), each
 * with its stdout and stderr in {@code <logDir>/<name>.log}.
 *
 * <p>The log directory is the system property {@code warden.it.logs} (Failsafe and the benchmark profile set it
 * to {@code ${project.build.directory}/it-logs}), else {@code target/it-logs}.
 */
public final class JavaLauncher {
    private static final List<ChildProcess> ALL = new CopyOnWriteArrayList<>();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            for (ChildProcess child : ALL) {
                try {
                    child.close();
                } catch (RuntimeException ignored) {
                    // best effort at JVM exit
                }
            }
        }, "kill-children"));
    }

    private final Path logDir;

    public JavaLauncher(Path logDir) {
        this.logDir = logDir;
        try {
            Files.createDirectories(logDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + logDir, e);
        }
    }

    /** A launcher writing under {@code <warden.it.logs>/<run>}, emptied first (the logs of an earlier run go). */
    public static JavaLauncher forRun(String run) {
        String base = System.getProperty("warden.it.logs", Path.of("target", "it-logs").toString());
        Path dir = Path.of(base).toAbsolutePath().resolve(run);
        if (Files.isDirectory(dir)) {
            try (var files = Files.list(dir)) {
                for (Path file : (Iterable<Path>) files::iterator) {
                    if (Files.isRegularFile(file)) {
                        Files.delete(file);
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot empty " + dir, e);
            }
        }
        return new JavaLauncher(dir);
    }

    public Path logDir() {
        return logDir;
    }

    /** The {@code java} executable of this JVM. */
    public static String javaExecutable() {
        return ProcessHandle.current().info().command()
                .orElseGet(() -> Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    /**
     * The classpath of this JVM: Surefire/Failsafe put the real one in {@code surefire.test.class.path}
     * (their own {@code java.class.path} may be a manifest-only jar).
     */
    public static String classpath() {
        String surefire = System.getProperty("surefire.test.class.path");
        if (surefire != null && !surefire.isBlank()) {
            return surefire;
        }
        return System.getProperty("java.class.path");
    }

    /** Starts {@code mainClass} on this JVM's classpath. */
    public ChildProcess startMain(String name, List<String> jvmArgs, String mainClass, List<String> args) {
        return startMain(name, jvmArgs, classpath(), mainClass, args);
    }

    /** Starts {@code mainClass} on {@code classpath} (entries joined with the path separator). */
    public ChildProcess startMain(String name, List<String> jvmArgs, String classpath, String mainClass, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(javaExecutable());
        command.addAll(jvmArgs);
        command.add("-cp");
        command.add(classpath);
        command.add(mainClass);
        command.addAll(args);
        return start(name, command);
    }

    /** Starts {@code java -jar jar args}. */
    public ChildProcess startJar(String name, List<String> jvmArgs, Path jar, List<String> args) {
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("no jar at " + jar + " (build it with `mvn -DskipTests package -pl service -am`,"
                    + " or point -Dwarden.service.jar at it)");
        }
        List<String> command = new ArrayList<>();
        command.add(javaExecutable());
        command.addAll(jvmArgs);
        command.add("-jar");
        command.add(jar.toString());
        command.addAll(args);
        return start(name, command);
    }

    /** Writes a logback configuration for children that logs everything at {@code level} to stdout (their log file). */
    public Path logbackConfig(String level) {
        return logbackConfig("child-" + level.toLowerCase(Locale.ROOT), level, Map.of());
    }

    /**
     * Writes {@code logback-<name>.xml} for children: stdout (their log file) at {@code rootLevel}, with a level per
     * logger in {@code loggers}. Children get it with {@code -Dlogback.configurationFile=}.
     */
    public Path logbackConfig(String name, String rootLevel, Map<String, String> loggers) {
        Path file = logDir.resolve("logback-" + name + ".xml");
        StringBuilder xml = new StringBuilder("""
                <configuration>
                  <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">
                    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{36} - %msg%n</pattern></encoder>
                  </appender>
                """);
        loggers.forEach((logger, level) -> xml.append("  <logger name=\"").append(logger).append("\" level=\"")
                .append(level).append("\"/>\n"));
        xml.append("  <root level=\"").append(rootLevel).append("\"><appender-ref ref=\"OUT\"/></root>\n")
                .append("</configuration>\n");
        try {
            Files.writeString(file, xml, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }

    /**
     * Starts any command (not necessarily a JVM) with exactly {@code environment} as its environment, in
     * {@code workingDir}, its output in {@code <logDir>/<name>.log} like every child's.
     */
    public ChildProcess startCommand(String name, List<String> command, Map<String, String> environment, Path workingDir) {
        return start(name, command, environment, workingDir);
    }

    private ChildProcess start(String name, List<String> command) {
        return start(name, command, null, null);
    }

    /** {@code environment} null: this JVM's; {@code workingDir} null: this JVM's. */
    private ChildProcess start(String name, List<String> command, Map<String, String> environment, Path workingDir) {
        Path log = logDir.resolve(name + ".log");
        try {
            // Append: a restarted server keeps the log of its earlier life.
            Files.writeString(log, "### " + String.join(" ", redactClasspath(command)) + "\n", StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            ProcessBuilder builder = new ProcessBuilder(command);
            if (environment != null) {
                builder.environment().clear();
                builder.environment().putAll(environment);
            }
            if (workingDir != null) {
                builder.directory(workingDir.toFile());
            }
            Process process = builder
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .start();
            ChildProcess child = new ChildProcess(name, process, log, command);
            ALL.add(child);
            return child;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name + ": " + command, e);
        }
    }

    private static List<String> redactClasspath(List<String> command) {
        List<String> shown = new ArrayList<>(command);
        for (int i = 0; i + 1 < shown.size(); i++) {
            if (shown.get(i).equals("-cp")) {
                shown.set(i + 1, "<" + shown.get(i + 1).split(File.pathSeparator).length + " classpath entries>");
            }
        }
        return shown;
    }
}
