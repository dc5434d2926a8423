package io.warden.it.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.it.support.GatewayProcess;
import io.warden.it.support.JavaLauncher;
import io.warden.it.support.RepoRoot;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The README's walk-through with curl works as a user types it: step by step into one shell, reading between the
 * steps. A gateway is started as the README's first command starts it (embedded ZooKeeper, the service's defaults; on
 * a free port, with a fresh data directory); then {@code bash} gets the walk-through's setup with {@code W} pointed at
 * that gateway, and each step on its standard input, one at a time, with a pause between steps longer than the
 * gateway's default session TTL: a session the walk-through opened without a TTL fit for reading would be gone by the
 * next step. Every reply a step prints must be the one its comments show ({@link Walkthrough.ShownReply}: same
 * fields and values in the same order, ids, tokens and revisions aside), and each grant's fencing token must be larger
 * than the one before.
 *
 * <p>Needs {@code bash}, {@code curl} and {@code jq} (Debian packages of those names; {@code ./test.sh} installs them)
 * and fails naming the one that is missing. The shell's transcript is kept in {@code it-logs/readme-walkthrough/}.
 * About 7 pauses of 12 s: under two minutes.
 */
class ReadmeWalkthroughIT {
    /** Reading time beyond the gateway's default session TTL, between two steps. */
    private static final Duration READING_MARGIN = Duration.ofSeconds(2);
    /** The longest a step may take to print its replies (step 3 waits 2 s for the lock). */
    private static final Duration STEP_TIMEOUT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void walkThrough_typedStepByStep_atAReadingPace_answersAsTheReadmeShows() throws Exception {
        for (String tool : List.of("bash", "curl", "jq")) {
            requireOnPath(tool, System.getenv().getOrDefault("PATH", ""));
        }
        Walkthrough walk = Walkthrough.parse(Files.readString(RepoRoot.path().resolve("README.md"), StandardCharsets.UTF_8));
        JavaLauncher launcher = JavaLauncher.forRun("readme-walkthrough");
        try (GatewayProcess gateway = GatewayProcess.startStandalone(launcher, "gateway", List.of("-Xms64m", "-Xmx256m"))) {
            gateway.awaitReady(Duration.ofSeconds(90));
            Duration pause = defaultSessionTtl(gateway.baseUri()).plus(READING_MARGIN);
            try (Shell shell = Shell.start(launcher.logDir())) {
                List<String> setupOutput = shell.type(walk.setupText("http://localhost:" + gateway.httpPort()), "setup");
                assertThat(setupOutput).as("what the walk-through's setup printed%s", shell.transcriptNote()).isEmpty();

                List<Long> grantedTokens = new ArrayList<>();
                long start = System.nanoTime();
                for (Walkthrough.Step step : walk.steps()) {
                    if (step.number() > 1) {
                        Thread.sleep(pause.toMillis()); // the user reads the step's reply and the next one
                    }
                    List<String> output = shell.type(step.text(), "step " + step.number());
                    String context = String.format("%s, %d s into the walk-through (steps %d s apart; log %s)%n"
                                    + "typed:%n%s%nprinted:%n%s%nshown:%n%s%s", step,
                            Duration.ofNanos(System.nanoTime() - start).toSeconds(), pause.toSeconds(),
                            gateway.process().log(), step.text().strip(), String.join("\n", output),
                            String.join("\n", step.replies().stream().map(Walkthrough.ShownReply::text).toList()),
                            shell.transcriptNote());
                    assertThat(output).as("the replies printed by %s", context).hasSameSizeAs(step.replies());
                    for (int i = 0; i < output.size(); i++) {
                        Walkthrough.ShownReply shown = step.replies().get(i);
                        if (!shown.matches(output.get(i))) {
                            fail("reply %d of %s is not the one shown:%n  shown:   %s%n  printed: %s%n%s", i + 1,
                                    step, shown.text(), output.get(i), context);
                        }
                        JsonNode reply = JSON.readTree(output.get(i));
                        if ("GRANTED".equals(reply.path("status").asText())) {
                            grantedTokens.add(reply.path("token").asLong());
                        }
                    }
                }
                assertThat(grantedTokens).as("the fencing tokens of the walk-through's grants, in order; it should show"
                        + " the lock passing on").hasSizeGreaterThanOrEqualTo(2).isSorted().doesNotHaveDuplicates();
            }
        }
    }

