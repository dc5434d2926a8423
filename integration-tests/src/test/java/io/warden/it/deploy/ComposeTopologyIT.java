package io.warden.it.deploy;

import static io.warden.it.deploy.ContainerFiles.environment;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.warden.it.deploy.ContainerFiles.Dockerfile;
import io.warden.it.support.Await;
import io.warden.it.support.ChildProcess;
import io.warden.it.support.GatewayProcess;
import io.warden.it.support.JavaLauncher;
import io.warden.it.support.LoopbackPorts;
import io.warden.it.support.WardenClient;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The compose file's cell (deploy/container/compose.yaml), run as processes on this machine, which has no Docker
 * daemon: every container port moved to a free loopback port and every service name to 127.0.0.1, nothing else.
 *
 * <p>The ZooKeeper servers get the {@code zoo.cfg} and {@code myid} that the official image's entrypoint writes from
 * the compose file's variables (with its defaults for the rest: tickTime 2000, initLimit 5, syncLimit 2, ...; only
 * its AdminServer stays off, as the tests have no Jetty 9 for it), run from the build's ZooKeeper jars. The gateways are
 * started by the Dockerfile's {@code ENTRYPOINT} and {@code CMD}, word for word but for the jar's path and with
 * {@code java} on the {@code PATH}, with the environment of the image ({@code ENV}) and of the compose file, in their
 * data directories ({@code WORKDIR}). The health checks are the files' own commands.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ComposeTopologyIT {
    private static final String IMAGE_JAR = "/opt/warden/warden-service.jar";
    private static final String NAME = "compose/report";

    @Test
    void theComposeCell_startedByTheImagesEntrypoint_holdsALockTakenAtOneGatewayAtTheOther_andDrainsOnSigterm()
            throws Exception {
        Dockerfile dockerfile = Dockerfile.read();
        Map<String, JsonNode> zkServices = ContainerFiles.zookeeperServices();
        Map<String, JsonNode> gwServices = ContainerFiles.gatewayServices();
        JavaLauncher launcher = JavaLauncher.forRun("ComposeTopologyIT");
        Path root = Files.createTempDirectory("warden-compose-");
        // Each service's container ports, moved to free ports of this machine.
        Map<String, Map<String, Integer>> ports = new HashMap<>();
        zkServices.keySet().forEach(s -> ports.put(s, Map.of("2181", LoopbackPorts.free(), "2888", LoopbackPorts.free(),
                "3888", LoopbackPorts.free())));
        gwServices.keySet().forEach(s -> ports.put(s, Map.of(dockerfile.one("EXPOSE"), LoopbackPorts.free())));

        List<ChildProcess> children = new ArrayList<>();
        try {
            for (Map.Entry<String, JsonNode> zk : zkServices.entrySet()) {
                children.add(startServer(launcher, root, zk.getKey(), environment(zk.getValue()), ports));
            }
            Await.until("the servers' health checks (in a quorum)", Duration.ofSeconds(60), Duration.ofMillis(200),
                    () -> zkServices.entrySet().stream().allMatch(zk -> zkHealthy(zk.getValue(), ports.get(zk.getKey()))),
                    () -> "logs in " + launcher.logDir());

            Map<String, ChildProcess> gateways = new LinkedHashMap<>();
            Map<String, Map<String, String>> gatewayEnv = new LinkedHashMap<>();
            for (Map.Entry<String, JsonNode> gw : gwServices.entrySet()) {
                String name = gw.getKey();
                Map<String, String> env = gatewayEnvironment(dockerfile, environment(gw.getValue()), root.resolve(name + "-data"),
                        ports.get(name).get(dockerfile.one("EXPOSE")), ports);
                gatewayEnv.put(name, env);
                assertThat(imageHealthCheck(dockerfile, env)).as("the image's health check before %s runs", name).isNotZero();
                Files.createDirectories(Path.of(env.get("WARDEN_DATA_DIR")));
                ChildProcess process = launcher.startCommand(name, entrypoint(dockerfile), env,
                        Path.of(env.get("WARDEN_DATA_DIR")));
                children.add(process);
                gateways.put(name, process);
            }
            for (Map.Entry<String, ChildProcess> gw : gateways.entrySet()) {
                ChildProcess process = gw.getValue();
                Await.until(gw.getKey() + "'s health check (ready)", Duration.ofSeconds(90), Duration.ofMillis(250), () -> {
                    if (!process.isAlive()) {
                        throw new AssertionError(gw.getKey() + " exited with " + process.exitValue() + ":\n" + process.logTail(30));
                    }
                    return imageHealthCheck(dockerfile, gatewayEnv.get(gw.getKey())) == 0;
                }, () -> process.logTail(20));
                // exec in the entrypoint: the process started as sh is now the JVM, which gets the signals.
                assertThat(ProcessHandle.of(process.pid()).flatMap(h -> h.info().command()).orElse(""))
                        .as("the command of %s's process", gw.getKey()).endsWith("/java");
            }

            URI gw1 = URI.create("http://127.0.0.1:" + gatewayEnv.get("gw1").get("WARDEN_HTTP_PORT"));
            URI gw2 = URI.create("http://127.0.0.1:" + gatewayEnv.get("gw2").get("WARDEN_HTTP_PORT"));
            WardenClient atGw1 = new WardenClient(WardenClient.newHttpClient(), List.of(gw1), 0, Duration.ofSeconds(10));
            WardenClient atGw2 = new WardenClient(WardenClient.newHttpClient(), List.of(gw2), 0, Duration.ofSeconds(10));
            String alice = atGw1.openSession("alice", 60_000).id();
            WardenClient.Acquired held = atGw1.acquire(alice, NAME, "EXCLUSIVE", 0, "alice-1", null);
            assertThat(held.status()).isEqualTo("GRANTED");

            JsonNode lock = atGw2.lock(NAME);
            assertThat(lock.path("mode").asText()).isEqualTo("EXCLUSIVE");
            assertThat(lock.path("holders").get(0).path("session_id").asText()).isEqualTo(alice);
            assertThat(lock.path("holders").get(0).path("token").asLong()).isEqualTo(held.token());
            String bob = atGw2.openSession("bob", 60_000).id();
            assertThat(atGw2.acquire(bob, NAME, "EXCLUSIVE", 0, "bob-1", null).status()).isEqualTo("TIMED_OUT");

            // docker stop: SIGTERM to the container's PID 1, the JVM; the gateway drains and exits with 143.
            ChildProcess first = gateways.get("gw1");
            first.terminate();
            assertThat(first.awaitExit(Duration.ofSeconds(30))).as("gw1 ends on SIGTERM").isTrue();
            assertThat(first.exitValue()).as("gw1's exit status; its log:\n%s", first.logTail(20)).isEqualTo(143);
            assertThat(Files.readString(first.log(), StandardCharsets.UTF_8)).contains("gateway gw1 drained and stopped");
            assertThat(atGw2.lock(NAME).path("holders").get(0).path("token").asLong())
                    .as("alice's hold, after the gateway she used stopped").isEqualTo(held.token());
        } finally {
            for (ChildProcess child : children) {
                // Were the JVM the shell's child (an entrypoint without exec), killing the shell would orphan it.
                ProcessHandle.of(child.pid()).ifPresent(h -> h.descendants().forEach(ProcessHandle::destroyForcibly));
                child.close();
            }
            OldestZooKeeperIT.deleteRecursively(root);
        }
    }

    /** The official image's entrypoint, as far as it writes files: zoo.cfg from the variables, then myid. */
    private static ChildProcess startServer(JavaLauncher launcher, Path root, String name, Map<String, String> env,
                                            Map<String, Map<String, Integer>> ports) throws IOException {
        Path conf = Files.createDirectories(root.resolve(name).resolve("conf"));
        Path data = Files.createDirectories(root.resolve(name).resolve("data"));
        Path datalog = Files.createDirectories(root.resolve(name).resolve("datalog"));
        StringBuilder cfg = new StringBuilder()
                .append("dataDir=").append(data).append('\n')
                .append("dataLogDir=").append(datalog).append('\n')
                .append("tickTime=").append(env.getOrDefault("ZOO_TICK_TIME", "2000")).append('\n')
                .append("initLimit=").append(env.getOrDefault("ZOO_INIT_LIMIT", "5")).append('\n')
                .append("syncLimit=").append(env.getOrDefault("ZOO_SYNC_LIMIT", "2")).append('\n')
                .append("autopurge.snapRetainCount=").append(env.getOrDefault("ZOO_AUTOPURGE_SNAPRETAINCOUNT", "3")).append('\n')
                .append("autopurge.purgeInterval=").append(env.getOrDefault("ZOO_AUTOPURGE_PURGEINTERVAL", "0")).append('\n')
                .append("maxClientCnxns=").append(env.getOrDefault("ZOO_MAX_CLIENT_CNXNS", "60")).append('\n')
                .append("standaloneEnabled=").append(env.getOrDefault("ZOO_STANDALONE_ENABLED", "true")).append('\n')
                .append("admin.enableServer=false\n");
        ContainerFiles.zooServers(env.get("ZOO_SERVERS")).forEach((id, s) -> {
            Map<String, Integer> p = ports.get(s[0]);
            cfg.append("server.").append(id).append("=127.0.0.1:").append(p.get(s[1])).append(':').append(p.get(s[2]))
                    .append(';').append(p.get(s[3])).append('\n');
        });
        if (env.containsKey("ZOO_4LW_COMMANDS_WHITELIST")) {
            cfg.append("4lw.commands.whitelist=").append(env.get("ZOO_4LW_COMMANDS_WHITELIST")).append('\n');
        }
        for (String extra : env.getOrDefault("ZOO_CFG_EXTRA", "").split("\\s+")) {
            if (!extra.isBlank()) {
                cfg.append(extra).append('\n');
            }
        }
        Files.writeString(conf.resolve("zoo.cfg"), cfg);
        Files.writeString(data.resolve("myid"), env.get("ZOO_MY_ID") + "\n");
        return launcher.startMain(name, List.of("-Xms32m", "-Xmx128m", "-XX:+UseSerialGC",
                        "-Dlogback.configurationFile=" + launcher.logbackConfig("INFO"), "-Dzookeeper.jmx.log4j.disable=true",
                        "-Djava.net.preferIPv4Stack=true"),
                "org.apache.zookeeper.server.quorum.QuorumPeerMain", List.of(conf.resolve("zoo.cfg").toString()));
    }

    /** The compose file's health check of a server, with its client port moved. */
    private static boolean zkHealthy(JsonNode service, Map<String, Integer> ports) {
        List<String> test = new ArrayList<>();
        service.path("healthcheck").path("test").forEach(w -> test.add(w.asText().replace("/2181", "/" + ports.get("2181"))));
        assertThat(test.get(0)).isEqualTo("CMD");
        return run(test.subList(1, test.size()), Map.of("PATH", "/usr/bin:/bin")) == 0;
    }

    /** The image's environment, then the compose file's over it, with names and ports moved to this machine's. */
    private static Map<String, String> gatewayEnvironment(Dockerfile dockerfile, Map<String, String> compose, Path dataDir,
                                                          int httpPort, Map<String, Map<String, Integer>> ports) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("PATH", Path.of(JavaLauncher.javaExecutable()).getParent() + ":/usr/bin:/bin");
        env.putAll(dockerfile.env());
        env.putAll(compose);
        List<String> connect = new ArrayList<>();
        for (String[] hp : ContainerFiles.hostPorts(env.get("WARDEN_ZK_CONNECT"))) {
            connect.add("127.0.0.1:" + ports.get(hp[0]).get(hp[1]));
        }
        env.put("WARDEN_ZK_CONNECT", String.join(",", connect));
        env.put("WARDEN_HTTP_PORT", Integer.toString(httpPort));
        env.put("WARDEN_DATA_DIR", dataDir.toString());
        env.put("WARDEN_ADVERTISE_HOST", "127.0.0.1");
        return env;
    }

    /** ENTRYPOINT then CMD, the jar where this build has it. */
    private static List<String> entrypoint(Dockerfile dockerfile) {
        List<String> command = new ArrayList<>();
        for (String word : dockerfile.execForm("ENTRYPOINT")) {
            command.add(word.replace(IMAGE_JAR, GatewayProcess.serviceJar().toString()));
        }
        command.addAll(dockerfile.execForm("CMD"));
        return command;
    }

    /** The Dockerfile's HEALTHCHECK command, run as Docker runs a shell-form one; its exit status. */
    private static int imageHealthCheck(Dockerfile dockerfile, Map<String, String> env) {
        return run(List.of("/bin/sh", "-c", dockerfile.healthCommand()), env);
    }

    private static int run(List<String> command, Map<String, String> env) {
        try {
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD);
            builder.environment().clear();
            builder.environment().putAll(env);
            Process p = builder.start();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return -1;
            }
            return p.exitValue();
        } catch (IOException e) {
            throw new AssertionError("cannot run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }
}
