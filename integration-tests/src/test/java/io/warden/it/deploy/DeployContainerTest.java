package io.warden.it.deploy;

import static io.warden.it.deploy.ContainerFiles.environment;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.warden.it.deploy.ContainerFiles.Dockerfile;
import io.warden.service.Settings;
import io.warden.service.config.ConfigLoader;
import io.warden.service.config.WardenConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.zookeeper.Version;
import org.junit.jupiter.api.Test;

/**
 * The container image definition and the compose file of docs/containers.md, as shipped in {@code deploy/container/}:
 * what can be checked of them without a Docker daemon. {@code ComposeTopologyIT} runs them.
 */
class DeployContainerTest {
    private static final Dockerfile DOCKERFILE = Dockerfile.read();

    @Test
    void theBaseImage_isPinnedToOneBuild_ofTheJavaReleaseTheJarIsBuiltFor() {
        String from = DOCKERFILE.one("FROM");
        Matcher m = Pattern.compile("eclipse-temurin:(\\d+)\\.\\d+\\.\\d+(?:\\.\\d+)?_\\d+-jre-[a-z]+").matcher(from);
        assertThat(m.matches()).as("FROM %s: a Temurin JRE tag with its full version (not 17-jre or latest)", from).isTrue();
        String pom = String.join("\n", ContainerFiles.lines(ContainerFiles.REPO.resolve("pom.xml")));
        Matcher release = Pattern.compile("<release>(\\d+)</release>").matcher(pom);
        assertThat(release.find()).isTrue();
        assertThat(m.group(1)).as("the base image's Java, the compiler's release in pom.xml").isEqualTo(release.group(1));
    }

    @Test
    void theImageRuns_asTheUserItsRunLineMakes_notRoot() {
        String user = DOCKERFILE.one("USER");
        Matcher ids = Pattern.compile("(\\d+):(\\d+)").matcher(user);
        assertThat(ids.matches()).as("USER %s: numeric uid:gid (runAsNonRoot can check it)", user).isTrue();
        assertThat(ids.group(1)).as("the uid").isNotEqualTo("0");
        assertThat(ids.group(2)).as("the gid").isNotEqualTo("0");
        String run = DOCKERFILE.one("RUN");
        assertThat(run).contains("groupadd --system --gid " + ids.group(2) + " warden")
                .contains("useradd --system --uid " + ids.group(1) + " --gid warden");
        // USER comes after everything that needs root, and before the entrypoint.
        List<String> order = DOCKERFILE.instructions.stream().map(ContainerFiles.Instruction::keyword).toList();
        assertThat(order.lastIndexOf("RUN")).isLessThan(order.indexOf("USER"));
        assertThat(order.indexOf("USER")).isLessThan(order.indexOf("ENTRYPOINT"));
    }

    @Test
    void theDataDirectory_isTheVolume_theWorkingDirectory_andTheGatewaysDataDir_ownedByItsUser() {
        String dataDir = DOCKERFILE.env().get("WARDEN_DATA_DIR");
        assertThat(dataDir).isEqualTo("/var/lib/warden");
        assertThat(DOCKERFILE.one("VOLUME")).isEqualTo(dataDir);
        assertThat(DOCKERFILE.one("WORKDIR")).isEqualTo(dataDir);
        assertThat(DOCKERFILE.one("RUN")).contains("mkdir -p " + dataDir).contains("chown warden:warden " + dataDir);
        assertThat(String.join("\n", ContainerFiles.lines(ContainerFiles.UNIT)))
                .as("the systemd unit's data directory").contains("Environment=WARDEN_DATA_DIR=" + dataDir);
    }

    @Test
    void theExposedPort_isTheGatewaysHttpPort_andTheHealthCheckAsksItForReadiness() {
        String port = DOCKERFILE.env().get("WARDEN_HTTP_PORT");
        assertThat(DOCKERFILE.one("EXPOSE")).isEqualTo(port);
        assertThat(DOCKERFILE.healthCommand()).contains("http://127.0.0.1:${WARDEN_HTTP_PORT}/health/ready")
                .startsWith("curl -fsS ").endsWith("|| exit 1");
    }

