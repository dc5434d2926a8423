package io.warden.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code warden watch} resumes after a stream cut in the middle of a transaction without skipping the rest of it and
 * without printing an event twice. A gateway sends {@code id:} only after the last event of a transaction (one
 * ZooKeeper {@code multi}: a session close of three locks is three events at one revision), so the resume must start
 * from the last {@code id:}, not from the revision of the last event printed.
 *
 * <p>The gateway here is a scripted SSE endpoint, so the cut falls exactly after the first of three events; the
 * gateway's side of the protocol (ids only after a transaction's last event, identical order on every gateway) is
 * tested against real gateways in the service module (WatchTransactionsTest, WatchTwoGatewaysTest).
 */
class WatchResumeTest {
    private HttpServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
    }

    private static String frame(String id, String name, long revision) {
        return (id == null ? "" : "id: " + id + "\n") + "event: RELEASED\ndata: {\"type\":\"RELEASED\",\"name\":\"" + name
                + "\",\"revision\":" + revision + ",\"token\":" + revision + "}\n\n";
    }

    @Test
    void aStreamCutMidTransaction_resumesFromTheLastId_andPrintsEachEventOnce() throws Exception {
        List<String> asked = new CopyOnWriteArrayList<>();
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/v1/watch", (HttpExchange ex) -> {
            String query = ex.getRequestURI().getQuery();
            asked.add(query);
            ex.getResponseHeaders().add("Content-Type", "text/event-stream");
            ex.sendResponseHeaders(200, 0);
            try (OutputStream out = ex.getResponseBody()) {
                String body;
                if (asked.size() == 1) {
                    body = frame(null, "jobs/a", 57);                       // cut after the first of three
                } else if (query != null && query.contains("since_revision=56")) {
                    body = frame(null, "jobs/a", 57) + frame(null, "jobs/b", 57) + frame("57", "jobs/c", 57);
                } else {
                    // A resume after revision 57 skips jobs/b and jobs/c: what a CLI resuming from the event's revision
                    // gets (later events only).
                    body = frame("98", "jobs/x", 98) + frame("99", "jobs/y", 99);
                }
                out.write(body.getBytes(StandardCharsets.UTF_8));
            } catch (IOException ignored) {
                // the CLI hung up after its last event
            }
        });
        server.start();
        String url = "http://127.0.0.1:" + server.getAddress().getPort();

        CompletableFuture<String> run = CompletableFuture.supplyAsync(() -> {
            CommandLine cmd = WardenCli.commandLine();
            StringWriter out = new StringWriter();
            cmd.setOut(new PrintWriter(out, true));
            cmd.setErr(new PrintWriter(new StringWriter(), true));
            int code = cmd.execute("--endpoints", url, "watch", "--prefix", "jobs", "--since", "56",
                    "--max-events", "3", "--json");
            return code + "\n" + out;
        });
        String[] lines = run.get(20, TimeUnit.SECONDS).split("\n");

        assertThat(lines[0]).isEqualTo("0");
        assertThat(List.of(lines).subList(1, lines.length))
                .extracting(l -> l.replaceAll(".*\"name\":\"([^\"]*)\".*", "$1"))
                .containsExactly("jobs/a", "jobs/b", "jobs/c");
        assertThat(asked).hasSize(2);
        assertThat(asked.get(1)).contains("since_revision=56");
    }
}
