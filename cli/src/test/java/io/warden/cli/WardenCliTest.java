package io.warden.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warden.client.Hold;
import io.warden.client.WardenClient;
import io.warden.service.Gateway;
import io.warden.service.support.WardenFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The CLI in-process ({@link CommandLine#execute}, output captured) against a real gateway on a real ZooKeeper, with
 * real child processes for {@code warden lock}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WardenCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private WardenFixture fx;
    private Gateway gateway;
    private String url;
    private final List<WardenClient> clients = new ArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @TempDir
    Path tmp;

    /** One run of the CLI: exit code and what it printed. */
    record Run(int code, String out, String err) {
        JsonNode json() {
            try {
                return JSON.readTree(out);
            } catch (IOException e) {
                throw new AssertionError("not JSON: " + out, e);
            }
        }
    }

    @BeforeEach
    void start() throws Exception {
        fx = new WardenFixture();
        gateway = Gateway.start(fx.config().toBuilder().httpHost("127.0.0.1").sessionTtlMin(Duration.ofMillis(500)).build());
        url = "http://127.0.0.1:" + gateway.httpPort();
    }

    @AfterEach
    void stop() throws Exception {
        clients.forEach(WardenClient::close);
        if (gateway != null) {
            gateway.close();
        }
        fx.close();
    }

    private Run warden(String... args) {
        CommandLine cmd = WardenCli.commandLine();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cmd.setOut(new PrintWriter(out, true));
        cmd.setErr(new PrintWriter(err, true));
        List<String> all = new ArrayList<>(List.of("--endpoints", url, "--client-id", "cli-test"));
        all.addAll(List.of(args));
        int code = cmd.execute(all.toArray(String[]::new));
        return new Run(code, out.toString(), err.toString());
    }

    private WardenClient client(String id) {
        WardenClient c = WardenClient.builder().endpoints(url).clientId(id).sessionTtl(Duration.ofSeconds(5)).build();
        clients.add(c);
        return c;
    }

    private JsonNode lock(String name) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url + "/v1/locks/" + name)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    /**
     * A lock with more entries than a gateway reads in one ZooKeeper reply is listed as too large
     * (before, the listing and the read cost the gateway its ZooKeeper connection); here a gateway whose client takes
     * 20,000-byte replies and a lock of 400 nodes made directly in ZooKeeper.
     */
    @Test
    void ls_showsALockTooLargeToRead_andGetSaysWhy() throws Exception {
        gateway.close();
        gateway = Gateway.start(fx.config().toBuilder().httpHost("127.0.0.1").zkMaxPacketBytes(20_000)
                .maxEntriesPerLock(100).build());
        url = "http://127.0.0.1:" + gateway.httpPort();
        String path = WardenFixture.lockPath("big/pile");
        fx.curator.create().creatingParentContainersIfNeeded().withMode(org.apache.zookeeper.CreateMode.CONTAINER).forPath(path);
        for (int i = 0; i < 400; i++) {
            fx.curator.create().withMode(org.apache.zookeeper.CreateMode.PERSISTENT_SEQUENTIAL).forPath(path + "/"
                    + io.warden.service.queue.QueueEntry.prefix(java.util.UUID.randomUUID().toString(),
                    io.warden.service.api.Mode.SHARED));
        }
        Run ls = warden("ls", "--namespace", "big");
        assertThat(ls.code()).as(ls.err()).isZero();
        assertThat(ls.out()).contains("big/pile", "TOO_LARGE", "400 entries: too large to read");
        Run get = warden("get", "big/pile");
        assertThat(get.code()).isNotZero();
        assertThat(get.out() + get.err()).contains("big/pile has 400 entries");
    }

    @Test
    void lockRunsTheCommandWithTheTokenExitsWithItsCodeAndReleases() throws Exception {
        Path file = tmp.resolve("token");
        Run run = warden("lock", "jobs/nightly", "--wait", "5s", "--",
                "sh", "-c", "echo \"$WARDEN_TOKEN $WARDEN_LOCK\" > '" + file + "'; exit 7");

        assertThat(run.code()).as(run.err()).isEqualTo(7);
        String[] written = Files.readString(file).trim().split(" ");
        assertThat(Long.parseLong(written[0])).isPositive();
        assertThat(written[1]).isEqualTo("jobs/nightly");
        assertThat(lock("jobs/nightly").path("mode").asText()).isEqualTo("FREE");

        // a second run gets a larger token (fencing), and a successful command exits 0
        Path second = tmp.resolve("token2");
        assertThat(warden("lock", "jobs/nightly", "--", "sh", "-c", "echo $WARDEN_TOKEN > '" + second + "'").code()).isZero();
        assertThat(Long.parseLong(Files.readString(second).trim())).isGreaterThan(Long.parseLong(written[0]));
    }

    @Test
    void lockWithWaitZeroOnAHeldLockExits3WithoutRunningTheCommand() throws Exception {
        try (Hold held = client("holder").lock("jobs/busy").acquire(Duration.ofSeconds(5))) {
            Path file = tmp.resolve("ran");
            Run run = warden("lock", "jobs/busy", "--wait", "0", "--", "sh", "-c", "touch '" + file + "'");

            assertThat(run.code()).isEqualTo(3);
            assertThat(run.err()).contains("jobs/busy");
            assertThat(file).doesNotExist();
            assertThat(lock("jobs/busy").path("holders")).hasSize(1);
            assertThat(lock("jobs/busy").path("waiters")).isEmpty();

            Run timed = warden("lock", "jobs/busy", "--wait", "300ms", "--", "sh", "-c", "touch '" + file + "'");
            assertThat(timed.code()).isEqualTo(3);
            assertThat(file).doesNotExist();
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void lockKillsTheCommandAndExits4WhenTheSessionIsLost() throws Exception {
        Path pidFile = tmp.resolve("started");
        CompletableFuture<Run> running = CompletableFuture.supplyAsync(() -> warden("--ttl", "2s", "lock", "jobs/long",
                "--kill-grace", "2s", "--", "sh", "-c", "echo $WARDEN_SESSION > '" + pidFile + "'; exec sleep 60"));
        WardenFixture.await("the command runs", () -> Files.exists(pidFile) && readQuietly(pidFile).endsWith("\n"));
        String session = readQuietly(pidFile).trim();

        // the session is closed behind the CLI's back: its next keepalive learns it is gone
        HttpResponse<String> closed = http.send(HttpRequest.newBuilder(URI.create(url + "/v1/sessions/" + session))
                .DELETE().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(closed.statusCode()).isEqualTo(200);

        Run run = running.get(20, TimeUnit.SECONDS);
        assertThat(run.code()).as(run.err()).isEqualTo(4);
        assertThat(run.err()).contains("lost");
    }

    @Test
    void lockWithOnRevokeTerm_sendsTheCommandSigterm_whenAskedToLetGo_andReleases() throws Exception {
        Path started = tmp.resolve("started");
        Path termed = tmp.resolve("termed");
        CompletableFuture<Run> running = CompletableFuture.supplyAsync(() -> warden("lock", "jobs/revoked",
                "--on-revoke=term", "--", "sh", "-c", "trap 'touch \"" + termed + "\"; exit 0' TERM; "
                        + "echo $WARDEN_TOKEN > '" + started + "'; while true; do sleep 0.1; done"));
        WardenFixture.await("the command runs", () -> Files.exists(started) && readQuietly(started).endsWith("\n"));
        long token = Long.parseLong(readQuietly(started).trim());

        HttpResponse<String> revoked = http.send(HttpRequest.newBuilder(URI.create(url + "/v1/revoke"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"jobs/revoked\",\"token\":" + token
                        + ",\"grace_ms\":600000,\"reason\":\"cli test\"}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(revoked.statusCode()).as(revoked.body()).isEqualTo(200);

        Run run = running.get(20, TimeUnit.SECONDS);
        assertThat(run.code()).as(run.err()).isZero(); // the command's own exit, from its TERM trap
        assertThat(termed).exists();
        assertThat(run.err()).contains("asked to let go");
        assertThat(lock("jobs/revoked").path("mode").asText()).as("released when the command exited").isEqualTo("FREE");
    }

    @Test
    void lockOfSeveralNames_takesThemTogether_givesEachTokenByNumber_andReleasesThemAll() throws Exception {
        Path file = tmp.resolve("env");
        Run run = warden("lock", "bank/acct-2", "bank/acct-1", "--wait", "5s", "--", "sh", "-c",
                "echo \"$WARDEN_LOCK_COUNT $WARDEN_LOCK_1=$WARDEN_TOKEN_1 $WARDEN_LOCK_2=$WARDEN_TOKEN_2 [${WARDEN_TOKEN-unset}]\" > '"
                        + file + "'; exit 3");
        assertThat(run.code()).as(run.err()).isEqualTo(3);
        String[] seen = Files.readString(file).trim().split(" ");
        assertThat(seen[0]).isEqualTo("2");
        assertThat(seen[1]).startsWith("bank/acct-2=");
        assertThat(seen[2]).startsWith("bank/acct-1=");
        assertThat(Long.parseLong(seen[1].substring(seen[1].indexOf('=') + 1))).isPositive();
        assertThat(seen[3]).as("no WARDEN_TOKEN for several names").isEqualTo("[unset]");
        assertThat(lock("bank/acct-1").path("mode").asText()).isEqualTo("FREE");
        assertThat(lock("bank/acct-2").path("mode").asText()).isEqualTo("FREE");
    }

    @Test
    void lockOfSeveralNames_oneNameHeld_waitZeroExits3WithoutRunningTheCommand() throws Exception {
        Path file = tmp.resolve("ran");
        try (Hold held = client("holder").lock("bank/acct-2").acquire(Duration.ofSeconds(5))) {
            Run run = warden("lock", "bank/acct-1", "bank/acct-2", "--wait", "0", "--", "sh", "-c", "touch '" + file + "'");
            assertThat(run.code()).as(run.err()).isEqualTo(3);
            assertThat(file).doesNotExist();
            assertThat(lock("bank/acct-1").path("mode").asText()).as("nothing left on the free name").isEqualTo("FREE");
        }
    }

    @Test
    void lockOfSeveralNames_killsTheCommandWhenOneNameIsReleasedElsewhere() throws Exception {
        Path started = tmp.resolve("started");
        CompletableFuture<Run> running = CompletableFuture.supplyAsync(() -> warden("lock", "bank/acct-1", "bank/acct-2",
                "--kill-grace", "2s", "--", "sh", "-c",
                "echo \"$WARDEN_SESSION $WARDEN_TOKEN_2\" > '" + started + "'; exec sleep 60"));
        WardenFixture.await("the command runs", () -> Files.exists(started) && readQuietly(started).endsWith("\n"));
        String[] seen = readQuietly(started).trim().split(" ");

        // another process, with the session id and the token, releases one of the names (as a force-release does)
        HttpResponse<String> released = http.send(HttpRequest.newBuilder(URI.create(url + "/v1/release"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"session_id\":\"" + seen[0] + "\",\"name\":\"bank/acct-2\","
                        + "\"token\":" + seen[1] + "}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(released.body()).contains("true");

        Run run = running.get(20, TimeUnit.SECONDS);
        assertThat(run.code()).as(run.err()).isEqualTo(4);
        assertThat(run.err()).contains("lost");
        assertThat(lock("bank/acct-1").path("mode").asText()).as("closing the session released the other").isEqualTo("FREE");
    }

    @Test
    void lockOfSeveralNames_onRevokeTerm_appliesToAnyName() throws Exception {
        Path started = tmp.resolve("started");
        Path termed = tmp.resolve("termed");
        CompletableFuture<Run> running = CompletableFuture.supplyAsync(() -> warden("lock", "jobs/a", "jobs/b",
                "--on-revoke=term", "--", "sh", "-c", "trap 'touch \"" + termed + "\"; exit 0' TERM; "
                        + "echo $WARDEN_TOKEN_2 > '" + started + "'; while true; do sleep 0.1; done"));
        WardenFixture.await("the command runs", () -> Files.exists(started) && readQuietly(started).endsWith("\n"));
        long token = Long.parseLong(readQuietly(started).trim());

        HttpResponse<String> revoked = http.send(HttpRequest.newBuilder(URI.create(url + "/v1/revoke"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"jobs/b\",\"token\":" + token
                        + ",\"grace_ms\":600000,\"reason\":\"cli test\"}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(revoked.statusCode()).as(revoked.body()).isEqualTo(200);

        Run run = running.get(20, TimeUnit.SECONDS);
        assertThat(run.code()).as(run.err()).isZero();
        assertThat(termed).exists();
        assertThat(lock("jobs/a").path("mode").asText()).isEqualTo("FREE");
        assertThat(lock("jobs/b").path("mode").asText()).isEqualTo("FREE");
    }

    /**
     * A lost lock stops what the command started too, even when the command itself ends at the SIGTERM and leaves a
     * child that ignores it: the child is listed before the signal and gets SIGKILL after --kill-grace.
     */
    @Test
    void lockLost_aGrandchildIgnoringSigterm_isKilledAfterTheGrace() throws Exception {
        Path started = tmp.resolve("started");
        Path grandchild = tmp.resolve("grandchild");
        CompletableFuture<Run> running = CompletableFuture.supplyAsync(() -> warden("--ttl", "2s", "lock", "jobs/tree",
                "--kill-grace", "1s", "--", "sh", "-c",
                "sh -c 'trap \"\" TERM; echo $$ > \"$0\"; while :; do sleep 0.1; done' '" + grandchild + "' & "
                        + "echo $WARDEN_SESSION > '" + started + "'; wait"));
        WardenFixture.await("the command and its child run", () -> readQuietly(started).endsWith("\n")
                && readQuietly(grandchild).endsWith("\n"));
        long grandchildPid = Long.parseLong(readQuietly(grandchild).trim());
        HttpResponse<String> closed = http.send(HttpRequest.newBuilder(URI.create(url + "/v1/sessions/"
                + readQuietly(started).trim())).DELETE().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(closed.statusCode()).isEqualTo(200);

        try {
            Run run = running.get(20, TimeUnit.SECONDS);
            assertThat(run.code()).as(run.err()).isEqualTo(4);
            // SIGKILL was sent before warden returned; the kernel may take a moment to end the process
            WardenFixture.await("the child that ignored SIGTERM is killed", Duration.ofSeconds(2),
                    () -> !WardenProcessIT.alive(grandchildPid));
        } finally {
            // a survivor would hold this JVM's stdout open, and the build would wait for it
            ProcessHandle.of(grandchildPid).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    @Test
    void durations_needAUnit_aBareNumberIsRefusedNamingTheFlag_andDurationsPrintWithUnits() throws Exception {
        Run bare = warden("lock", "jobs/x", "--wait", "3000", "--", "true");
        assertThat(bare.code()).isEqualTo(2);
        assertThat(bare.err()).contains("--wait", "'3000' has no unit: give one, e.g. 3000ms or 3s")
                .doesNotContain("Exception");
        assertThat(warden("--ttl", "10", "ls").err()).contains("--ttl", "'10' has no unit");
        assertThat(warden("lock", "jobs/x", "--kill-grace", "5", "--", "true").err()).contains("--kill-grace");
        assertThat(warden("acquire", "user:1", "--wait", "PT5S").err()).contains("--wait", "'PT5S' is not a duration");

        try (Hold held = client("holder").lock("jobs/busy").acquire(Duration.ofSeconds(5))) {
            Run timed = warden("lock", "jobs/busy", "--wait", "1.5s", "--", "true");
            assertThat(timed.code()).isEqualTo(3);
            assertThat(timed.err()).contains("not granted within 1.5s").doesNotContain("PT");
        }
        Run acquired = warden("--ttl", "1m30s", "acquire", "user:7");
        assertThat(acquired.code()).as(acquired.err()).isZero();
        assertThat(acquired.out()).contains("ttl    1m30s");
        String lease = acquired.out().lines().filter(l -> l.startsWith("lease")).findFirst().orElseThrow().split("\\s+")[1];
        assertThat(warden("--ttl", "45s", "renew", "--lease", lease).out()).contains("for 45s");
        assertThat(warden("sessions", lease).out()).containsPattern("ttl 45s  remaining [0-9.]+s");
    }

    @Test
    void cells_listsEachCellWithItsState_andSaysWhenOneDoesNotServe() throws Exception {
        Run one = warden("cells");
        assertThat(one.code()).as(one.err()).isZero();
        assertThat(one.out()).startsWith("default  serving").contains("every namespace not routed elsewhere");

        try (org.apache.curator.test.TestingServer cellB = new org.apache.curator.test.TestingServer(true)) {
            gateway.close();
            gateway = Gateway.start(fx.config().toBuilder().httpHost("127.0.0.1")
                    .cells(List.of(new io.warden.service.config.CellAddress("b", cellB.getConnectString(), null)))
                    .routes(java.util.Map.of("pay", "b", "orders", "b")).build());
            url = "http://127.0.0.1:" + gateway.httpPort();
            Run two = warden("cells");
            assertThat(two.code()).as(two.err()).isZero();
            assertThat(two.out().lines()).hasSize(2);
            assertThat(two.out().lines().toList().get(1)).startsWith("b  serving  " + cellB.getConnectString() + "/warden")
                    .endsWith("namespaces: orders,pay");
            assertThat(warden("cells", "--json").json().path("cells").get(1).path("namespaces").size()).isEqualTo(2);

            Run moved = warden("cells", "move", "orders", "default", "--deadline", "2s");
            assertThat(moved.code()).as(moved.err()).isZero();
            assertThat(moved.out()).startsWith("moved namespace orders from cell b to cell default in ");
            assertThat(warden("cells").out().lines().toList().get(1)).endsWith("namespaces: pay");
            assertThat(warden("cells", "move", "orders", "default").out()).contains("in cell default already");
            assertThat(warden("cells", "move", "orders", "nowhere").code()).isEqualTo(2);
            Run bumped = warden("cells", "bump-tokens", "b", "--above", "90000000000");
            assertThat(bumped.code()).as(bumped.err()).isZero();
            assertThat(bumped.out()).startsWith("raised the token floor of cell b to ");
            assertThat(warden("cells", "bump-tokens", "b", "--above", "5").out()).contains("nothing raised");

            cellB.stop();
            WardenFixture.await("cell b not serving", () -> warden("cells").code() == 5);
            assertThat(warden("cells").out()).contains("b  NOT SERVING");
        }
    }

    @Test
    void cellsAdd_addsACellToTheRunningGateway_onceOnly_andSaysWhyNot() throws Exception {
        try (org.apache.curator.test.TestingServer cellC = new org.apache.curator.test.TestingServer(true)) {
            Run added = warden("cells", "add", "c", "--zk", cellC.getConnectString());
            assertThat(added.code()).as(added.err()).isZero();
            assertThat(added.out()).startsWith("added cell c at " + cellC.getConnectString() + "/warden");
            assertThat(warden("cells").out().lines().toList().get(1)).startsWith("c  serving").endsWith("namespaces: none");
            Run again = warden("cells", "add", "c", "--zk", cellC.getConnectString());
            assertThat(again.code()).isZero();
            assertThat(again.out()).contains("there already");
            Run elsewhere = warden("cells", "add", "c", "--zk", cellC.getConnectString(), "--chroot", "/other");
            assertThat(elsewhere.code()).as("another address for the same cell").isEqualTo(3);
            assertThat(elsewhere.err()).contains("cannot change");
            assertThat(warden("cells", "add", "default", "--zk", cellC.getConnectString()).code()).isEqualTo(2);
            Run moved = warden("cells", "move", "jobs", "c", "--deadline", "1s");
            assertThat(moved.code()).as(moved.err()).isZero();
            assertThat(warden("cells").out().lines().toList().get(1)).endsWith("namespaces: jobs");
        }
    }

    @Test
    void lockReportsACommandThatCannotStart() throws Exception {
        Run run = warden("lock", "jobs/missing", "--", tmp.resolve("no-such-command").toString());
        assertThat(run.code()).isEqualTo(127);
        assertThat(lock("jobs/missing").path("mode").asText()).isEqualTo("FREE");
    }

    @Test
    void getAndLsShowTheHolder() throws Exception {
        WardenClient holder = client("holder-7");
        try (Hold held = holder.lock("payments/invoice-42").acquire(Duration.ofSeconds(5))) {
            Run get = warden("get", "payments/invoice-42", "--json");
            assertThat(get.code()).as(get.err()).isZero();
            JsonNode view = get.json();
            assertThat(view.path("mode").asText()).isEqualTo("EXCLUSIVE");
            assertThat(view.path("holders").get(0).path("client_id").asText()).isEqualTo("holder-7");
            assertThat(view.path("holders").get(0).path("token").asLong()).isEqualTo(held.token());

            Run human = warden("get", "payments/invoice-42");
            assertThat(human.out()).contains("EXCLUSIVE", "holder-7", "token " + held.token(), holder.sessionId());

            Run ls = warden("ls", "--namespace", "payments", "--json");
            assertThat(ls.code()).as(ls.err()).isZero();
            assertThat(ls.json().path("locks")).anySatisfy(l -> {
                assertThat(l.path("name").asText()).isEqualTo("payments/invoice-42");
                assertThat(l.path("holders").asInt()).isEqualTo(1);
            });
            assertThat(warden("ls", "--prefix", "payments/inv").out()).contains("payments/invoice-42", "EXCLUSIVE");
            assertThat(warden("ls", "--namespace", "other", "--json").json().path("locks")).isEmpty();

            Run sessions = warden("sessions", holder.sessionId(), "--json");
            assertThat(sessions.code()).as(sessions.err()).isZero();
            assertThat(sessions.json().path("holds").get(0).path("name").asText()).isEqualTo("payments/invoice-42");
        }
        assertThat(warden("get", "payments/invoice-42", "--json").json().path("mode").asText()).isEqualTo("FREE");
        assertThat(warden("sessions", "0123456789abcdef0123456789abcdef").code()).isEqualTo(6);
        assertThat(warden("get", "Bad Name").code()).isEqualTo(2);
    }

    @Test
    void againstACellWithAnAuthFile_theCliAuthenticatesWithItsTokenFile_andWithoutOneExits7() throws Exception {
        gateway.close();
        Path auth = tmp.resolve("auth.yaml");
        String token = "cli-token-0123456789abcdef";
        java.nio.file.Files.writeString(auth, "principals:\n  - name: ops\n    token_sha256: "
                + io.warden.service.auth.AuthFile.sha256(token) + "\n    grants: [{namespace: \"*\", role: lock}]\n");
        gateway = Gateway.start(fx.config().toBuilder().httpHost("127.0.0.1").authFile(auth).build());
        url = "http://127.0.0.1:" + gateway.httpPort();
        Path tokenFile = tmp.resolve("token");
        java.nio.file.Files.writeString(tokenFile, token + "\n");

        Run denied = warden("get", "payments/a");
        assertThat(denied.code()).as(denied.err()).isEqualTo(7);
        assertThat(denied.err()).contains("401", "UNAUTHENTICATED");
        Run locked = warden("--token-file", tokenFile.toString(), "lock", "payments/a", "--", "true");
        assertThat(locked.code()).as(locked.err()).isZero();
        Run leased = warden("--token", token, "acquire", "user:1", "--json");
        assertThat(leased.code()).as(leased.err()).isZero();
        Run listed = warden("--token-file", tokenFile.toString(), "ls", "--json");
        assertThat(listed.code()).as(listed.err()).isZero();
        assertThat(listed.out()).contains("default/user:1");
        Run wrong = warden("--token", "not-the-token-0123456789", "ls");
        assertThat(wrong.code()).isEqualTo(7);
    }

    @Test
    void againstAnHttpsGatewayWithClientCertificates_theCliPresentsItsCertificate() throws Exception {
        gateway.close();
        io.warden.service.support.TestCa ca = new io.warden.service.support.TestCa(tmp).ca("ca")
                .issue("ca", "gateway", "IP:127.0.0.1").issue("ca", "ops", "DNS:ops");
        Path auth = tmp.resolve("auth.yaml");
        java.nio.file.Files.writeString(auth, "principals:\n  - name: ops\n    grants: [{namespace: \"*\", role: lock}]\n");
        gateway = Gateway.start(fx.config().toBuilder().httpHost("127.0.0.1").authFile(auth)
                .tlsCert(ca.pem("gateway")).tlsKey(ca.key("gateway")).tlsClientCa(ca.pem("ca")).build());
        url = "https://127.0.0.1:" + gateway.httpPort();
        String[] tls = {"--cacert", ca.pem("ca").toString(), "--cert", ca.pem("ops").toString(), "--key", ca.key("ops").toString()};

        Run locked = warden(concat(tls, "lock", "payments/tls", "--", "true"));
        assertThat(locked.code()).as(locked.err()).isZero();
        Run listed = warden(concat(tls, "ls", "--json"));
        assertThat(listed.code()).as(listed.err()).isZero();
        Run noCert = warden("--cacert", ca.pem("ca").toString(), "ls");
        assertThat(noCert.code()).as(noCert.err()).isEqualTo(7);
        Run badKey = warden("--cacert", ca.pem("ca").toString(), "--cert", ca.pem("ops").toString(), "ls");
        assertThat(badKey.code()).isEqualTo(2);
        assertThat(badKey.err()).contains("--cacert/--cert/--key");
    }

    private static String[] concat(String[] first, String... rest) {
        String[] all = java.util.Arrays.copyOf(first, first.length + rest.length);
        System.arraycopy(rest, 0, all, first.length, rest.length);
        return all;
    }

    @Test
    void acquireRenewAndReleaseALease() throws Exception {
        Run acquired = warden("--ttl", "30s", "acquire", "user:42", "--json");
        assertThat(acquired.code()).as(acquired.err()).isZero();
        String lease = acquired.json().path("lease_id").asText();
        long token = acquired.json().path("fencing_token").asLong();
        assertThat(token).isPositive();
        assertThat(lock("default/user:42").path("holders").get(0).path("token").asLong()).isEqualTo(token);

        // the lease outlives the CLI process that took it: another acquire is refused
        Run again = warden("acquire", "user:42");
        assertThat(again.code()).isEqualTo(3);
        assertThat(again.err()).contains("cli-test");

        assertThat(warden("renew", "--lease", lease).code()).isZero();
        assertThat(warden("sessions", lease).out()).contains("default/user:42", "token " + token);

        Run released = warden("release", "--lease", lease, "user:42");
        assertThat(released.code()).as(released.err()).isZero();
        assertThat(lock("default/user:42").path("mode").asText()).isEqualTo("FREE");
        assertThat(warden("release", "--lease", lease, "user:42").code()).isEqualTo(6);
        assertThat(warden("renew", "--lease", lease).code()).isEqualTo(6);

        Run env = warden("acquire", "user:42", "--env");
        assertThat(env.out()).contains("WARDEN_LEASE=", "WARDEN_TOKEN=");
    }

    @Test
    void watchPrintsEventsAsJsonLines() throws Exception {
        WardenClient holder = client("watcher-test");
        Hold held = holder.lock("jobs/watched").acquire(Duration.ofSeconds(5));
        Run resync = warden("watch", "--name", "jobs/watched", "--since", "0", "--max-events", "1", "--json");
        assertThat(resync.code()).as(resync.err()).isZero();
        assertThat(resync.json().path("type").asText()).isEqualTo("RESYNC");

        long revision = warden("get", "jobs/watched", "--json").json().path("revision").asLong();
        CompletableFuture<Run> watching = CompletableFuture.supplyAsync(() -> warden("watch", "--prefix", "jobs",
                "--since", Long.toString(revision), "--max-events", "1", "--json"));
        held.release();
        Run run = watching.get(20, TimeUnit.SECONDS);
        assertThat(run.code()).as(run.err()).isZero();
        JsonNode event = run.json();
        assertThat(event.path("type").asText()).isEqualTo("RELEASED");
        assertThat(event.path("name").asText()).isEqualTo("jobs/watched");
    }

    @Test
    void usageErrorsAndUnreachableGatewaysHaveTheirExitCodes() {
        assertThat(warden("lock", "jobs/x").code()).isEqualTo(2);           // no command
        assertThat(warden("ls", "--bogus").code()).isEqualTo(2);
        assertThat(warden("watch").code()).isEqualTo(2);                    // --name or --prefix
        assertThat(warden("lock", "jobs/x", "--wait", "soon", "--", "true").code()).isEqualTo(2);

        CommandLine cmd = WardenCli.commandLine();
        cmd.setErr(new PrintWriter(new StringWriter(), true));
        assertThat(cmd.execute("--endpoints", "http://127.0.0.1:1", "get", "jobs/x")).isEqualTo(5);
        assertThat(cmd.execute("get", "jobs/x", "--endpoints", "http://127.0.0.1:1")).isEqualTo(5);

        Run help = warden("lock", "--help");
        assertThat(help.code()).isZero();
        assertThat(help.out()).contains("WARDEN_TOKEN", "WARDEN_TOKEN_i", "WARDEN_LOCK_COUNT", "Exit codes");
    }

    private static String readQuietly(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            return "";
        }
    }
}