    @Test
    void theEntrypoint_execsJava_withTheUnitsFlags_onTheCopiedJar() {
        List<String> entrypoint = DOCKERFILE.execForm("ENTRYPOINT");
        assertThat(entrypoint).hasSize(4);
        assertThat(entrypoint.subList(0, 2)).containsExactly("/bin/sh", "-c");
        // exec: the JVM replaces the shell (PID 1 in the container) and gets docker stop's SIGTERM.
        assertThat(entrypoint.get(2)).isEqualTo("exec java $JAVA_OPTS -jar /opt/warden/warden-service.jar \"$@\"");
        assertThat(DOCKERFILE.execForm("CMD")).isEmpty();
        assertThat(DOCKERFILE.copies()).singleElement()
                .satisfies(c -> assertThat(c).containsExactly("service/target/warden-service.jar",
                        "/opt/warden/warden-service.jar"));

        String unit = String.join("\n", ContainerFiles.lines(ContainerFiles.UNIT));
        assertThat(unit).contains("ExecStart=/usr/bin/java $JAVA_OPTS -jar /opt/warden/warden-service.jar")
                .contains("Environment=\"JAVA_OPTS=" + DOCKERFILE.env().get("JAVA_OPTS") + "\"");
        assertThat(DOCKERFILE.one("STOPSIGNAL")).isEqualTo("SIGTERM");
    }

    @Test
    void dockerignore_letsInWhatTheDockerfileCopies_andNothingElse() {
        List<String> patterns = ContainerFiles.lines(ContainerFiles.DOCKERIGNORE).stream().map(String::strip)
                .filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
        List<String> expected = new ArrayList<>(List.of("*"));
        DOCKERFILE.copies().forEach(c -> expected.add("!" + c[0]));
        assertThat(patterns).isEqualTo(expected);
    }

    @Test
    void theServers_haveIds1To3_andEachTheSameListOfAllThree_onTheBuildsZooKeeperRelease() {
        Map<String, JsonNode> zk = ContainerFiles.zookeeperServices();
        assertThat(zk.keySet()).containsExactly("zk1", "zk2", "zk3");
        String release = Version.getFullVersion().replaceFirst("[-, ].*$", "");
        Set<String> serverLists = new HashSet<>();
        Map<Integer, String> idToService = new LinkedHashMap<>();
        zk.forEach((name, service) -> {
            assertThat(service.path("image").asText()).as(name + "'s image: the build's ZooKeeper (zookeeper.version)")
                    .isEqualTo("zookeeper:" + release);
            assertThat(service.path("hostname").asText()).isEqualTo(name);
            Map<String, String> env = environment(service);
            assertThat(idToService.put(Integer.parseInt(env.get("ZOO_MY_ID")), name)).as("ZOO_MY_ID of " + name).isNull();
            serverLists.add(env.get("ZOO_SERVERS"));
            assertThat(env.get("ZOO_4LW_COMMANDS_WHITELIST").split(",")).as("the console asks srvr").contains("srvr");
            assertThat(service.path("healthcheck").path("test").toString()).contains("srvr").contains("/2181");
        });
        assertThat(serverLists).as("ZOO_SERVERS, the same on every server").hasSize(1);
        Map<Integer, String[]> servers = ContainerFiles.zooServers(serverLists.iterator().next());
        assertThat(servers.keySet()).isEqualTo(idToService.keySet()).containsExactly(1, 2, 3);
        servers.forEach((id, s) -> {
            assertThat(s[0]).as("server.%d's host: the service whose ZOO_MY_ID is %d", id, id).isEqualTo(idToService.get(id));
            assertThat(List.of(s[1], s[2], s[3])).containsExactly("2888", "3888", "2181");
        });
    }