    /** Fails naming the Debian package (of the same name) when {@code tool} is in no directory of {@code path}. */
    static void requireOnPath(String tool, String path) {
        for (String dir : path.split(File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, tool))) {
                return;
            }
        }
        fail("%s is not on the PATH (%s): install the Debian package %s (apt-get install -y %s; ./test.sh does)",
                tool, path, tool, tool);
    }

    /** The TTL the gateway grants a session opened without {@code ttl_ms}: it opens one and closes it. */
    private static Duration defaultSessionTtl(URI base) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> opened = http.send(HttpRequest.newBuilder(base.resolve("/v1/sessions"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"client_id\":\"walk-through-probe\"}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(opened.statusCode()).as("POST /v1/sessions: %s", opened.body()).isEqualTo(201);
        JsonNode session = JSON.readTree(opened.body());
        http.send(HttpRequest.newBuilder(base.resolve("/v1/sessions/" + session.path("session_id").asText())).DELETE()
                .build(), HttpResponse.BodyHandlers.discarding());
        return Duration.ofMillis(session.path("ttl_ms").asLong());
    }

    /**
     * One {@code bash -s} reading what the test types on its standard input, as a terminal would get it; its standard
     * output and error go to one pipe, read line by line. After each piece of text the test types a marker line
     * ({@code printf}) and reads up to it: what came before is what that piece printed (blank lines dropped).
     */
    private static final class Shell implements AutoCloseable {
        private static final String EOF = "\u0000eof";
        private final Process process;
        private final OutputStream stdin;
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private final StringBuilder transcript = new StringBuilder();
        private final Path transcriptFile;

        private Shell(Process process, Path transcriptFile) {
            this.process = process;
            this.stdin = process.getOutputStream();
            this.transcriptFile = transcriptFile;
            Thread reader = new Thread(this::read, "walk-through-shell-output");
            reader.setDaemon(true);
            reader.start();
        }

        static Shell start(Path logDir) throws IOException {
            ProcessBuilder builder = new ProcessBuilder("bash", "-s").directory(logDir.toFile()).redirectErrorStream(true);
            builder.environment().remove("BASH_ENV");
            return new Shell(builder.start(), logDir.resolve("walk-through.transcript"));
        }

        private void read() {
            try (BufferedReader out = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    lines.add(line);
                }
            } catch (IOException e) {
                lines.add("(reading the shell's output failed: " + e + ")");
            } finally {
                lines.add(EOF);
            }
        }

        /** Types {@code text} and returns the non-blank lines it printed. */
        List<String> type(String text, String what) throws IOException, InterruptedException {
            String marker = "@@ end of " + what + " @@";
            transcript.append("$ ").append(text.strip().replace("\n", "\n$ ")).append('\n');
            stdin.write((text + "printf '\\n%s\\n' '" + marker + "'\n").getBytes(StandardCharsets.UTF_8));
            stdin.flush();
            List<String> printed = new ArrayList<>();
            long deadline = System.nanoTime() + STEP_TIMEOUT.toNanos();
            while (true) {
                String line = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (line == null || line.equals(EOF)) {
                    save();
                    fail("%s printed no end marker %s (%s); it printed:%n%s%s", what,
                            line == null ? "within " + STEP_TIMEOUT.toSeconds() + " s" : "before the shell ended",
                            process.isAlive() ? "the shell runs" : "the shell exited", String.join("\n", printed),
                            transcriptNote());
                }
                if (line.equals(marker)) {
                    save();
                    return printed;
                }
                transcript.append(line).append('\n');
                if (!line.isBlank()) {
                    printed.add(line);
                }
            }
        }

        String transcriptNote() {
            return String.format("%n(the whole session: %s)", transcriptFile);
        }

        private void save() {
            try {
                Files.writeString(transcriptFile, transcript, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void close() throws InterruptedException {
            try {
                stdin.close();
            } catch (IOException ignored) {
                // the shell is gone already
            }
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }
}