    @Test
    void everyGateway_isBuiltFromTheDockerfile_namesAllThreeServers_andHasItsOwnIdPortAndDataVolume() {
        Map<String, JsonNode> gateways = ContainerFiles.gatewayServices();
        assertThat(gateways.keySet()).containsExactly("gw1", "gw2");
        Set<String> ids = new TreeSet<>();
        Set<String> hostPorts = new TreeSet<>();
        Set<String> zkServices = ContainerFiles.zookeeperServices().keySet();
        gateways.forEach((name, gw) -> {
            Path context = ContainerFiles.COMPOSE.getParent().resolve(gw.path("build").path("context").asText()).normalize();
            assertThat(context).as(name + "'s build context: the repository root").isEqualTo(ContainerFiles.REPO);
            assertThat(context.resolve(gw.path("build").path("dockerfile").asText())).isEqualTo(ContainerFiles.DOCKERFILE);

            Map<String, String> env = environment(gw);
            Set<String> named = new TreeSet<>();
            for (String[] hp : ContainerFiles.hostPorts(env.get("WARDEN_ZK_CONNECT"))) {
                named.add(hp[0]);
                assertThat(hp[1]).isEqualTo("2181");
            }
            assertThat(named).as(name + "'s WARDEN_ZK_CONNECT").isEqualTo(zkServices);
            assertThat(ids.add(env.get("WARDEN_GATEWAY_ID"))).as("WARDEN_GATEWAY_ID of " + name + ", unique").isTrue();
            assertThat(env.get("WARDEN_ADVERTISE_HOST")).as("the name the other gateway reaches it at").isEqualTo(name);

            assertThat(gw.path("volumes")).hasSize(1);
            assertThat(gw.path("volumes").get(0).asText()).isEqualTo(name + "-data:" + DOCKERFILE.env().get("WARDEN_DATA_DIR"));
            assertThat(gw.path("ports")).hasSize(1);
            String[] ports = gw.path("ports").get(0).asText().split(":");
            assertThat(ports[1]).as("the container port, the image's").isEqualTo(DOCKERFILE.one("EXPOSE"));
            assertThat(hostPorts.add(ports[0])).as("host port " + ports[0] + " of " + name + ", unique").isTrue();
            assertThat(gw.path("stop_grace_period").asText()).as("room for the drain, as the unit's TimeoutStopSec")
                    .isEqualTo("30s");
            zkServices.forEach(zk -> assertThat(gw.path("depends_on").path(zk).path("condition").asText())
                    .isEqualTo("service_healthy"));
        });
    }

    @Test
    void everyVolume_isDeclared_andMountedByOneServiceOnly() {
        List<String> mounted = new ArrayList<>();
        ContainerFiles.services().values().forEach(s -> s.path("volumes")
                .forEach(v -> mounted.add(v.asText().substring(0, v.asText().indexOf(':')))));
        assertThat(mounted).doesNotHaveDuplicates();
        assertThat(new TreeSet<>(mounted)).isEqualTo(new TreeSet<>(ContainerFiles.declaredVolumes()));
    }

    @Test
    void theGatewayAccepts_eachGatewaysEnvironment_overTheImages() {
        ContainerFiles.gatewayServices().forEach((name, gw) -> {
            Map<String, String> env = new LinkedHashMap<>(DOCKERFILE.env());
            env.putAll(environment(gw)); // compose's environment: overrides the image's ENV
            ConfigLoader loader = Settings.loader(env);
            WardenConfig config = loader.load();
            assertThat(loader.unknownEnvironmentVariables()).as(name + ": WARDEN_* variables that are no setting").isEmpty();
            assertThat(config.gatewayId()).isEqualTo(name);
            assertThat(config.zkConnect()).isEqualTo(env.get("WARDEN_ZK_CONNECT"));
            assertThat(config.dataDir()).isEqualTo(Path.of("/var/lib/warden"));
        });
    }
}
